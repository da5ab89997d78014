/**
 * A forward proxy on loopback that holds a tool (git) to the network policy.
 * Every CONNECT and plain-HTTP request is checked as ./http-client.ts checks a URL and connected to the checked
 * address; relayed bytes count against the fetch's budget. TLS stays end to end, and a redirect comes back as a new,
 * checked request. Refusals are kept so the caller can say in one line why the tool failed.
 */
import * as http from "http";
import * as net from "net";
import { Budget, FetchError, checkedAddress } from "./http-client";
import { FetchPolicy, refusedUrl, shownUrl, urlPort } from "./network-policy";

export interface PolicyProxy {
    /** `http://127.0.0.1:PORT` */
    url: string;
    /** The first refusal or limit hit, as one line. */
    refused(): string | undefined;
    close(): Promise<void>;
}

/** What the handlers of one proxy share: the policy, the budget, the first refusal, the open sockets. */
interface ProxyState {
    policy: FetchPolicy;
    budget: Budget;
    note: (why: string) => void;
    sockets: Set<net.Socket>;
}

/** Counts what `from` relays against the budget; over it, both sides are closed and the reason kept. */
function counted(st: ProxyState, from: NodeJS.ReadableStream & { destroy(): void }, other: { destroy(): void }) {
    from.on("data", (c: Buffer) => {
        if (!st.budget.take(c.length)) {
            st.note(`the fetch read more than its limit (${st.budget.maxBytes} bytes)`);
            from.destroy();
            other.destroy();
        }
    });
}

/** A plain-HTTP request through the proxy (the absolute URL it names), relayed to the checked address. */
function relayRequest(st: ProxyState, req: http.IncomingMessage, res: http.ServerResponse): void {
    const raw = req.url ?? "";
    const why = refusedUrl(st.policy, raw);
    if (why !== undefined) {
        st.note(`${shownUrl(raw)}: refused, ${why}`);
        res.writeHead(403).end();
        return;
    }
    const u = new URL(raw);
    checkedAddress(st.policy, u.hostname, urlPort(u)).then(
        (pinned) => {
            const headers = { ...req.headers };
            delete headers["proxy-authorization"];
            delete headers["proxy-connection"];
            const target = {
                host: pinned.address,
                port: urlPort(u),
                method: req.method,
                path: `${u.pathname}${u.search}`,
                headers,
                agent: false,
            };
            const up = http.request(target, (answer) => {
                res.writeHead(answer.statusCode ?? 502, answer.headers);
                counted(st, answer, res);
                answer.pipe(res);
            });
            up.on("error", () => res.destroy());
            req.pipe(up);
        },
        (e: Error) => {
            st.note(e instanceof FetchError ? e.message : `${shownUrl(raw)}: refused`);
            res.writeHead(403).end();
        },
    );
}

/** A CONNECT (the tool's TLS to come): the host checked, then a tunnel to the checked address. */
function tunnel(st: ProxyState, req: http.IncomingMessage, client: net.Socket, head: Buffer): void {
    st.sockets.add(client);
    client.on("close", () => st.sockets.delete(client));
    client.on("error", () => undefined);
    const m = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(req.url ?? "");
    if (!m) {
        client.end("HTTP/1.1 400 Bad Request\r\n\r\n");
        return;
    }
    const [host, port] = [m[1], Number(m[2])];
    checkedAddress(st.policy, host, port).then(
        (pinned) => {
            const upstream = net.connect({ host: pinned.address, port });
            st.sockets.add(upstream);
            upstream.on("close", () => st.sockets.delete(upstream));
            upstream.on("error", () => client.destroy());
            upstream.on("connect", () => {
                client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
                if (head.length > 0) upstream.write(head);
                counted(st, upstream, client);
                upstream.pipe(client);
                client.pipe(upstream);
            });
        },
        (e: Error) => {
            st.note(e instanceof FetchError ? e.message : `${host}: refused`);
            client.end("HTTP/1.1 403 Forbidden\r\n\r\n");
        },
    );
}

export async function startPolicyProxy(policy: FetchPolicy, budget: Budget): Promise<PolicyProxy> {
    let first: string | undefined;
    const st: ProxyState = { policy, budget, note: (why) => (first ??= why), sockets: new Set() };
    const server = http.createServer((req, res) => relayRequest(st, req, res));
    server.on("connect", (req: http.IncomingMessage, client: net.Socket, head: Buffer) =>
        tunnel(st, req, client, head),
    );
    server.on("connection", (s: net.Socket) => {
        st.sockets.add(s);
        s.on("close", () => st.sockets.delete(s));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as net.AddressInfo).port;
    return {
        url: `http://127.0.0.1:${port}`,
        refused: () => first,
        close: () =>
            new Promise<void>((resolve) => {
                for (const s of st.sockets) s.destroy();
                server.close(() => resolve());
            }),
    };
}
