/**
 * A TCP proxy on loopback that hands each new connection to the next of several servers in turn (TLS passed
 * through untouched), as a Service spreads an API server's connections over a Deployment's replicas: two
 * reviews the API server sends at once on two connections reach two replicas. Or pinned to one of them.
 */
import * as net from "net";
import { linkSockets } from "./socket-pair";

export interface RoundRobinProxy {
    /** Connections handed to each target so far, by its index. */
    counts: number[];
    /**
     * Hands every new connection to target `i` (undefined: in turn again) and closes the open ones, so the
     * client's next requests open new connections there.
     */
    pin(i?: number): void;
    close(): Promise<void>;
}

/** Listens on 127.0.0.1:`port` and forwards to `targets` (loopback ports) in turn. */
export function startRoundRobinProxy(port: number, targets: number[]): Promise<RoundRobinProxy> {
    const sockets = new Set<net.Socket>();
    const counts = targets.map(() => 0);
    let next = 0;
    let pinned: number | undefined;
    const server = net.createServer((client) => {
        const i = pinned ?? next++ % targets.length;
        counts[i]++;
        const upstream = net.connect(targets[i], "127.0.0.1");
        linkSockets(client, upstream, sockets);
        client.pipe(upstream);
        upstream.pipe(client);
    });
    return new Promise((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, "127.0.0.1", () =>
            resolve({
                counts,
                pin: (i) => {
                    pinned = i;
                    for (const s of sockets) s.destroy();
                },
                close: () => {
                    for (const s of sockets) s.destroy();
                    return new Promise<void>((r) => server.close(() => r()));
                },
            }),
        );
    });
}
