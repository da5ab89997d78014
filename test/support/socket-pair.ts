/**
 * The two sockets of one proxied connection (the test proxies' client and upstream): both tracked in `sockets` (so
 * the proxy's close can end them), their errors ignored (a test ends connections abruptly), and each closed when the
 * other closes.
 */
import * as net from "net";

export function linkSockets(client: net.Socket, upstream: net.Socket, sockets: Set<net.Socket>): void {
    for (const s of [client, upstream]) {
        sockets.add(s);
        s.on("error", () => undefined);
        s.on("close", () => {
            sockets.delete(s);
            client.destroy();
            upstream.destroy();
        });
    }
}
