/**
 * Patches of Stacks (`CustomResourcePatch`, type `kubernetes:pulumi.com/v1:StackPatch`): joined to the
 * program's Stack of the same name and namespace, judged on the merged Stack, reported on the patch
 * when the patch introduces the problem; a patch of a Stack the program does not declare is judged
 * with production unknown (mandatory rules fail closed).
 */
import * as assert from "assert";
import { ResourceValidationPolicy, StackValidationPolicy } from "@pulumi/policy";
import { policies } from "../../../../policies";
import { describeStack, mergePatch, patchedStacks, stackPatches, stackView } from "../../../../policies/model/stack";
import { sharingViews } from "../../../../evaluation/request-cache";
import { UNKNOWN } from "../../../../policies/model/values";
import {
    SHA,
    TestResource,
    UNKNOWN_WIRE,
    goodSpec,
    runResourcePolicy,
    runStackPolicy,
    stackResource,
} from "../../../support/helpers";

const PATCH_TYPE = "kubernetes:pulumi.com/v1:StackPatch";

function rule(name: string): ResourceValidationPolicy & StackValidationPolicy {
    return policies.find((p) => p.name === name) as ResourceValidationPolicy & StackValidationPolicy;
}

function patch(
    name: string,
    spec: unknown,
    metadata: Record<string, unknown> = {},
    resourceName = `${name}-patch`,
): TestResource {
    return {
        type: PATCH_TYPE,
        name: resourceName,
        props: {
            apiVersion: "pulumi.com/v1",
            kind: "Stack",
            metadata: { name, namespace: "pulumi", ...metadata },
            ...(spec === undefined ? {} : { spec }),
        },
    };
}

/** Every violation of a rule over a program: per resource (Analyze) and for the program (AnalyzeStack). */
function violations(
    name: string,
    program: TestResource[],
    settings: Record<string, unknown> = {},
): { resource: string; message: string }[] {
    const p = rule(name);
    const out: { resource: string; message: string }[] = [];
    // The resource each finding is reported on (its URN's), not the one being evaluated.
    for (const r of program)
        for (const v of runResourcePolicy(p, r, {}, settings)) out.push({ resource: v.resource, message: v.message });
    for (const v of runStackPolicy(p, program, {}, settings))
        out.push({ resource: v.urn ? v.resource : "<program>", message: v.message });
    return out;
}

const prod = stackResource("app-prod", goodSpec());

