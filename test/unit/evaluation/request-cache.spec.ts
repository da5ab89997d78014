/**
 * What the rules derive is shared only through the seam (evaluation/request-cache.ts): between the policies of one
 * in-process evaluation or of one analyzer request, by the identity of the inputs it derives from. Nothing survives
 * into another evaluation or request, even one about inputs of the same size and ends; a hook run without the
 * seam's views (a rule run on its own) computes everything itself; and no rule changes a shared result.
 */
import * as assert from "assert";
import { Policies, ResourceValidationPolicy, StackValidationPolicy } from "@pulumi/policy";
import { policies } from "../../../policies";
import { SETTINGS_POLICY } from "../../../policies/model/production";
import { ResourceLike } from "../../../policies/model/stack";
import { Views, computedViews } from "../../../policies/model/views";
import { sharingRequests, sharingViews } from "../../../evaluation/request-cache";
import { Rule, buildPolicies } from "../../../policies";
import { EvalResource, analyzerProps, evaluatePack } from "../../../evaluation/evaluate";
import { packConfig } from "../../../evaluation/pack-config";

const analyzerPb = require("@pulumi/pulumi/proto/analyzer_pb");
const structPb = require("google-protobuf/google/protobuf/struct_pb");
const sdkServer = require("@pulumi/policy/server");

interface Res {
    type: string;
    name: string;
    props: Record<string, unknown>;
}

const STACK = "kubernetes:pulumi.com/v1:Stack";
const urnOf = (r: Res) => `urn:pulumi:dev::request-spec::${r.type}::${r.name}`;

function fill(msg: any, r: Res): any {
    msg.setType(r.type);
    msg.setName(r.name);
    msg.setUrn(urnOf(r));
    msg.setProperties(structPb.Struct.fromJavaScript(r.props));
    msg.setOptions(new analyzerPb.AnalyzerResourceOptions());
    return msg;
}

type Handler = (call: { request: unknown }, cb: (err: unknown, res?: any) => void) => void;
const call = (h: Handler, request: unknown) =>
    new Promise<any>((resolve, reject) => h({ request }, (err, res) => (err ? reject(err) : resolve(res))));

/** The SDK's own Analyze and AnalyzeStack handlers over a list of policies (no server). */
function handlers(pack: Policies) {
    return {
        analyze: sdkServer.makeAnalyzeRpcFun("pko-guard", "0.1.0", "advisory", pack) as Handler,
        stack: sdkServer.makeAnalyzeStackRpcFun("pko-guard", "0.1.0", "advisory", pack) as Handler,
    };
}

/** Analyze per resource, then AnalyzeStack: every diagnostic as "policy urn message". */
async function analyze(h: ReturnType<typeof handlers>, resources: Res[]): Promise<string[]> {
    const out: string[] = [];
    const take = (res: any) =>
        res.getDiagnosticsList().forEach((d: any) => out.push(`${d.getPolicyname()} ${d.getUrn()} ${d.getMessage()}`));
    for (const r of resources) take(await call(h.analyze, fill(new analyzerPb.AnalyzeRequest(), r)));
    const stack = new analyzerPb.AnalyzeStackRequest();
    stack.setResourcesList(resources.map((r) => fill(new analyzerPb.AnalyzerResource(), r)));
    take(await call(h.stack, stack));
    return out.sort();
}

