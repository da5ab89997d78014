/**
 * The installed command is a bundle (cli/bundle/build-cli.ts) run by a launcher with V8's code cache for it
 * (cli/bundle/launch.ts): the whole command's, and for `check` one of `check` alone; package.json's `bin` is the
 * launcher, `files` ships them all, the cache changes nothing but time (with, without, or a cache that does not fit),
 * and
 * `check` runs from it without loading what only other commands need (the Pulumi SDK's index and runtime,
 * gRPC, the Kubernetes client) or ts-node, with the same verdict as tsc's module-by-module output. The stand-in
 * for the SDK's wire signatures holds the SDK's own values.
 */
import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { CLI_BUNDLE, CLI_CHECK_BUNDLE, CLI_ENTRY, REPO_ROOT } from "../../../../support/paths";
import * as rpcStandIn from "../../../../cli/bundle/rpc";

const CLI = CLI_ENTRY;
const BUNDLE = CLI_BUNDLE;
/** The code cache of a bundle: its name with the V8 version and architecture. */
const cacheOf = (bundle: string) => bundle.replace(/\.js$/, `.${process.versions.v8}-${process.arch}.cache`);
const CACHE = cacheOf(CLI_CHECK_BUNDLE);
// Its Applications name another repository: every run here is `--offline` (reads nothing but the fixture, as
// runCheck without a fetch policy does), since these specs are about the bundle, not about fetching.
const GUIDE = path.join(REPO_ROOT, "fixtures", "gitops-guide-example", "manifests");

