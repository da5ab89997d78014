/**
 * What the webhook accepts of a caller (cluster/limits.ts) and how much a denial says (cluster/admission.ts
 * denialMessage): reviews beyond the concurrency or byte limits refused, JSON only, label values from closed
 * sets, warnings and denials bounded however many findings there are.
 */
import * as assert from "assert";
import { packConfig } from "../../../evaluation/pack-config";
import { DENIAL_LISTED, judgeAdmission } from "../../../cluster/admission";
import {
    DEFAULT_LIMITS,
    InFlight,
    MAX_WARNING,
    MAX_WARNINGS,
    Refused,
    boundedWarnings,
    isJson,
    kindLabel,
    operationLabel,
    policyLabel,
} from "../../../cluster/limits";
import { seededCache } from "../../support/fake-cluster";

const STACKS = 300;

describe("cluster/limits: what the webhook accepts, and bounded answers", () => {
    it("refuses a review beyond the reviews judged at once (429), and frees its place and bytes when done", () => {
        const gate = new InFlight({ ...DEFAULT_LIMITS, maxConcurrent: 2, maxInflightBytes: 100 });
        gate.take(10);
        const a = gate.enter(10);
        gate.take(10);
        const b = gate.enter(10);
        gate.take(10);
        assert.throws(
            () => gate.enter(10),
            (e: Refused) => e.status === 429 && /too many reviews at once/.test(e.message),
        );
        a();
        a(); // a second release frees nothing more
        gate.take(80); // 10 held by b, 80 more arriving
        const c = gate.enter(80);
        b();
        gate.take(10);
        gate.enter(10);
        c();
        assert.strictEqual(gate.size(), 1);
        assert.strictEqual(gate.refused, 1);
        // The refused review's bytes were given back: 10 are held, 90 can arrive.
        gate.take(90);
    });

    it("one user's burst fills its own share (429 for it alone); another user's review still gets a place", () => {
        const gate = new InFlight({ ...DEFAULT_LIMITS, maxConcurrent: 8, maxPerUser: 3, maxInflightBytes: 1000 });
        const tenant = "tenant-a";
        const held = [1, 2, 3].map(() => (gate.take(1), gate.enter(1, tenant)));
        gate.take(1);
        assert.throws(
            () => gate.enter(1, tenant),
            (e: Refused) => e.status === 429 && /for this user \(3 being judged, at most 3 a user\)/.test(e.message),
        );
        gate.take(1);
        const other = gate.enter(1, "tenant-b");
        assert.strictEqual(gate.size(), 4);
        held[0]();
        gate.take(1);
        const again = gate.enter(1, tenant);
        for (const r of [...held, other, again]) r();
        assert.strictEqual(gate.size(), 0);
        assert.strictEqual(gate.heldBytes(), 0);
    });

    it("counts body bytes as they arrive: beyond maxInflightBytes a chunk is refused (429) and takes nothing", () => {
        const gate = new InFlight({ ...DEFAULT_LIMITS, maxConcurrent: 2, maxInflightBytes: 100 });
        gate.take(60);
        assert.throws(
            () => gate.take(41),
            (e: Refused) => e.status === 429,
        );
        gate.take(40);
        gate.give(100);
        // Bodies still arriving hold no place to be judged: a thousand trickled ones leave both places free.
        for (let i = 0; i < 1000; i++) gate.take(0);
        gate.enter(0);
        gate.enter(0);
        assert.strictEqual(gate.size(), 2);
    });

    it("takes JSON only", () => {
        assert.ok(isJson("application/json"));
        assert.ok(isJson("application/json; charset=utf-8"));
        for (const t of [undefined, "", "text/plain", "application/jsonx", "application/x-www-form-urlencoded"])
            assert.ok(!isJson(t), String(t));
    });

    it("labels metrics from closed sets", () => {
        assert.strictEqual(kindLabel("Stack"), "Stack");
        assert.strictEqual(kindLabel("MadeUp12345"), "other");
        assert.strictEqual(operationLabel("UPDATE"), "UPDATE");
        assert.strictEqual(operationLabel("PATCH-ME"), "other");
        assert.strictEqual(policyLabel("pko-stack-no-cluster-admin", []), "pko-stack-no-cluster-admin");
        assert.strictEqual(
            policyLabel("pko-guard-cluster-state", ["pko-guard-cluster-state"]),
            "pko-guard-cluster-state",
        );
        assert.strictEqual(policyLabel("made-up", []), "other");
    });

    it("returns at most MAX_WARNINGS warnings of MAX_WARNING characters, the last counting the rest", () => {
        const many = Array.from({ length: 100 }, (_, i) => `w${i} ${"x".repeat(1000)}`);
        const out = boundedWarnings(many);
        assert.strictEqual(out.length, MAX_WARNINGS);
        assert.ok(out.every((w) => w.length <= MAX_WARNING));
        assert.match(out[MAX_WARNINGS - 1], /^and 81 more warning\(s\)/);
        assert.deepStrictEqual(boundedWarnings(["a", "b"]), ["a", "b"]);
    });

    it(`a binding reaching ${STACKS} Stacks is denied in a bounded message that counts them and names a few`, () => {
        const objects: Record<string, unknown>[] = [
            {
                apiVersion: "rbac.authorization.k8s.io/v1",
                kind: "ClusterRole",
                metadata: { name: "cluster-admin" },
                rules: [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }],
            },
        ];
        for (let i = 0; i < STACKS; i++) {
            const ns = `team-${i}`;
            objects.push(
                { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "runner", namespace: ns } },
                {
                    apiVersion: "pulumi.com/v1",
                    kind: "Stack",
                    metadata: { name: `s${i}`, namespace: ns },
                    spec: {
                        serviceAccountName: "runner",
                        stack: `org/app/s${i}`,
                        projectRepo: "https://github.com/org/app.git",
                        commit: "0123456789abcdef0123456789abcdef01234567",
                    },
                },
            );
        }
        const binding = {
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "ClusterRoleBinding",
            metadata: { name: "everyone:cluster-admin" },
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
            subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "system:serviceaccounts" }],
        };
        const d = judgeAdmission({ operation: "CREATE", object: binding }, seededCache(objects), {
            config: packConfig(),
            warnOnly: false,
        });
        assert.strictEqual(d.allowed, false);
        const blocking = d.findings.filter((f) => f.status === "blocking");
        assert.ok(blocking.length >= STACKS, `${blocking.length} blocking findings`);
        const lines = d.message!.split("\n");
        // One finding a Stack, each on the binding: counted, the first few named (each names its Stack).
        assert.match(
            lines[0],
            new RegExp(
                `^pko-guard denied ClusterRoleBinding/everyone:cluster-admin: ${blocking.length} mandatory violation\\(s\\)$`,
            ),
        );
        assert.ok(
            lines.slice(1, 1 + DENIAL_LISTED).every((l) => /^- pko-stack-no-cluster-admin: .*Stack/.test(l)),
            lines[1],
        );
        assert.strictEqual(lines.length, 1 + DENIAL_LISTED + 1);
        assert.match(lines[lines.length - 1], new RegExp(`^- and ${blocking.length - DENIAL_LISTED} more `));
        assert.ok(d.message!.length < 8 * 1024, `${d.message!.length} characters`);
    });
});