const stack = (name: string, spec: Record<string, unknown>): Res => ({
    type: STACK,
    name,
    props: {
        apiVersion: "pulumi.com/v1",
        kind: "Stack",
        metadata: { name, namespace: "apps" },
        spec: { stack: "acme/app/prod", projectRepo: "https://github.com/acme/app", ...spec },
    },
});
const patch = (name: string, target: string, spec: Record<string, unknown>): Res => ({
    type: "kubernetes:pulumi.com/v1:StackPatch",
    name,
    props: { apiVersion: "pulumi.com/v1", kind: "Stack", metadata: { name: target, namespace: "apps" }, spec },
});
const secret = (name: string): Res => ({
    type: "kubernetes:core/v1:Secret",
    name,
    props: { metadata: { name, namespace: "apps" } },
});
const clusterAdmin = (account: string): Res => ({
    type: "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding",
    name: "admin",
    props: {
        metadata: { name: "admin" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
        subjects: [{ kind: "ServiceAccount", name: account, namespace: "apps" }],
    },
});

const PINNED = {
    commit: "2b0889718d3e63feeb6079ccd5e4488d8601e353",
    refresh: true,
    envRefs: { PULUMI_ACCESS_TOKEN: { type: "Secret", secret: { name: "t", key: "k" } } },
};
const BRANCH = {
    branch: "main",
    destroyOnFinalize: true,
    envRefs: {
        PULUMI_ACCESS_TOKEN: { type: "Literal", literal: { value: "pul-0123456789abcdef0123456789abcdef01234567" } },
    },
};

/** The program's resources as a rule reads them (plain props, one object each). */
const asResources = (resources: Res[]): ResourceLike[] => resources.map((r) => ({ ...r, urn: urnOf(r) }));

/** The rows of an in-process evaluation, as "policy resource message", sorted. */
function evaluated(resources: Res[], immutable = false): string[] {
    const input: EvalResource[] = resources.map((r) => ({ ...r, urn: urnOf(r), immutable }));
    return evaluatePack(input, packConfig(undefined))
        .map((r) => `${r.policy} ${r.urn.slice(r.urn.lastIndexOf("::") + 2)} ${r.message}`)
        .sort();
}

/**
 * Every hook of every policy over `resources` as an in-process evaluation runs them (one deserialized copy of each
 * resource, one list for the stack hooks), with `views` in their arguments.
 */
function runEveryHook(resources: ResourceLike[], views: Views): void {
    const getConfig = <T>() => ({}) as T;
    const report = () => undefined;
    const notApplicable = () => {
        throw new Error("not applicable");
    };
    for (const p of policies) {
        const r = p as Partial<ResourceValidationPolicy & StackValidationPolicy>;
        if (typeof r.validateResource === "function")
            for (const a of resources)
                assert.ok(
                    !(
                        r.validateResource({ ...a, getConfig, notApplicable, views } as never, report) instanceof
                        Promise
                    ),
                );
        if (typeof r.validateStack === "function")
            assert.ok(
                !(r.validateStack({ resources, getConfig, notApplicable, views } as never, report) instanceof Promise),
            );
    }
}

describe("what the rules derive, shared by identity (evaluation/request-cache.ts)", () => {
    const program = [
        stack("app", { ...PINNED, serviceAccountName: "deployer" }),
        patch("p", "app", { refresh: true }),
        stack("other", BRANCH),
        secret("t"),
        clusterAdmin("deployer"),
    ];

    it("remembers each result by the identity of its input, never by what the input contains", () => {
        const views = sharingViews();
        const list = asResources(program);
        assert.strictEqual(views.patchedStacks(list), views.patchedStacks(list));
        assert.strictEqual(views.rbacModel(list), views.rbacModel(list));
        assert.strictEqual(views.stackIdentities(list), views.stackIdentities(list));
        assert.strictEqual(views.workspaceIdentities(list, 2), views.workspaceIdentities(list, 2));
        assert.strictEqual(views.view(list[0], "Stack"), views.view(list[0], "Stack"));
        // Another list, even with the same resources in it, derives its own (equal) results.
        const copy = [...list];
        assert.notStrictEqual(views.patchedStacks(copy), views.patchedStacks(list));
        assert.deepStrictEqual(views.patchedStacks(copy), views.patchedStacks(list));
        // A list of the same size and ends with another patch in the middle: its own results, as computed alone.
        const other = asResources([
            program[0],
            patch("p", "app", { branch: "main", commit: null, serviceAccountName: "other" }),
            ...program.slice(2),
        ]);
        assert.strictEqual(other.length, list.length);
        assert.deepStrictEqual(views.stackIdentities(other), computedViews.stackIdentities(other));
        assert.notDeepStrictEqual(views.stackIdentities(other), views.stackIdentities(list));
        // One props object read as two resources: a view of each, named by each.
        const renamed = { ...list[0], name: "renamed" };
        assert.strictEqual(views.view(renamed, "Stack")?.resourceName, "renamed");
        assert.strictEqual(views.view(list[0], "Stack")?.resourceName, "app");
        assert.strictEqual(views.props(renamed), views.props(list[0]));
        assert.strictEqual(views.view(list[0], "StackPatch"), undefined);
    });

    it("derives each step once: patched Stacks from the Stack views, identities from the patched Stacks", () => {
        const views = sharingViews();
        const list = asResources(program);
        const other = views.view(list[2], "Stack");
        const patched = views.patchedStacks(list);
        assert.strictEqual(patched[1].stack, other, "the unpatched Stack's view is the one its resource hooks read");
        assert.strictEqual(patched[1].view, other);
        assert.strictEqual(views.stackIdentities(list)[1].view, other);
        // Computed anew, each call derives its own.
        assert.notStrictEqual(computedViews.patchedStacks(list)[1].view, computedViews.view(list[2], "Stack"));
    });

    it("no rule changes a shared result: after every hook of every policy, each is what it was", () => {
        const views = sharingViews();
        const list = program.map((r) => ({ ...r, urn: urnOf(r), props: analyzerProps(r.props) }));
        const before = {
            views: list.map((r) => views.view(r, "Stack")),
            patched: views.patchedStacks(list),
            identities: views.stackIdentities(list),
            workspaces: views.workspaceIdentities(list, 0),
            model: views.rbacModel(list),
        };
        runEveryHook(list, views);
        const fresh = computedViews;
        assert.deepStrictEqual(
            before.views,
            list.map((r) => fresh.view(r, "Stack")),
        );
        assert.deepStrictEqual(before.patched, fresh.patchedStacks(list));
        assert.deepStrictEqual(before.identities, fresh.stackIdentities(list));
        assert.deepStrictEqual(before.workspaces, fresh.workspaceIdentities(list, 0));
        // The model keeps the grants its rules resolved (the same answers for every rule); its objects are unchanged.
        const model = fresh.rbacModel(list);
        assert.deepStrictEqual(
            [before.model.roles, before.model.bindings, before.model.rolesByName, before.model.clusterRoles],
            [model.roles, model.bindings, model.rolesByName, model.clusterRoles],
        );
        assert.ok(before.model.adminGrants.size > 0, "the RBAC rules ran on the shared model");
        assert.strictEqual(views.patchedStacks(list), before.patched);
    });

    it("in-process evaluations of programs of the same size and ends each get their own verdicts", () => {
        const first = [stack("app", PINNED), patch("p", "app", { refresh: true }), secret("t")];
        const second = [
            stack("app", PINNED),
            patch("p", "app", { branch: "main", commit: null, destroyOnFinalize: true }),
            secret("t"),
        ];
        for (const immutable of [false, true]) {
            const a = evaluated(first, immutable);
            const b = evaluated(second, immutable);
            assert.notDeepStrictEqual(a, b, "the two programs must differ in verdicts for this test to mean anything");
            assert.deepStrictEqual(evaluated(first, immutable), a);
            assert.deepStrictEqual(evaluated(second, immutable), b);
        }
    });
});

/** Policies that only record the arguments each call of theirs gets. */
function probes(names: string[]): { list: Rule[]; seen: { policy: string; args: any }[] } {
    const seen: { policy: string; args: any }[] = [];
    const list = names.map(
        (name) =>
            ({
                name,
                validateResource: (args: unknown) => void seen.push({ policy: name, args }),
                validateStack: (args: unknown) => void seen.push({ policy: name, args }),
            }) as unknown as Rule,
    );
    return { list, seen };
}

describe("analyzer requests (evaluation/request-cache.ts sharingRequests)", () => {
    const call = (p: Rule, urn: string, props: object = {}) =>
        (p as any).validateResource({ urn, props, getConfig: () => ({}) }, () => undefined);

    it("a request's policies read its first policy's inputs and share its views; another key, a second call of a policy or the end of the turn starts another", async () => {
        const { list, seen } = probes(["p1", "p2", "p3"]);
        const [p1, p2, p3] = sharingRequests(list);
        const first = {};
        call(p1, "urn:a", first);
        call(p2, "urn:a");
        call(p3, "urn:b");
        call(p1, "urn:b");
        call(p2, "urn:b");
        call(p2, "urn:b");
        const views = seen.map((s) => s.args.views);
        assert.strictEqual(seen[1].args.props, first, "the second policy reads the first one's props");
        assert.strictEqual(views[1], views[0], "the second policy of the request shares its views");
        assert.notStrictEqual(views[2], views[0], "another key is another request");
        assert.strictEqual(views[3], views[2], "another policy of that request");
        assert.strictEqual(views[4], views[2]);
        assert.notStrictEqual(views[5], views[4], "a policy called again is in another request");
        call(p3, "urn:b");
        await new Promise((resolve) => setImmediate(resolve));
        call(p1, "urn:b");
        assert.notStrictEqual(seen[7].args.views, seen[6].args.views, "the end of the turn ends the request");
        // AnalyzeStack: the first policy's resource list, for every policy of the request.
        const resources = [{ urn: "urn:x", type: "t", name: "x", props: {} }];
        (p1 as any).validateStack({ resources, getConfig: () => ({}) }, () => undefined);
        (p2 as any).validateStack({ resources: [...resources], getConfig: () => ({}) }, () => undefined);
        assert.strictEqual(seen[9].args.resources, resources);
        assert.strictEqual(seen[9].args.views, seen[8].args.views);
    });
});

/** The analyzer's pack as index.ts serves it: a pack of its own, its requests shared through the seam. */
describe("the analyzer: each request gets its own verdicts", () => {
    it("two Analyze requests for the same resource in one turn each get their own verdicts", async () => {
        const h = handlers(sharingRequests(buildPolicies()));
        const pinned = [stack("app", PINNED), secret("t")];
        const branch = [stack("app", BRANCH), secret("t")];
        const expectPinned = await analyze(h, pinned);
        const expectBranch = await analyze(h, branch);
        assert.notDeepStrictEqual(
            expectPinned,
            expectBranch,
            "the two programs must differ in verdicts for this test to mean anything",
        );
        assert.deepStrictEqual(await analyze(h, pinned), expectPinned);
        assert.deepStrictEqual(await analyze(h, branch), expectBranch);
        assert.deepStrictEqual(await analyze(h, pinned), expectPinned);
    });

    it("two AnalyzeStack requests with the same key (size and ends) but another patch in the middle each get their own verdicts", async () => {
        const h = handlers(sharingRequests(buildPolicies()));
        const first = [stack("app", PINNED), patch("p", "app", { refresh: true }), secret("t")];
        const second = [
            stack("app", PINNED),
            patch("p", "app", { branch: "main", commit: null, destroyOnFinalize: true }),
            secret("t"),
        ];
        const expectFirst = await analyze(h, first);
        const expectSecond = await analyze(h, second);
        assert.notDeepStrictEqual(expectFirst, expectSecond);
        assert.deepStrictEqual(await analyze(h, first), expectFirst);
        assert.deepStrictEqual(await analyze(h, second), expectSecond);
    });

    it("without the settings policy (disabled), a request right after one with it gets its own verdicts", async () => {
        const full = handlers(sharingRequests(buildPolicies()));
        const withoutSettings = handlers(sharingRequests(policies.filter((p) => p.name !== SETTINGS_POLICY)));
        // The same key (size and ends) and the same Stack URN; only the account the Stack runs as differs.
        const admin = [stack("app", { ...PINNED, serviceAccountName: "deployer" }), clusterAdmin("deployer")];
        const other = [stack("app", { ...PINNED, serviceAccountName: "other" }), clusterAdmin("deployer")];
        const expected = await analyze(withoutSettings, other);
        assert.notDeepStrictEqual(await analyze(withoutSettings, admin), expected);
        await analyze(full, admin);
        assert.deepStrictEqual(await analyze(withoutSettings, other), expected);
    });
});
