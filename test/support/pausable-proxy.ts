/**
 * A TCP proxy on loopback in front of a server (the real API server, TLS passed through untouched) that a
 * test can pause: while paused, it accepts connections and reads what both sides send but forwards nothing,
 * as a server that hangs; resumed, it forwards what it held and carries on.
 */
import * as net from "net";
import { linkSockets } from "./socket-pair";

export interface PausableProxy {
    port: number;
    pause(): void;
    resume(): void;
    close(): Promise<void>;
}

interface Leg {
    from: net.Socket;
    to: net.Socket;
    held: Buffer[];
}

export function startPausableProxy(target: { host: string; port: number }): Promise<PausableProxy> {
    let paused = false;
    const legs = new Set<Leg>();
    const sockets = new Set<net.Socket>();
    const forward = (leg: Leg) => {
        while (!paused && leg.held.length > 0 && !leg.to.destroyed) leg.to.write(leg.held.shift()!);
    };
    const server = net.createServer((client) => {
        const upstream = net.connect(target.port, target.host);
        linkSockets(client, upstream, sockets);
        for (const [from, to] of [
            [client, upstream],
            [upstream, client],
        ]) {
            const leg: Leg = { from, to, held: [] };
            legs.add(leg);
            from.on("close", () => legs.delete(leg));
            from.on("data", (d: Buffer) => {
                leg.held.push(d);
                forward(leg);
            });
        }
    });
    return new Promise((resolve, reject) => {
        server.once("error", reject);
        server.listen(0, "127.0.0.1", () =>
            resolve({
                port: (server.address() as net.AddressInfo).port,
                pause: () => {
                    paused = true;
                },
                resume: () => {
                    paused = false;
                    for (const leg of legs) forward(leg);
                },
                close: () => {
                    for (const s of sockets) s.destroy();
                    return new Promise<void>((r) => server.close(() => r()));
                },
            }),
        );
    });
}
