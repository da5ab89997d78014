/**
 * A forward proxy on loopback that holds a tool (git) to the network policy: every CONNECT (HTTPS) and every
 * plain-HTTP request it is asked for is checked as ./http-client.ts checks a URL (scheme, listed hosts, every
 * resolved address), then connected to the checked address; the bytes it relays count against the fetch's budget.
 * TLS stays end to end (the tool verifies the certificate); a redirect is a new request through the proxy, so it
 * is checked again. What it refused is kept, so the caller can say why the tool failed in one line.
 */
import * as http from "http";
import * as net from "net";
import { Budget, FetchError, checkedAddress } from "./http-client";
import { FetchPolicy, refusedUrl, shownUrl, urlPort } from "./policy";

export interface PolicyProxy {
    /** `http://127.0.0.1:PORT` */
    url: string;
    /** The first refusal or limit hit, as one line. */
    refused(): string | undefined;
    close(): Promise<void>;
}

export async function startPolicyProxy(policy: FetchPolicy, budget: Budget): Promise<PolicyProxy> {
    let first: string | undefined;
    const note = (why: string) => (first ??= why);
    const sockets = new Set<net.Socket>();
    const count = (s: net.Socket, other: net.Socket) =>
        s.on("data", (c: Buffer) => {
            if (!budget.take(c.length)) {
                note(`the fetch read more than its limit (${budget.maxBytes} bytes)`);
                s.destroy();
                other.destroy();
            }
        });
    const server = http.createServer((req, res) => {
        // A plain-HTTP request through the proxy: the absolute URL it names.
        const raw = req.url ?? "";
        const why = refusedUrl(policy, raw);
        if (why !== undefined) {
            note(`${shownUrl(raw)}: refused, ${why}`);
            res.writeHead(403).end();
            return;
        }
        const u = new URL(raw);
        checkedAddress(policy, u.hostname, urlPort(u)).then(
            (pinned) => {
                const headers = { ...req.headers };
                delete headers["proxy-authorization"];
                delete headers["proxy-connection"];
                const up = http.request(
                    {
                        host: pinned.address,
                        port: urlPort(u),
                        method: req.method,
                        path: `${u.pathname}${u.search}`,
                        headers,
                        agent: false,
                    },
                    (answer) => {
                        res.writeHead(answer.statusCode ?? 502, answer.headers);
                        answer.on("data", (c: Buffer) => {
                            if (!budget.take(c.length)) {
                                note(`the fetch read more than its limit (${budget.maxBytes} bytes)`);
                                answer.destroy();
                                res.destroy();
                            }
                        });
                        answer.pipe(res);
                    },
                );
                up.on("error", () => res.destroy());
                req.pipe(up);
            },
            (e: Error) => {
                note(e instanceof FetchError ? e.message : `${shownUrl(raw)}: refused`);
                res.writeHead(403).end();
            },
        );
    });
    server.on("connect", (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
        sockets.add(client);
        client.on("close", () => sockets.delete(client));
        client.on("error", () => undefined);
        const m = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(req.url ?? "");
        if (!m) {
            client.end("HTTP/1.1 400 Bad Request\r\n\r\n");
            return;
        }
        const [host, port] = [m[1], Number(m[2])];
        // A CONNECT is TLS to come (the tool's https://); plain text inside it is the tool's own business.
        checkedAddress(policy, host, port).then(
            (pinned) => {
                const upstream = net.connect({ host: pinned.address, port });
                sockets.add(upstream);
                upstream.on("close", () => sockets.delete(upstream));
                upstream.on("error", () => client.destroy());
                upstream.on("connect", () => {
                    client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
                    if (head.length > 0) upstream.write(head);
                    count(upstream, client);
                    upstream.pipe(client);
                    client.pipe(upstream);
                });
            },
            (e: Error) => {
                note(e instanceof FetchError ? e.message : `${host}: refused`);
                client.end("HTTP/1.1 403 Forbidden\r\n\r\n");
            },
        );
    });
    server.on("connection", (s: net.Socket) => {
        sockets.add(s);
        s.on("close", () => sockets.delete(s));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as net.AddressInfo).port;
    return {
        url: `http://127.0.0.1:${port}`,
        refused: () => first,
        close: () =>
            new Promise<void>((resolve) => {
                for (const s of sockets) s.destroy();
                server.close(() => resolve());
            }),
    };
}