describe("the CLI bundle", function () {
    this.timeout(120000);
    let tmp: string;
    before(() => {
        tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-bundle-"));
    });
    after(() => fs.rmSync(tmp, { recursive: true, force: true }));

    it("is what package.json's bin runs (through its launcher), and the package ships it with its code cache", () => {
        const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8"));
        // bin names the launcher (written by every build), which runs the JS entry unless the snapshot fits.
        const launcher = path.resolve(REPO_ROOT, pkg.bin["pko-guard"]);
        assert.strictEqual(launcher, path.join(path.dirname(CLI), "pko-guard.sh"));
        assert.ok(fs.statSync(launcher).mode & 0o111, "the launcher is executable");
        assert.ok(fs.readFileSync(launcher, "utf8").includes(`exec node "$here/${path.basename(CLI)}" "$@"`));
        assert.ok((pkg.files as string[]).includes("bin/"));
        assert.match(pkg.scripts.build, /bin\/cli\/bundle\/build-cli\.js/);
        assert.match(fs.readFileSync(CLI, "utf8"), /pko-guard\.bundle/);
        assert.match(fs.readFileSync(CLI, "utf8"), /pko-guard-check\.bundle/);
        for (const bundle of [BUNDLE, CLI_CHECK_BUNDLE]) {
            // One file: tsc's command modules are not what it loads.
            assert.ok(
                !/require\("\.\/check"\)|require\("\.\.\/(support|evaluation|gitops|cluster|engine|reports|policies)\//.test(
                    fs.readFileSync(bundle, "utf8"),
                ),
            );
            assert.ok(fs.existsSync(cacheOf(bundle)), `npm run build writes ${path.basename(cacheOf(bundle))}`);
        }
        // `check`'s bundle holds no other command (its source map names the sources it holds).
        const sources = (JSON.parse(fs.readFileSync(`${CLI_CHECK_BUNDLE}.map`, "utf8")) as { sources: string[] })
            .sources;
        assert.ok(sources.some((f) => f.endsWith("cli/check.ts")));
        assert.deepStrictEqual(
            sources.filter((f) => /cli\/(gate|audit|test|webhook|rules|explain|init|doctor)\.ts$|\/harness\//.test(f)),
            [],
        );
    });

    it("runs the same with its code cache, without it, and with a cache that does not fit (which it then rewrites)", () => {
        // A copy of the installed command in a folder of its own, so that the build's cache is not touched.
        const pkg = path.join(tmp, "pkg");
        fs.mkdirSync(path.join(pkg, "bin", "cli"), { recursive: true });
        fs.copyFileSync(path.join(REPO_ROOT, "package.json"), path.join(pkg, "package.json"));
        for (const f of [CLI, BUNDLE, CLI_CHECK_BUNDLE])
            fs.copyFileSync(f, path.join(pkg, "bin", "cli", path.basename(f)));
        const copied = path.join(pkg, "bin", "cli", path.basename(CACHE));
        const run = (env: Record<string, string> = {}) => {
            const r = spawnSync(
                process.execPath,
                [path.join(pkg, "bin", "cli", "pko-guard.js"), "check", GUIDE, "--offline"],
                {
                    encoding: "utf8",
                    cwd: tmp,
                    timeout: 60000,
                    env: { ...process.env, GITHUB_ACTIONS: "", ...env },
                },
            );
            return `${r.status}\n${r.stdout}\n${r.stderr}`;
        };
        const reference = run({ PKO_GUARD_CODE_CACHE: "0" });
        assert.ok(!fs.existsSync(copied), "PKO_GUARD_CODE_CACHE=0 writes no cache");
        assert.match(reference, /^1\n/);
        fs.writeFileSync(copied, "not a code cache");
        assert.strictEqual(run(), reference);
        const rewritten = fs.readFileSync(copied);
        assert.notStrictEqual(rewritten.toString("latin1"), "not a code cache");
        assert.ok(rewritten.length > 1000);
        assert.strictEqual(run(), reference);
        // An accepted cache is not written again.
        assert.ok(fs.readFileSync(copied).equals(rewritten));
        assert.deepStrictEqual(
            fs.readdirSync(path.dirname(copied)).filter((f) => f.endsWith(".tmp")),
            [],
        );
    });

    it("holds the SDK's own wire signatures in its stand-in for @pulumi/pulumi/runtime/rpc", () => {
        const rpc = require("@pulumi/pulumi/runtime/rpc");
        for (const k of Object.keys(rpcStandIn))
            assert.strictEqual((rpcStandIn as Record<string, string>)[k], rpc[k], k);
        assert.deepStrictEqual(Object.keys(rpcStandIn).sort(), [
            "specialArchiveSig",
            "specialAssetSig",
            "specialSecretSig",
            "specialSigKey",
        ]);
    });

    it("runs check without the SDK's index or runtime, gRPC, the Kubernetes client or ts-node, with the module-by-module verdict", () => {
        const record = path.join(tmp, "loaded.json");
        const preload = path.join(tmp, "record.js");
        fs.writeFileSync(
            preload,
            `process.on("exit", () => require("fs").writeFileSync(${JSON.stringify(record)}, JSON.stringify(Object.values(require.cache).filter((m) => m.loaded).map((m) => m.filename))));\n`,
        );
        const bundled = spawnSync(
            process.execPath,
            ["-r", preload, CLI, "check", GUIDE, "--offline", "--report", `json=${path.join(tmp, "bundled.json")}`],
            { encoding: "utf8", cwd: tmp, timeout: 60000 },
        );
        assert.strictEqual(bundled.status, 1, bundled.stderr);
        const loaded: string[] = JSON.parse(fs.readFileSync(record, "utf8"));
        const unwanted = loaded.filter((f) =>
            /node_modules[\\/](@grpc|@kubernetes|ts-node|typescript)[\\/]|@pulumi[\\/]pulumi[\\/](index|runtime|automation)/.test(
                f,
            ),
        );
        assert.deepStrictEqual(unwanted, []);
        assert.ok(loaded.length < 10, `${loaded.length} modules loaded: ${loaded.slice(0, 10).join(", ")}`);
        // The same findings as tsc's output of the same sources (bin/cli/check.js, module by module).
        const plain = spawnSync(
            process.execPath,
            [
                "-e",
                `require(${JSON.stringify(path.join(REPO_ROOT, "bin", "support", "fatal.js"))}); const { runCheck } = require(${JSON.stringify(path.join(REPO_ROOT, "bin", "cli", "check.js"))}); runCheck({ paths: [${JSON.stringify(GUIDE)}], failOnAdvisory: false, repositories: [] }).then((r) => process.stdout.write(JSON.stringify(r.subject.findings)))`,
            ],
            { encoding: "utf8", cwd: tmp, timeout: 60000 },
        );
        assert.strictEqual(plain.status, 0, plain.stderr);
        const strip = (fs: { policy: string; resource: string; message: string; line?: number }[]) =>
            fs.map((f) => `${f.policy} ${f.resource} ${f.line} ${f.message}`).sort();
        const bundledFindings = JSON.parse(fs.readFileSync(path.join(tmp, "bundled.json"), "utf8")).projects[0]
            .findings;
        assert.ok(bundledFindings.length > 0);
        assert.deepStrictEqual(strip(bundledFindings), strip(JSON.parse(plain.stdout)));
    });

    it("keeps phase marks only when asked (PKO_GUARD_TIMINGS): without them it never loads perf_hooks", () => {
        const record = path.join(tmp, "builtins.json");
        const preload = path.join(tmp, "record-builtins.js");
        fs.writeFileSync(
            preload,
            `process.on("exit", () => require("fs").writeFileSync(${JSON.stringify(record)}, JSON.stringify(process.moduleLoadList)));\n`,
        );
        const marks = path.join(tmp, "marks.json");
        const run = (timings: boolean) => {
            const env: NodeJS.ProcessEnv = { ...process.env };
            delete env.PKO_GUARD_TIMINGS;
            if (timings) env.PKO_GUARD_TIMINGS = marks;
            const r = spawnSync(
                process.execPath,
                [
                    "-r",
                    preload,
                    CLI,
                    "check",
                    GUIDE,
                    "--offline",
                    "--report",
                    `json=${path.join(tmp, "marks-run.json")}`,
                ],
                { encoding: "utf8", cwd: tmp, env, timeout: 60000 },
            );
            assert.strictEqual(r.status, 1, r.stderr);
            return (JSON.parse(fs.readFileSync(record, "utf8")) as string[]).includes("NativeModule perf_hooks");
        };
        assert.strictEqual(run(false), false, "a run without PKO_GUARD_TIMINGS loaded perf_hooks");
        assert.ok(!fs.existsSync(marks));
        assert.strictEqual(run(true), true);
        const written = JSON.parse(fs.readFileSync(marks, "utf8"));
        for (const phase of ["bootstrapComplete", "command", "parsed", "judged", "reported", "exit"])
            assert.strictEqual(typeof written[phase], "number", phase);
        assert.ok(
            written.bootstrapComplete < written.command &&
                written.command <= written.parsed &&
                written.parsed <= written.judged &&
                written.judged <= written.reported &&
                written.reported <= written.exit,
        );
    });
});
