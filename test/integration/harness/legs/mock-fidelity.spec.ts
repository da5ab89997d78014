/**
 * The mock leg reproduces what the engine and the Kubernetes provider do in preview (mock-engine.ts, and
 * mock-check.ts and its neighbours), or refuses the program with a reason: never a silent match.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { Fixture } from "../../../../harness/expect";
import { runProgramUnderMocks } from "../../../../harness/legs/mock";
import { MockRefusal, SECRET_SIG, SIG_KEY, UNKNOWN_WIRE } from "../../../../harness/legs/mock-wire";
import { AUTONAMED_ANNOTATION, checkKubernetesInputs } from "../../../../harness/legs/mock-check";
import { isNamespacedKind } from "../../../../harness/legs/mock-kinds";
import { decodeYamlInvoke, expandYamlV2, goGlob } from "../../../../harness/legs/mock-yaml";
import { engineUrn } from "../../../../harness/legs/mock-engine";
import { autonamesFromEvents, maskAutonames } from "../../../../harness/autonames";
import { REPO_ROOT } from "../../../../support/paths";
import { row } from "../../../../evaluation/rows";
import { programFixture } from "../../../support/program-fixture";

const secret = (value: any): any => ({ [SIG_KEY]: SECRET_SIG, value });
const ctx = () => ({ crds: new Map<string, string>(), defaultNamespace: "", random: () => "0a1b2c3d" });

describe("mock leg: the Kubernetes provider's Check", () => {
    it("autonames an object without metadata.name as <name>-<8 hex>, a known value, annotated as the provider does", () => {
        const out = checkKubernetesInputs(
            "runner",
            "kubernetes:core/v1:ServiceAccount",
            { apiVersion: "v1", kind: "ServiceAccount", metadata: { namespace: "pulumi" } },
            ctx(),
        );
        assert.deepStrictEqual(out.metadata, {
            namespace: "pulumi",
            name: "runner-0a1b2c3d",
            annotations: { [AUTONAMED_ANNOTATION]: "true" },
        });
        const real = checkKubernetesInputs(
            "runner",
            "kubernetes:core/v1:ServiceAccount",
            { metadata: {} },
            { crds: new Map(), defaultNamespace: "" },
        );
        assert.match(String((real.metadata as any).name), /^runner-[0-9a-f]{8}$/);
    });

    it("keeps a given or unknown name, and refuses generateName (unsupported when rendering YAML)", () => {
        const named = checkKubernetesInputs(
            "x",
            "kubernetes:core/v1:ServiceAccount",
            { metadata: { name: "given" } },
            ctx(),
        );
        assert.deepStrictEqual(named.metadata, { name: "given" });
        const unknown = checkKubernetesInputs(
            "x",
            "kubernetes:core/v1:ServiceAccount",
            { metadata: { name: UNKNOWN_WIRE } },
            ctx(),
        );
        assert.deepStrictEqual(unknown.metadata, { name: UNKNOWN_WIRE });
        assert.throws(
            () =>
                checkKubernetesInputs(
                    "x",
                    "kubernetes:core/v1:ServiceAccount",
                    { metadata: { generateName: "x-" } },
                    ctx(),
                ),
            MockRefusal,
        );
    });

    it("drops read-only metadata and folds Secret stringData into base64 data, keeping secrets secret", () => {
        const out = checkKubernetesInputs(
            "tok",
            "kubernetes:core/v1:Secret",
            {
                apiVersion: "v1",
                kind: "Secret",
                metadata: { name: "tok", uid: "u", resourceVersion: "1" },
                stringData: { a: secret("abc"), b: "plain" },
            },
            ctx(),
        );
        assert.deepStrictEqual(out.metadata, { name: "tok" });
        assert.deepStrictEqual(out.data, { a: secret("YWJj"), b: "cGxhaW4=" });
        assert.strictEqual(out.stringData, undefined);
        // With an unknown value anywhere, the provider does not normalise.
        const withUnknown = checkKubernetesInputs(
            "tok",
            "kubernetes:core/v1:Secret",
            { apiVersion: "v1", kind: "Secret", metadata: { name: "t" }, stringData: { a: UNKNOWN_WIRE } },
            ctx(),
        );
        assert.deepStrictEqual(withUnknown.stringData, { a: UNKNOWN_WIRE });
    });

    it("decides namespaced kinds from the static table, then CRDs, and fails like the provider otherwise", () => {
        assert.strictEqual(isNamespacedKind("v1", "ServiceAccount", new Map()), true);
        assert.strictEqual(isNamespacedKind("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", new Map()), false);
        const crd = {
            apiVersion: "apiextensions.k8s.io/v1",
            kind: "CustomResourceDefinition",
            metadata: { name: "stacks.pulumi.com" },
            spec: { group: "pulumi.com", scope: "Namespaced", names: { kind: "Stack" } },
        };
        assert.strictEqual(isNamespacedKind("pulumi.com/v1", "Stack", new Map(), [crd]), true);
        assert.throws(
            () => isNamespacedKind("pulumi.com/v1", "Stack", new Map()),
            /failed to determine if the following GVK is namespaced: pulumi.com\/v1, Kind=Stack/,
        );
        // A CRD the program checked earlier is remembered, as the provider's CRD cache does.
        const c = ctx();
        checkKubernetesInputs("crd", "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition", crd, c);
        assert.strictEqual(isNamespacedKind("pulumi.com/v1", "Stack", c.crds), true);
    });
});

describe("mock leg: YAML as the provider reads it", () => {
    it("kubernetes:yaml:decode returns the documents with kind and apiVersion, YAML 1.1 scalars included", () => {
        const { result } = decodeYamlInvoke({
            text: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {flag: yes, on: x}\n---\n# empty\n---\nfoo: bar\n",
        });
        assert.deepStrictEqual(result, [
            { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a" }, data: { flag: true, true: "x" } },
        ]);
        assert.throws(() => decodeYamlInvoke({ text: "a: [b" }), MockRefusal);
    });

    it("yaml/v2 children get the provider's names, types, order, dependencies and secret marking", () => {
        const c = ctx();
        c.defaultNamespace = "";
        const children = expandYamlV2(
            "ConfigGroup",
            "cg",
            {
                yaml: [
                    "apiVersion: pulumi.com/v1\nkind: Stack\nmetadata: {name: s, namespace: pulumi}",
                    "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Secret, metadata: {name: t, namespace: pulumi}, data: {k: dg==}}",
                    "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: stacks.pulumi.com}\nspec: {group: pulumi.com, scope: Namespaced, names: {kind: Stack}}",
                    "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: r}",
                ].join("\n---\n"),
            },
            os.tmpdir(),
            c,
        );
        assert.deepStrictEqual(
            children.map((x) => [x.type, x.name, x.dependsOn]),
            [
                ["kubernetes:core/v1:Secret", "cg:pulumi/t", []],
                ["kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition", "cg:stacks.pulumi.com", []],
                ["kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", "cg:r", []],
                ["kubernetes:pulumi.com/v1:Stack", "cg:pulumi/s", ["cg:stacks.pulumi.com"]],
            ],
        );
        assert.deepStrictEqual(children[0].properties.data, secret({ k: "dg==" }));
        const prefixed = expandYamlV2(
            "ConfigGroup",
            "cg",
            { resourcePrefix: "", objs: [{ apiVersion: "v1", kind: "Namespace", metadata: { name: "n" } }] },
            os.tmpdir(),
            c,
        );
        assert.deepStrictEqual(
            prefixed.map((x) => x.name),
            ["n"],
        );
    });

    it("yaml/v2 refuses what the provider would reject or fetch", () => {
        assert.throws(
            () =>
                expandYamlV2(
                    "ConfigGroup",
                    "cg",
                    { yaml: "apiVersion: v1\nkind: ConfigMap\nmetadata: {}" },
                    os.tmpdir(),
                    ctx(),
                ),
            /require a \.metadata\.name/,
        );
        assert.throws(
            () => expandYamlV2("ConfigFile", "cf", { file: "https://example.com/x.yaml" }, os.tmpdir(), ctx()),
            /cannot expand kubernetes:yaml\/v2:ConfigFile "cf" in the mock leg: it fetches/,
        );
        assert.throws(
            () => expandYamlV2("ConfigGroup", "cg", { yaml: UNKNOWN_WIRE }, os.tmpdir(), ctx()),
            /inputs are unknown/,
        );
        assert.throws(
            () =>
                expandYamlV2(
                    "ConfigGroup",
                    "cg",
                    { yaml: "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}" },
                    os.tmpdir(),
                    ctx(),
                ),
            /failed to determine if the following GVK is namespaced/,
        );
    });

    it("globs files as Go's filepath.Glob does (one segment, sorted)", () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-glob-"));
        try {
            fs.mkdirSync(path.join(dir, "m"));
            for (const f of ["m/b.yaml", "m/a.yaml", "m/c.txt"]) fs.writeFileSync(path.join(dir, f), "");
            assert.deepStrictEqual(goGlob("m/*.yaml", dir), ["m/a.yaml", "m/b.yaml"]);
            assert.deepStrictEqual(goGlob("m/[ab].yaml", dir), ["m/a.yaml", "m/b.yaml"]);
            assert.deepStrictEqual(goGlob("*.yaml", dir), []);
            // path.Match: `\\` escapes (and makes the pattern a glob), `[^...]` negates, a malformed pattern fails whatever the folder holds.
            assert.deepStrictEqual(goGlob("m/\\a.yaml", dir), ["m/a.yaml"]);
            assert.deepStrictEqual(goGlob("m/[^a].*", dir), ["m/b.yaml", "m/c.txt"]);
            assert.throws(() => goGlob("m/[a", dir), /expanding glob: syntax error in pattern "m\/\[a"/);
            assert.throws(() => goGlob("nowhere/[]", dir), /syntax error in pattern/);
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });
});

describe("mock leg: generated names are masked alike in both legs", () => {
    it("masks exactly the names a leg generated, nothing else", () => {
        const rows = [
            row("p", "urn:pulumi:dev::x::t::a", "mandatory", "binds pulumi/runner-0a1b2c3d and pulumi/other-deadbeef"),
        ];
        assert.deepStrictEqual(
            maskAutonames(rows, ["runner-0a1b2c3d"]).map((r) => r.message),
            ["binds pulumi/runner-******** and pulumi/other-deadbeef"],
        );
        const line = JSON.stringify({
            resourcePreEvent: {
                metadata: {
                    new: {
                        inputs: {
                            metadata: { name: "runner-0a1b2c3d", annotations: { [AUTONAMED_ANNOTATION]: "true" } },
                        },
                    },
                },
            },
        });
        assert.deepStrictEqual(autonamesFromEvents(`noise\n${line}\n`), ["runner-0a1b2c3d"]);
    });
});

describe("mock leg: programs (child process under mocks)", function () {
    this.timeout(120000);
    let root: string;
    before(() => {
        root = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-mockfid-"));
        // Our own compiler settings, whatever tsconfig.json a folder above holds.
        fs.copyFileSync(path.join(REPO_ROOT, "fixtures", "tsconfig.json"), path.join(root, "tsconfig.json"));
    });
    after(() => fs.rmSync(root, { recursive: true, force: true }));

    const program = (name: string, source: string): Fixture => programFixture(root, name, source);

    async function refusal(f: Fixture): Promise<string> {
        try {
            await runProgramUnderMocks(f, 60000);
        } catch (e) {
            return (e as Error).message;
        }
        assert.fail("the mock leg ran a program it cannot reproduce");
    }

    it("refuses provider-side components it cannot expand (a Helm v4 chart from a registry, a remote kustomize v2 directory)", async () => {
        const helm = program(
            "helm4",
            `import * as k8s from "@pulumi/kubernetes";\nnew k8s.helm.v4.Chart("nginx", { chart: "oci://registry-1.docker.io/bitnamicharts/nginx" });\n`,
        );
        assert.match(await refusal(helm), /^cannot expand kubernetes:helm\.sh\/v4:Chart "nginx" in the mock leg: /);
        const kust = program(
            "kust2",
            `import * as k8s from "@pulumi/kubernetes";\nnew k8s.kustomize.v2.Directory("app", { directory: "https://github.com/kubernetes-sigs/kustomize//examples/helloWorld?ref=v3.3.1" });\n`,
        );
        assert.match(await refusal(kust), /^cannot expand kubernetes:kustomize\/v2:Directory "app" in the mock leg: /);
    });

    it("refuses invokes that need Helm or kustomize, and reads of existing objects", async () => {
        const helm3 = program(
            "helm3",
            `import * as k8s from "@pulumi/kubernetes";\nnew k8s.helm.v3.Chart("nginx", { chart: "nginx", fetchOpts: { repo: "https://charts.example.com" } });\n`,
        );
        assert.match(await refusal(helm3), /^cannot answer the invoke kubernetes:helm:template in the mock leg: /);
        const get = program(
            "get",
            `import * as k8s from "@pulumi/kubernetes";\nconst sa = k8s.core.v1.ServiceAccount.get("ops", "pulumi/ops");\nnew k8s.core.v1.ConfigMap("c", { metadata: { name: "c" }, data: { sa: sa.metadata.name } });\n`,
        );
        assert.match(
            await refusal(get),
            /^cannot read kubernetes:core\/v1:ServiceAccount "ops" \(a \.get of an existing resource\) in the mock leg/,
        );
    });

    it("never reports an empty program error", async () => {
        const empty = program(
            "empty-error",
            `import * as k8s from "@pulumi/kubernetes";\nnew k8s.core.v1.ServiceAccount("a", { metadata: { name: "a" } });\nthrow new Error();\n`,
        );
        const msg = await refusal(empty);
        assert.match(msg, /^program failed: \S/);
        const unanswered = program(
            "unanswered",
            `import * as pulumi from "@pulumi/pulumi";\nimport * as k8s from "@pulumi/kubernetes";\nnew k8s.core.v1.ServiceAccount("a", { metadata: { name: "a" } });\npulumi.runtime.invoke("example:index:lookup", {});\n`,
        );
        assert.match(
            await refusal(unanswered),
            /^program failed: .*example:index:lookup is not answered in the mock leg/,
        );
    });

    it("applies transforms in the engine's order and gives URNs the engine's whole parent chain", async () => {
        const f = program(
            "transforms",
            `import * as pulumi from "@pulumi/pulumi";
import * as k8s from "@pulumi/kubernetes";
pulumi.runtime.registerResourceTransform((a) => a.type === "kubernetes:core/v1:ConfigMap" ? { props: { ...a.props, data: { ...a.props.data, order: a.props.data.order + ",stack" } }, opts: a.opts } : undefined);
class Box extends pulumi.ComponentResource { constructor(n: string, opts?: pulumi.ComponentResourceOptions) { super("acme:x:Box", n, {}, opts); } }
const outer = new Box("outer", { transforms: [(a) => a.type === "kubernetes:core/v1:ConfigMap" ? { props: { ...a.props, data: { order: a.props.data.order + ",outer" } }, opts: a.opts } : undefined] });
const inner = new Box("inner", { parent: outer });
new k8s.core.v1.ConfigMap("cm", { metadata: { name: "cm" }, data: { order: "own" } }, { parent: inner, transforms: [(a) => ({ props: { ...a.props, data: { order: "self" } }, opts: a.opts })] });
`,
        );
        const resources = await runProgramUnderMocks(f, 60000);
        const cm = resources.find((r) => r.name === "cm")!;
        assert.strictEqual(
            cm.urn,
            "urn:pulumi:dev::transforms::acme:x:Box$acme:x:Box$kubernetes:core/v1:ConfigMap::cm",
        );
        assert.strictEqual(cm.parent, "urn:pulumi:dev::transforms::acme:x:Box$acme:x:Box::inner");
        assert.deepStrictEqual((cm.properties as any).data, { order: "self,outer,stack" });
        assert.strictEqual(
            engineUrn("dev", "p", "t:m:T", "n", "urn:pulumi:dev::p::pulumi:pulumi:Stack::p-dev"),
            "urn:pulumi:dev::p::t:m:T::n",
        );
    });

    it("applies the stack's invoke transforms before answering an invoke", async () => {
        const f = program(
            "invoke-transforms",
            `import * as pulumi from "@pulumi/pulumi";
import * as k8s from "@pulumi/kubernetes";
pulumi.runtime.registerInvokeTransform((a) => a.token === "kubernetes:yaml:decode" ? { args: { text: a.args.text.replace("name: before", "name: after") }, opts: a.opts } : undefined);
new k8s.yaml.ConfigGroup("g", { yaml: "apiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: before\\n" });
`,
        );
        const resources = await runProgramUnderMocks(f, 60000);
        assert.deepStrictEqual(
            resources.map((r) => r.name),
            ["invoke-transforms-dev", "g", "after"],
        );
        // The root stack resource is every top-level resource's parent, as in the engine.
        assert.deepStrictEqual(
            resources.map((r) => r.parent ?? ""),
            ["", resources[0].urn, resources[1].urn],
        );
    });
});