describe("Stack patches", () => {
    it("a patch switching a production Stack to a branch with destroyOnFinalize is reported on the patch (the gate bypass)", () => {
        const program = [prod, patch("app-prod", { branch: "main", commit: null, destroyOnFinalize: true })];
        const destroy = violations("pko-stack-destroy-on-finalize-nonprod", program);
        assert.deepStrictEqual(
            destroy.map((v) => v.resource),
            ["app-prod-patch"],
        );
        assert.match(
            destroy[0].message,
            /^StackPatch "app-prod-patch" of Stack "app-prod" \(stack "acme\/app\/prod"\) is production by spec\.stack/,
        );
        const pinned = violations("pko-stack-prod-pinned-commit", program);
        assert.deepStrictEqual(
            pinned.map((v) => v.resource),
            ["app-prod-patch"],
        );
        assert.match(pinned[0].message, /tracks a branch/);
        assert.match(pinned[0].message, /sets no spec\.commit/);
    });

    it("is not a Stack of its own: resource-level evaluation ignores it", () => {
        const p = patch("app-prod", { branch: "main", destroyOnFinalize: true });
        for (const name of [
            "pko-stack-destroy-on-finalize-nonprod",
            "pko-stack-prod-pinned-commit",
            "pko-stack-credentials-from-secrets",
            "pko-stack-name-length",
        ]) {
            assert.deepStrictEqual(runResourcePolicy(rule(name), p), [], name);
        }
    });

    it("reports only what the patch introduces: the Stack's own problems stay on the Stack", () => {
        const unpinned = stackResource("app-prod", goodSpec({ branch: "main" }));
        const program = [unpinned, patch("app-prod", { refresh: true })];
        assert.deepStrictEqual(
            violations("pko-stack-prod-pinned-commit", program).map((v) => v.resource),
            ["app-prod"],
        );
        assert.deepStrictEqual(
            violations("pko-stack-prod-refresh", program).map((v) => v.resource),
            ["app-prod"],
            "the refresh finding of the unpatched Stack stays on the Stack",
        );
        const fixed = [unpinned, patch("app-prod", { branch: null, commit: SHA })];
        assert.deepStrictEqual(
            violations("pko-stack-prod-pinned-commit", fixed).map((v) => v.resource),
            ["app-prod"],
        );
    });

    it("a patch that makes a Stack production (a label) is reported for what production forbids", () => {
        const dev = stackResource("app", goodSpec({ stack: "acme/app/live", destroyOnFinalize: true }));
        assert.deepStrictEqual(violations("pko-stack-destroy-on-finalize-nonprod", [dev]), []);
        const program = [dev, patch("app", undefined, { labels: { env: "prod" } })];
        const v = violations("pko-stack-destroy-on-finalize-nonprod", program);
        assert.deepStrictEqual(
            v.map((x) => x.resource),
            ["app-patch"],
        );
        assert.match(v[0].message, /is production by label env="prod"/);
    });

    it("judges a patch of a Stack the program does not declare with production unknown (fail closed)", () => {
        const program = [patch("elsewhere", { destroyOnFinalize: true })];
        const v = violations("pko-stack-destroy-on-finalize-nonprod", program);
        assert.deepStrictEqual(
            v.map((x) => x.resource),
            ["elsewhere-patch"],
        );
        assert.match(
            v[0].message,
            /the Stack it patches \(pulumi\/elsewhere\) is not declared in this program, so whether it is production is unknown; the rule fails closed/,
        );
        // Fields the patch does not touch are not its doing.
        assert.deepStrictEqual(violations("pko-stack-prod-pinned-commit", [patch("elsewhere", { refresh: true })]), []);
        assert.deepStrictEqual(
            violations("pko-stack-prod-pinned-commit", [patch("elsewhere", { branch: "main" })]).map((x) => x.resource),
            ["elsewhere-patch"],
        );
        // A different namespace is a different Stack.
        const other = [prod, patch("app-prod", { destroyOnFinalize: true }, { namespace: "other" })];
        const otherNs = violations("pko-stack-destroy-on-finalize-nonprod", other);
        assert.deepStrictEqual(
            otherNs.map((x) => x.resource),
            ["app-prod-patch"],
        );
        assert.match(otherNs[0].message, /other\/app-prod\) is not declared/);
    });

    it("a patch with an unknown name cannot be joined and fails closed", () => {
        const v = violations("pko-stack-destroy-on-finalize-nonprod", [
            prod,
            patch(UNKNOWN_WIRE, { destroyOnFinalize: true }, {}, "p"),
        ]);
        assert.deepStrictEqual(
            v.map((x) => x.resource),
            ["p"],
        );
        assert.match(v[0].message, /name or namespace of the Stack it patches is unknown/);
    });

    it("a credential the patch adds is reported on the patch; maps merge with the Stack's", () => {
        const program = [
            prod,
            patch("app-prod", { envRefs: { AWS_SECRET_ACCESS_KEY: { type: "Literal", literal: { value: "x" } } } }),
        ];
        const v = violations("pko-stack-credentials-from-secrets", program);
        assert.deepStrictEqual(
            v.map((x) => x.resource),
            ["app-prod-patch"],
        );
        assert.match(v[0].message, /spec\.envRefs\.AWS_SECRET_ACCESS_KEY \(a credential\) is a Literal/);
        const joined = stackPatches(program.map((r) => ({ ...r, urn: r.name })))[0];
        assert.deepStrictEqual(Object.keys((joined.after.spec as any).envRefs).sort(), [
            "AWS_SECRET_ACCESS_KEY",
            "PULUMI_ACCESS_TOKEN",
        ]);
    });

    it("several patches of one Stack apply in program order", () => {
        const program = [
            prod,
            patch("app-prod", { destroyOnFinalize: true }, {}, "p1"),
            patch("app-prod", { destroyOnFinalize: false }, {}, "p2"),
            patch("app-prod", { destroyOnFinalize: true }, {}, "p3"),
        ];
        assert.deepStrictEqual(
            violations("pko-stack-destroy-on-finalize-nonprod", program).map((x) => x.resource),
            ["p1", "p3"],
        );
    });

    it("the v1alpha1 patch type is a patch too", () => {
        const p = {
            ...patch("app-prod", { destroyOnFinalize: true }),
            type: "kubernetes:pulumi.com/v1alpha1:StackPatch",
        };
        assert.deepStrictEqual(
            violations("pko-stack-destroy-on-finalize-nonprod", [prod, p]).map((x) => x.resource),
            ["app-prod-patch"],
        );
    });
});

