/** Waivers: matching, the pack's marks (through the real rule wrappers), reading them back, unused/expired notices. */
import * as assert from "assert";
import { judgeRows, waiverNotices } from "../../../../evaluation/judge";
import { row } from "../../../../evaluation/rows";
import { policies } from "../../../../policies";
import { rule as pinned } from "../../../../policies/pko-stack-prod-pinned-commit";
import { rule as noClusterAdmin } from "../../../../policies/pko-stack-no-cluster-admin";
import { decodeMessage } from "../../../../policies/model/message";
import { applyWaivers, waiverMatches } from "../../../../policies/model/waivers";
import {
    ExpectedFinding,
    UNKNOWN_WIRE,
    assertFindings,
    goodSpec,
    runResourcePolicy,
    runStackPolicy,
    stackResource,
} from "../../../support/helpers";

const branchProd = (name: string, metadata: Record<string, unknown> = {}) =>
    stackResource(name, goodSpec({ commit: undefined, branch: "main" }), metadata);
const waivers = (...w: unknown[]) => ({ waivers: w });
/** The one finding of the pinned-commit rule on `resource`. */
const pinnedOn = (resource: string, message: RegExp): ExpectedFinding[] => [
    { policy: pinned.name, level: "mandatory", resource, message },
];
/** A waived finding of the mandatory rule: reported at its own level, advisory (policies/model/report.ts). */
const waivedOn = (resource: string, message: RegExp): ExpectedFinding[] => [
    { policy: pinned.name, level: "advisory", resource, message },
];
/** A message that is not marked waived. */
const NOT_WAIVED = /^(?![\s\S]*waived)/;

