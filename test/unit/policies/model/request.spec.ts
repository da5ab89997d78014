/**
 * What an analyzer request derives is shared by that request's policies only (policies/model/request.ts):
 * never by another request, even one about the same resource in the same turn of the event loop, and not
 * at all when the settings policy does not open the request.
 */
import * as assert from "assert";
import { Policies } from "@pulumi/policy";
import { policies } from "../../../../policies";
import { SETTINGS_POLICY } from "../../../../policies/model/production";
import { endRequests, inRequest, memoized, openRequest } from "../../../../policies/model/request";

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

/** Each request alone: nothing open before it. */
async function alone(h: ReturnType<typeof handlers>, resources: Res[]): Promise<string[]> {
    endRequests();
    return analyze(h, resources);
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

describe("request-scoped sharing (policies/model/request.ts)", () => {
    afterEach(() => endRequests());

    it("computes once per open request, once per policy call; another key, a second call of a policy or the end of the request computes again", async () => {
        let built = 0;
        const build = () => ++built;
        openRequest("urn:a");
        assert.strictEqual(
            inRequest("urn:a", "p1", () => memoized("x", build)),
            1,
        );
        assert.strictEqual(
            inRequest("urn:a", "p2", () => memoized("x", build)),
            1,
            "the second policy of the request reuses",
        );
        assert.strictEqual(
            inRequest("urn:b", "p3", () => memoized("x", build)),
            2,
            "another request's key never reuses",
        );
        assert.strictEqual(
            inRequest("urn:a", "p1", () => memoized("x", build)),
            3,
            "a policy called again is in another request: the open one is closed",
        );
        assert.strictEqual(
            inRequest("urn:a", "p4", () => memoized("x", build)),
            4,
        );
        assert.strictEqual(memoized("x", build), 5, "outside a rule nothing is shared");
        openRequest("urn:c");
        endRequests();
        assert.strictEqual(
            inRequest("urn:c", "p1", () => memoized("x", build)),
            6,
            "an in-process evaluation's end closes it",
        );
        openRequest("urn:d");
        await new Promise((resolve) => setImmediate(resolve));
        assert.strictEqual(
            inRequest("urn:d", "p1", () => memoized("x", build)),
            7,
            "the end of the event loop's turn closes it",
        );
    });

    it("two Analyze requests for the same resource in one turn each get their own verdicts", async () => {
        const h = handlers(policies);
        const pinned = [stack("app", PINNED), secret("t")];
        const branch = [stack("app", BRANCH), secret("t")];
        const expectPinned = await alone(h, pinned);
        const expectBranch = await alone(h, branch);
        assert.notDeepStrictEqual(
            expectPinned,
            expectBranch,
            "the two programs must differ in verdicts for this test to mean anything",
        );
        endRequests();
        assert.deepStrictEqual(await analyze(h, pinned), expectPinned);
        assert.deepStrictEqual(await analyze(h, branch), expectBranch);
        assert.deepStrictEqual(await analyze(h, pinned), expectPinned);
    });

    it("two AnalyzeStack requests with the same key (size and ends) but another patch in the middle each get their own verdicts", async () => {
        const h = handlers(policies);
        const first = [stack("app", PINNED), patch("p", "app", { refresh: true }), secret("t")];
        const second = [
            stack("app", PINNED),
            patch("p", "app", { branch: "main", commit: null, destroyOnFinalize: true }),
            secret("t"),
        ];
        const expectFirst = await alone(h, first);
        const expectSecond = await alone(h, second);
        assert.notDeepStrictEqual(expectFirst, expectSecond);
        endRequests();
        assert.deepStrictEqual(await analyze(h, first), expectFirst);
        assert.deepStrictEqual(await analyze(h, second), expectSecond);
    });

    it("without the settings policy (disabled) nothing is shared, even right after a request it opened", async () => {
        const full = handlers(policies);
        const withoutSettings = handlers(policies.filter((p) => p.name !== SETTINGS_POLICY));
        // The same key (size and ends) and the same Stack URN; only the account the Stack runs as differs.
        const admin = [stack("app", { ...PINNED, serviceAccountName: "deployer" }), clusterAdmin("deployer")];
        const other = [stack("app", { ...PINNED, serviceAccountName: "other" }), clusterAdmin("deployer")];
        const expected = await alone(withoutSettings, other);
        assert.notDeepStrictEqual(await alone(withoutSettings, admin), expected);
        endRequests();
        await analyze(full, admin);
        assert.deepStrictEqual(await analyze(withoutSettings, other), expected);
    });
});
