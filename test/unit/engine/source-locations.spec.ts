import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { locateRows } from "../../../engine/source-locations";
import { row } from "../../../evaluation/rows";

const NS = "kubernetes:core/v1:Namespace";
const STACK = "kubernetes:pulumi.com/v1:Stack";
const CM = "kubernetes:core/v1:ConfigMap";
const urn = (type: string, name: string) => `urn:pulumi:dev::shop::${type}::${name}`;

// A program where a Namespace, a Stack and a component's ConfigMap are all named "app", and some names are
// built from template strings.
const INDEX = [
    'import * as k8s from "@pulumi/kubernetes";',
    'import { Platform } from "./platform";',
    "const env = 'prod';",
    'const ns = new k8s.core.v1.Namespace("app", {});',
    'const cm = new k8s.core.v1.ConfigMap("app", { data: {} });',
    "const stack = new k8s.apiextensions.CustomResource(",
    '    "app",',
    "    {",
    '        apiVersion: "pulumi.com/v1",',
    '        kind: "Stack",',
    "        spec: {},",
    "    },",
    ");",
    "const apps = new k8s.core.v1.Namespace(`${env}-apps`, {});",
    'new Platform("platform");',
    "",
].join("\n");
const PLATFORM = [
    'import * as pulumi from "@pulumi/pulumi";',
    'import * as k8s from "@pulumi/kubernetes";',
    "export class Platform extends pulumi.ComponentResource {",
    "    constructor(name: string) {",
    '        super("acme:index:Platform", name);',
    '        new k8s.core.v1.ConfigMap("app", { data: {} }, { parent: this });',
    "        new k8s.core.v1.ConfigMap(`${name}`, { data: {} }, { parent: this });",
    "    }",
    "}",
    "",
].join("\n");
const PYTHON = ["import pulumi_kubernetes as k8s", 'k8s.core.v1.Secret(f"{prefix}-token", string_data={})', ""].join(
    "\n",
);

describe("engine/source-locations: where the gate points a finding", () => {
    let dir: string;
    before(() => {
        dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-locations-")));
        fs.writeFileSync(path.join(dir, "index.ts"), INDEX);
        fs.writeFileSync(path.join(dir, "platform.ts"), PLATFORM);
        fs.writeFileSync(path.join(dir, "__main__.py"), PYTHON);
    });
    after(() => fs.rmSync(dir, { recursive: true, force: true }));

    const at = (u: string) => {
        const [r] = locateRows([row("p", u, "mandatory", "m")], dir, "index.ts");
        return r.file === undefined ? "none" : `${path.relative(dir, r.file)}:${r.line}:${r.column}`;
    };

    it("tells resources of one name apart by the URN's type: each at its own constructor", () => {
        assert.strictEqual(at(urn(NS, "app")), "index.ts:4:38");
        assert.strictEqual(at(urn(STACK, "app")), "index.ts:7:5");
        assert.strictEqual(at(urn(CM, "app")), "index.ts:5:38");
    });

    it("tells a component's child from a top-level resource of one name and type by the URN's parent", () => {
        assert.strictEqual(at(`urn:pulumi:dev::shop::acme:index:Platform$${CM}::app`), "platform.ts:6:35");
    });

    it("places a name built from a template string, in TypeScript and in a Python f-string", () => {
        assert.strictEqual(at(urn(NS, "prod-apps")), "index.ts:14:40");
        assert.strictEqual(at(urn("kubernetes:core/v1:Secret", "acme-token")), "__main__.py:2:20");
    });

    it("gives no location for a name no literal or template of the program builds", () => {
        assert.strictEqual(at(urn(NS, "elsewhere")), "none");
        // A template of no fixed part (`${name}`) builds any name; it is never taken for this one.
        assert.strictEqual(at(urn(CM, "platform-x")), "none");
    });
});
