/**
 * The connection git's ssh makes for an ssh remote (./git.ts: its `ProxyCommand`, `<node> ssh-relay.js HOST PORT`),
 * held to the network policy as every https fetch is: the host resolved once and every address checked
 * (./http-client.ts checkedAddress), the connection made to the checked address, its bytes and time bounded. The
 * policy comes in PKO_GUARD_SSH_POLICY (JSON, no credential in it); why a connection was refused is written to the
 * file PKO_GUARD_SSH_REFUSED names, for git.ts to say in one line (ssh itself only says the connection closed).
 */
import * as fs from "fs";
import * as net from "net";
import { isReportedError } from "../../support/errors";
import { Budget, checkedAddress } from "./http-client";
import { FetchPolicy } from "./network-policy";

function refuse(why: string): never {
    const file = process.env.PKO_GUARD_SSH_REFUSED;
    if (file) fs.writeFileSync(file, why);
    process.exit(1);
}

async function main(): Promise<void> {
    const [host, portText] = process.argv.slice(2);
    const port = Number(portText);
    const policy = JSON.parse(process.env.PKO_GUARD_SSH_POLICY ?? "") as FetchPolicy;
    if (!host || !Number.isInteger(port) || port < 1 || port > 65535) refuse("not a host and port");
    let address: string;
    try {
        address = (await checkedAddress(policy, host, port)).address;
    } catch (e) {
        refuse(isReportedError(e) ? e.message : `${host}: cannot connect`);
    }
    const budget = new Budget(policy.limits.maxBytes, policy.limits.timeoutMs);
    const socket = net.connect({ host: address, port });
    const timer = setTimeout(() => refuse(`${host}: no complete answer within the time limit`), budget.left());
    timer.unref();
    const count = (n: number) => {
        if (!budget.take(n)) refuse(`${host}: the fetch read more than its limit`);
    };
    socket.on("error", () => refuse(`${host}:${port}: the connection failed`));
    socket.on("data", (c: Buffer) => {
        count(c.length);
        process.stdout.write(c);
    });
    socket.on("close", () => process.exit(0));
    process.stdin.on("data", (c: Buffer) => {
        count(c.length);
        socket.write(c);
    });
    process.stdin.on("end", () => socket.end());
}

main().catch(() => refuse("the connection failed"));
