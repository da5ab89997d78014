/**
 * Loopback ports for the servers the harness starts (the test API server, etcd): a free one, and a start that
 * is made again on other ports when one was taken between being found free and being bound.
 */
import * as net from "net";

/**
 * Starts a server on `count` free loopback ports, and again on others when one was taken meanwhile: another
 * process may bind a port between freePort releasing it and the server binding it (a machine running other
 * tests), and the server then exits saying the address is in use.
 */
export async function onFreePorts<T>(
    count: number,
    start: (ports: number[]) => Promise<T>,
    attempts = 5,
    pick: () => Promise<number> = freePort,
): Promise<T> {
    for (let attempt = 1; ; attempt++) {
        const ports: number[] = [];
        for (let i = 0; i < count; i++) ports.push(await pick());
        try {
            return await start(ports);
        } catch (e) {
            if (attempt >= attempts || !/address already in use/.test(String((e as Error).message))) throw e;
        }
    }
}

/** A free TCP port on loopback (bound, read, released). */
export function freePort(): Promise<number> {
    return new Promise((resolve, reject) => {
        const s = net.createServer();
        s.once("error", reject);
        s.listen(0, "127.0.0.1", () => {
            const port = (s.address() as net.AddressInfo).port;
            s.close(() => resolve(port));
        });
    });
}
