/**
 * Readiness (cluster/health.ts) follows the API server whether or not reviews arrive: the periodic check's
 * consistent list failing makes /readyz's reasons say so, and one answering again clears them; TLS material
 * that can answer nobody (serve.ts tlsProblems: an expired serving certificate or client CA) is a reason too.
 */
import * as assert from "assert";
import { FreshReads } from "../../../cluster/deadline";
import { Readiness } from "../../../cluster/health";
import { tlsProblems } from "../../../cluster/serve";
import { seededCache } from "../../support/fake-cluster";

/** Turns of the event loop (and short timers) until `check` holds. */
async function until(check: () => boolean): Promise<void> {
    for (let i = 0; i < 2000 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
    assert.ok(check(), "condition never held");
}

describe("readiness follows the API server without reviews", () => {
    it("a failing consistent read makes the replica not ready; one that answers makes it ready again", async () => {
        let down = false;
        let checks = 0;
        const reads = new FreshReads(
            async (kind, ns, name) => {
                checks++;
                assert.deepStrictEqual([kind, ns], ["ClusterRoleBinding", undefined]);
                assert.strictEqual(name, "pko-guard-readiness-probe");
                if (down) throw new Error("etcdserver: request timed out");
                return [];
            },
            { readTimeoutMs: 1000 },
        );
        const logged: string[] = [];
        const r = new Readiness({ cache: seededCache(), reads, intervalMs: 5, log: (_l, e) => logged.push(e) });
        r.start();
        try {
            await until(() => checks > 0);
            assert.deepStrictEqual(r.reasons(), []);
            down = true;
            await until(() => r.reasons().length > 0);
            assert.match(
                r.reasons().join("\n"),
                /fresh reads of the API server failing: etcdserver: request timed out/,
            );
            assert.ok(logged.includes("health.api_server_failing"));
            down = false;
            await until(() => r.reasons().length === 0);
            assert.ok(logged.includes("health.api_server_answers"));
        } finally {
            r.stop();
        }
    });

    it("a cache that has not synced is a reason", () => {
        const r = new Readiness({ cache: seededCache([], ["Stack"]) });
        assert.match(r.reasons().join("\n"), /cache not synced/);
    });

    it("an expired serving certificate or client CA is a reason; valid ones are not", () => {
        const now = new Date("2030-01-02T00:00:00Z");
        const past = new Date("2030-01-01T00:00:00Z");
        const future = new Date("2030-02-01T00:00:00Z");
        assert.deepStrictEqual(tlsProblems({ certNotAfter: future, caNotAfter: future }, now), []);
        assert.deepStrictEqual(tlsProblems({ certNotAfter: future }, now), []);
        const problems = tlsProblems({ certNotAfter: past, caNotAfter: past }, now);
        assert.strictEqual(problems.length, 2);
        assert.match(problems[0], /serving certificate expired at 2030-01-01/);
        assert.match(problems[1], /client CA expired/);
        const r = new Readiness({ cache: seededCache(), tls: (at) => tlsProblems({ certNotAfter: past }, at) });
        assert.match(r.reasons(now).join("\n"), /^TLS: the serving certificate expired/m);
    });
});
