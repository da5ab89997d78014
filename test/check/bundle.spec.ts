/**
 * The installed command is one bundle (cli/bundle/build.ts): package.json's `bin` is it, `files` ships it, and
 * `check` runs from it without loading what only other commands need (the Pulumi SDK's index and runtime,
 * gRPC, the Kubernetes client) or ts-node, with the same verdict as tsc's module-by-module output. The stand-in
 * for the SDK's wire signatures holds the SDK's own values.
 */
import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { REPO_ROOT } from "../../core/paths";
import * as rpcStandIn from "../../cli/bundle/rpc";

const CLI = path.join(REPO_ROOT, "bin", "cli", "pko-guard.js");
const GUIDE = path.join(REPO_ROOT, "fixtures", "gitops-guide-example", "manifests");

describe("the CLI bundle", function () {
    this.timeout(120000);
    let tmp: string;
    before(() => {
        tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-bundle-"));
    });
    after(() => fs.rmSync(tmp, { recursive: true, force: true }));

    it("is what package.json's bin runs, and the package ships it", () => {
        const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8"));
        assert.strictEqual(path.resolve(REPO_ROOT, pkg.bin["pko-guard"]), CLI);
        assert.ok((pkg.files as string[]).includes("bin/"));
        assert.match(pkg.scripts.build, /bin\/cli\/bundle\/build\.js/);
        // One file: tsc's command modules are not what it loads.
        assert.ok(!/require\("\.\/check"\)|require\("\.\.\/core\//.test(fs.readFileSync(CLI, "utf8")));
    });

    it("holds the SDK's own wire signatures in its stand-in for @pulumi/pulumi/runtime/rpc", () => {
        const rpc = require("@pulumi/pulumi/runtime/rpc");
        for (const k of Object.keys(rpcStandIn)) assert.strictEqual((rpcStandIn as Record<string, string>)[k], rpc[k], k);
        assert.deepStrictEqual(Object.keys(rpcStandIn).sort(), ["specialArchiveSig", "specialAssetSig", "specialSecretSig", "specialSigKey"]);
    });

    it("runs check without the SDK's index or runtime, gRPC, the Kubernetes client or ts-node, with the module-by-module verdict", () => {
        const record = path.join(tmp, "loaded.json");
        const preload = path.join(tmp, "record.js");
        fs.writeFileSync(preload, `process.on("exit", () => require("fs").writeFileSync(${JSON.stringify(record)}, JSON.stringify(Object.values(require.cache).filter((m) => m.loaded).map((m) => m.filename))));\n`);
        const bundled = spawnSync(process.execPath, ["-r", preload, CLI, "check", GUIDE, "--report", `json=${path.join(tmp, "bundled.json")}`], { encoding: "utf8", cwd: tmp, timeout: 60000 });
        assert.strictEqual(bundled.status, 1, bundled.stderr);
        const loaded: string[] = JSON.parse(fs.readFileSync(record, "utf8"));
        const unwanted = loaded.filter((f) => /node_modules[\\/](@grpc|@kubernetes|ts-node|typescript)[\\/]|@pulumi[\\/]pulumi[\\/](index|runtime|automation)/.test(f));
        assert.deepStrictEqual(unwanted, []);
        assert.ok(loaded.length < 10, `${loaded.length} modules loaded: ${loaded.slice(0, 10).join(", ")}`);
        // The same findings as tsc's output of the same sources (cli/check.js, module by module).
        const plain = spawnSync(
            process.execPath,
            [
                "-e",
                `require(${JSON.stringify(path.join(REPO_ROOT, "bin", "core", "fatal.js"))}); const { runCheck } = require(${JSON.stringify(path.join(REPO_ROOT, "bin", "cli", "check.js"))}); process.stdout.write(JSON.stringify(runCheck({ paths: [${JSON.stringify(GUIDE)}], failOnAdvisory: false }).subject.findings))`,
            ],
            { encoding: "utf8", cwd: tmp, timeout: 60000 },
        );
        assert.strictEqual(plain.status, 0, plain.stderr);
        const strip = (fs: { policy: string; resource: string; message: string; line?: number }[]) => fs.map((f) => `${f.policy} ${f.resource} ${f.line} ${f.message}`).sort();
        const bundledFindings = JSON.parse(fs.readFileSync(path.join(tmp, "bundled.json"), "utf8")).projects[0].findings;
        assert.ok(bundledFindings.length > 0);
        assert.deepStrictEqual(strip(bundledFindings), strip(JSON.parse(plain.stdout)));
    });
});