describe("patchedStacks (what program-level rules read)", () => {
    it("gives each declared Stack after all its patches, then the undeclared ones", () => {
        const program = [
            prod,
            patch("app-prod", { serviceAccountName: "deployer" }, {}, "p1"),
            patch("other", { destroyOnFinalize: true }, {}, "p2"),
            patch("app-prod", { refresh: true }, {}, "p3"),
        ].map((r) => ({
            ...r,
            urn: r.name,
        }));
        const views = patchedStacks(program);
        assert.deepStrictEqual(
            views.map((v) => [v.stack?.resourceName, v.patchedBy.map((p) => p.resourceName)]),
            [
                ["app-prod", ["p1", "p3"]],
                [undefined, ["p2"]],
            ],
        );
        assert.strictEqual(views[0].view.serviceAccountName, "deployer");
        assert.strictEqual(views[0].view.refresh, true);
        assert.match(views[1].view.undeclaredTarget ?? "", /pulumi\/other\) is not declared/);
    });

    it("the RBAC rules' identities name each Stack as the Stack, patched or not (an unpatched Stack is its own view)", () => {
        const other = stackResource("app-other", goodSpec({ stack: "acme/other/dev" }));
        const program = [
            prod,
            other,
            patch("app-prod", { serviceAccountName: "deployer", stack: "acme/app/patched" }, {}, "p1"),
        ].map((r) => ({ ...r, urn: r.name }));
        // As an in-process evaluation runs the RBAC rules: views shared by its policies (evaluation/request-cache.ts).
        const shared = sharingViews();
        const [patched, plain] = shared.stackIdentities(program);
        const views = shared.patchedStacks(program);
        assert.strictEqual(plain.view, views[1].view);
        assert.strictEqual(describeStack(plain.view), 'Stack "app-other" (stack "acme/other/dev")');
        // The patched view is described as the patch first; the identity, a copy of it, is described as the Stack.
        assert.notStrictEqual(patched.view, views[0].view);
        assert.match(describeStack(views[0].view), /^StackPatch "p1" of Stack "app-prod"/);
        assert.strictEqual(describeStack(patched.view), 'Stack "app-prod" (stack "acme/app/patched")');
    });

    it("describes a copy of a described view by the copy's own name and stack", () => {
        const view = stackView({ ...prod, urn: "u" })!;
        assert.match(describeStack(view), /^Stack "app-prod" \(stack /);
        assert.strictEqual(
            describeStack({ ...view, resourceName: "renamed" }),
            `Stack "renamed" (stack ${JSON.stringify(view.stack)})`,
        );
        assert.strictEqual(describeStack({ ...view, stack: "acme/x/y" }), 'Stack "app-prod" (stack "acme/x/y")');
        assert.strictEqual(describeStack({ ...view, stack: UNKNOWN }), 'Stack "app-prod"');
        assert.match(describeStack(view), /^Stack "app-prod" \(stack /);
    });
});

describe("mergePatch (server-side apply of a patch)", () => {
    it("overrides fields, merges maps, removes on null", () => {
        assert.deepStrictEqual(
            mergePatch({ a: 1, m: { x: "1", y: "2" }, gone: true }, { a: 2, m: { y: "3", z: "4" }, gone: null }),
            { a: 2, m: { x: "1", y: "3", z: "4" } },
        );
    });

    it("merges lists of named objects by name and replaces other lists", () => {
        assert.deepStrictEqual(
            mergePatch(
                [
                    { name: "a", value: "1" },
                    { name: "b", value: "2" },
                ],
                [{ name: "b", value: "3" }, { name: "c" }],
            ),
            [{ name: "a", value: "1" }, { name: "b", value: "3" }, { name: "c" }],
        );
        assert.deepStrictEqual(mergePatch(["x", "y"], ["z"]), ["z"]);
    });

    it("an unknown value on either side makes the merged value unknown", () => {
        assert.strictEqual(mergePatch({ a: 1 }, UNKNOWN), UNKNOWN);
        assert.strictEqual(mergePatch(UNKNOWN, { a: 1 }), UNKNOWN);
        assert.deepStrictEqual(mergePatch({ a: 1 }, undefined), { a: 1 });
    });
});

describe("Stack patches and RBAC", () => {
    const binding = (name: string, sa: string): TestResource => ({
        type: "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding",
        name,
        props: {
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "ClusterRoleBinding",
            metadata: { name },
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
            subjects: [{ kind: "ServiceAccount", name: sa, namespace: "pulumi" }],
        },
    });

    it("a patch that switches a Stack to a cluster-admin service account makes the binding mandatory", () => {
        const stack = stackResource("app-dev", goodSpec({ stack: "acme/app/dev", serviceAccountName: "limited" }));
        const program = [stack, binding("ops-admin", "ops")];
        assert.deepStrictEqual(violations("pko-stack-no-cluster-admin", program), []);
        const patched = [...program, patch("app-dev", { serviceAccountName: "ops" })];
        const found = violations("pko-stack-no-cluster-admin", patched);
        assert.deepStrictEqual(
            found.map((v) => v.resource),
            ["ops-admin"],
        );
        assert.match(found[0].message, /grants cluster-admin to ServiceAccount pulumi\/ops, which Stack "app-dev"/);
    });
});
