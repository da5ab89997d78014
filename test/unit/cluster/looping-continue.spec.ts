/**
 * An API server whose list hands back a continue token it gave before (a loop): listAll (cluster/client.ts)
 * fails the list, naming the loop, instead of asking for the same pages for ever while holding every item it
 * was given; the cache then counts the kind stale (readiness false) rather than growing without bound.
 */
import * as assert from "assert";
import { ListSend, listAll, objectClient } from "../../../cluster/client";
import { ClusterCache } from "../../../cluster/cache";
import { WATCHED_KINDS } from "../../../cluster/kinds";
import { offlineKubeConfig } from "../../support/fake-cluster";

const STACK = WATCHED_KINDS.find((k) => k.kind === "Stack")!;

/** Answers every list with one object and a continue token cycling through `tokens`; counts the pages. */
function looping(tokens: string[]): { send: ListSend; pages: () => number } {
    let pages = 0;
    const send: ListSend = (request) => {
        const kind = /\/([a-z]+)\?/.exec(request.getUrl())![1];
        const item = {
            apiVersion: "v1",
            kind: "X",
            metadata: { name: `x-${pages}`, namespace: "n", uid: `u${pages}` },
        };
        const body = { kind: "List", metadata: { resourceVersion: "7", continue: tokens[pages % tokens.length] } };
        pages++;
        return Promise.resolve({ status: 200, body: JSON.stringify({ ...body, kind, items: [item] }) });
    };
    return { send, pages: () => pages };
}

describe("a list whose continue token loops", () => {
    it("fails the list once a token comes back, after one page per distinct token", async () => {
        for (const tokens of [["same"], ["a", "b", "c"]]) {
            const server = looping(tokens);
            const client = objectClient(offlineKubeConfig(), 4, server.send);
            let items = 0;
            await assert.rejects(
                listAll(client, STACK, { pageSize: 500 }, () => items++),
                /the list of Stack .*continue token it gave before/,
            );
            assert.strictEqual(server.pages(), tokens.length + 1, `pages asked for with ${tokens}`);
            client.close();
        }
    });

    it("the cache does not sync the kind and says it is stale, instead of relisting for ever", async () => {
        const server = looping(["again"]);
        const events: string[] = [];
        const cache = new ClusterCache(offlineKubeConfig(), {
            kinds: [STACK],
            retryMs: 60_000,
            transport: { send: server.send },
            log: (event) => events.push(event),
        });
        try {
            cache.start();
            await new Promise<void>((resolve) => {
                const check = () => (events.includes("cache.list_failed") ? resolve() : setImmediate(check));
                check();
            });
            assert.deepStrictEqual(cache.stale(), ["Stack"]);
            assert.strictEqual(cache.synced(), false);
            assert.strictEqual(server.pages(), 2);
        } finally {
            cache.stop();
        }
    });
});