describe("waivers", () => {
    it("match a URN, a Pulumi name or Kind/namespace/name, with globs", () => {
        const t = {
            urn: "urn:pulumi:dev::p::kubernetes:pulumi.com/v1:Stack::legacy-prod",
            name: "legacy-prod",
            object: "Stack/pulumi/legacy-prod",
        };
        for (const resource of [
            "legacy-prod",
            "legacy-*",
            "Stack/pulumi/legacy-prod",
            "Stack/*/legacy-?rod",
            "urn:pulumi:dev::p::*::legacy-prod",
        ]) {
            assert.ok(waiverMatches({ resource }, t), resource);
        }
        for (const resource of ["legacy", "other-*", "Stack/other/legacy-prod", "legacy.prod"])
            assert.ok(!waiverMatches({ resource }, t), resource);
    });

    it("mark a finding of a mandatory rule as waived, through the rule wrapper, and only that resource", () => {
        const config = waivers({ resource: "legacy-*", reason: "moving to commits", expires: "2099-12-31" });
        const waived = runResourcePolicy(pinned, branchProd("legacy-prod"), config);
        // A waived finding is reported at its own level, advisory; an unwaived one keeps its policy's level.
        assertFindings(waived, waivedOn("legacy-prod", /^\[waived: moving to commits; until 2099-12-31\] /));
        assertFindings(
            runResourcePolicy(pinned, branchProd("billing-prod"), config),
            pinnedOn("billing-prod", NOT_WAIVED),
        );
    });

    it("an expired waiver waives nothing and says it expired", () => {
        const expired = runResourcePolicy(
            pinned,
            branchProd("legacy-prod"),
            waivers({ resource: "legacy-prod", reason: "old", expires: "2020-01-01" }),
        );
        assertFindings(
            expired,
            pinnedOn("legacy-prod", /^(?!\[waived)[\s\S]*waiver for legacy-prod expired 2020-01-01/),
        );
    });

    it("never hides a fail-closed finding unless the waiver says allowFailClosed", () => {
        const unknown = stackResource("legacy-prod", goodSpec({ commit: UNKNOWN_WIRE }));
        const plain = runResourcePolicy(pinned, unknown, waivers({ resource: "legacy-prod", reason: "r" }));
        assertFindings(plain, pinnedOn("legacy-prod", /^(?!\[waived)/));
        assert.ok(decodeMessage(plain[0].message).failClosed, plain[0].message);
        const allowed = runResourcePolicy(
            pinned,
            unknown,
            waivers({ resource: "legacy-prod", reason: "r", allowFailClosed: true }),
        );
        assertFindings(allowed, waivedOn("legacy-prod", /^\[waived: r\] /));
        assert.deepStrictEqual(applyWaivers("x", waivers({ resource: "*", reason: "r" }), { name: "a" }, "m", true), {
            text: "m",
        });
    });

    it("annotation waivers count only when the policy's config allows them", () => {
        const annotated = branchProd("app-prod", {
            annotations: { "pko-guard.io/waive": "other-rule=no, pko-stack-prod-pinned-commit=hotfix freeze" },
        });
        assertFindings(runResourcePolicy(pinned, annotated, {}), pinnedOn("app-prod", NOT_WAIVED));
        assertFindings(
            runResourcePolicy(pinned, annotated, { allowAnnotationWaivers: true }),
            waivedOn("app-prod", /^\[waived: hotfix freeze \(annotation\)\] /),
        );
    });

    it("stack-level findings are waived by the resource they are reported on", () => {
        const sa = {
            type: "kubernetes:core/v1:ServiceAccount",
            name: "deployer",
            props: { kind: "ServiceAccount", metadata: { name: "deployer", namespace: "pulumi" } },
        };
        const crb = {
            type: "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding",
            name: "deployer-admin",
            props: {
                kind: "ClusterRoleBinding",
                metadata: { name: "deployer-admin" },
                roleRef: { kind: "ClusterRole", name: "cluster-admin" },
                subjects: [{ kind: "ServiceAccount", name: "deployer", namespace: "pulumi" }],
            },
        };
        const st = stackResource("app", goodSpec({ serviceAccountName: "deployer" }));
        const base = runStackPolicy(noClusterAdmin, [sa, crb, st]);
        assert.strictEqual(base.length, 1);
        const [w] = runStackPolicy(
            noClusterAdmin,
            [sa, crb, st],
            waivers({ resource: "ClusterRoleBinding//deployer-admin", reason: "break-glass" }),
        );
        assert.match(w.message, /^\[waived: break-glass\] /);
        assert.strictEqual(w.level, "advisory");
    });

    it("every policy's config schema takes waivers (so the engine and Pulumi Cloud accept them)", () => {
        for (const p of policies) assert.ok(p.configSchema?.properties?.waivers, p.name);
    });

    it("the gate reads marks as waived, not blocking, and reports unused and expired waivers", () => {
        const urn = "urn:pulumi:dev::p::kubernetes:pulumi.com/v1:Stack::";
        const rows = [
            row(
                "pko-stack-prod-pinned-commit",
                `${urn}legacy-prod`,
                "mandatory",
                "[waived: moving; until 2099-12-31] Stack is not pinned",
            ),
            row("pko-stack-prod-pinned-commit", `${urn}app-prod`, "mandatory", "Stack is not pinned"),
        ];
        const findings = judgeRows(rows, false);
        const legacy = findings.find((f) => f.resource === "legacy-prod")!;
        assert.strictEqual(legacy.status, "waived");
        assert.deepStrictEqual(legacy.waiver, { reason: "moving", expires: "2099-12-31" });
        assert.strictEqual(legacy.message, "Stack is not pinned");
        assert.strictEqual(findings.find((f) => f.resource === "app-prod")!.status, "blocking");
        const notices = waiverNotices(
            {
                "pko-stack-prod-pinned-commit": {
                    properties: {
                        waivers: [
                            { resource: "legacy-*", reason: "moving", expires: "2099-12-31" },
                            { resource: "ghost", reason: "nothing" },
                            { resource: "old", reason: "gone", expires: "2020-01-01" },
                        ],
                    },
                },
            },
            findings,
        );
        assert.deepStrictEqual(
            notices.map((n) => n.message),
            [
                "unused waiver for ghost (nothing): it matched no finding",
                "waiver for old expired on 2020-01-01 (gone): remove or renew it",
            ],
        );
        assert.deepStrictEqual(decodeMessage("plain"), { text: "plain", failClosed: false });
    });
});
