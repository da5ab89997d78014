/**
 * A fresh read hands the rules the cache's own object when the API server sends the same version of it (same
 * uid and resourceVersion), and a newly decoded one whenever anything says it may differ, so a cache that
 * trails the API server never stands in for what was written since (cluster/cache.ts listFresh).
 */
import * as assert from "assert";
import { ClusterCache } from "../../../cluster/cache";
import { FakeCluster, offlineKubeConfig } from "../../support/fake-cluster";

function role(uid: string | undefined, resourceVersion: string | undefined, verbs: string[]) {
    return {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "Role",
        metadata: {
            name: "deployer",
            namespace: "team",
            ...(uid === undefined ? {} : { uid }),
            ...(resourceVersion === undefined ? {} : { resourceVersion }),
        },
        rules: [{ apiGroups: ["apps"], resources: ["deployments"], verbs }],
    };
}

describe("fresh reads reuse the cache's object only for the same stored version", function () {
    let cache: ClusterCache | undefined;
    afterEach(() => cache?.stop());

    async function synced(fake: FakeCluster): Promise<ClusterCache> {
        cache = new ClusterCache(offlineKubeConfig(), { transport: fake.transport });
        cache.start();
        await cache.waitForSync(10_000);
        return cache;
    }

    it("the same uid and resourceVersion: the cache's object itself", async () => {
        const c = await synced(new FakeCluster().add(role("u1", "5", ["get"])));
        const [fresh] = await c.listFresh("Role", "team");
        assert.strictEqual(fresh, c.get("Role", "team", "deployer"));
    });

    it("a newer resourceVersion: the object as written, not the cache's stale one", async () => {
        const fake = new FakeCluster().add(role("u1", "5", ["get"]));
        const c = await synced(fake);
        fake.add(role("u1", "6", ["*"])); // written, its watch event not arrived yet
        const [fresh] = await c.listFresh("Role", "team");
        assert.notStrictEqual(fresh, c.get("Role", "team", "deployer"));
        assert.deepStrictEqual((fresh.rules as { verbs: string[] }[])[0].verbs, ["*"]);
        assert.deepStrictEqual((c.get("Role", "team", "deployer")!.rules as { verbs: string[] }[])[0].verbs, ["get"]);
    });

    it("another uid (deleted and created again), or no version to compare: decoded anew", async () => {
        const fake = new FakeCluster().add(role("u1", "5", ["get"]));
        const c = await synced(fake);
        for (const [uid, rv] of [
            ["u2", "5"],
            [undefined, "5"],
            ["u1", undefined],
        ] as const) {
            fake.add(role(uid, rv, ["*"]));
            const [fresh] = await c.listFresh("Role", "team");
            assert.notStrictEqual(fresh, c.get("Role", "team", "deployer"), `${uid}/${rv}`);
            assert.deepStrictEqual((fresh.rules as { verbs: string[] }[])[0].verbs, ["*"], `${uid}/${rv}`);
        }
    });
});
