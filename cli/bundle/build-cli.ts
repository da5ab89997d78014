/**
 * Builds the installed command, bin/cli/pko-guard.js (package.json's `bin`), as esbuild bundles over tsc's output.
 * Start-up is what users feel on every `check`: one file instead of ~450 modules, and each command's code runs only
 * when that command does (esbuild keeps `import()`ed modules lazy). `check`, the command run on every commit, has a
 * bundle of its own (./check-entry.ts), less than half the whole one: a `check` run reads, compiles and caches (and
 * its start-up snapshot holds) only what `check` can reach. What only other commands use (the Pulumi SDK and
 * gRPC, the Kubernetes client) stays an ordinary require. The policy SDK's deserializer imports more than `check` uses,
 * so ./pulumi.ts, ./rpc.ts and ./policy-server.ts stand in for the bare `@pulumi/pulumi`, its runtime/rpc and its
 * analyzer server; test/integration/cli/bundle/bundle.spec.ts proves they agree with the SDK and that `check` loads
 * none of them.
 */
import { spawnSync } from "child_process";
import * as esbuild from "esbuild";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { BUNDLE_OPTIONS, POLICY_SDK_LOG, runBuild } from "../../support/bundling";
import { CLI_BUNDLE, CLI_CHECK_BUNDLE, CLI_ENTRY, REPO_ROOT as REPO } from "../../support/paths";
import { extended } from "../../support/shapes";
import { buildSnapshot } from "./snapshot-build";

const HERE = path.join(REPO, "cli", "bundle");
/** Where the build's warm-up run judges (a checkout has it; without it no cache is written until the first run). */
const WARM_UP = path.join(REPO, "fixtures", "gitops-guide-example", "manifests");

/** Packages only other commands load (or too large to carry): ordinary requires. */
const EXTERNAL = [
    "@kubernetes/client-node",
    "@grpc/grpc-js",
    "google-protobuf",
    "prom-client",
    "junit-report-builder",
    "ts-node",
    "typescript",
    "esbuild",
];

/** Stand-ins for what the policy SDK imports but `check` does not use (see the header). */
const cliResolve: esbuild.Plugin = {
    name: "pko-guard-cli",
    setup(build) {
        build.onResolve({ filter: /^[^./]|^\.\/server$|^\.\/policy-sdk$/ }, (args) => {
            if (path.isAbsolute(args.path)) return undefined;
            if (args.path === "./policy-sdk")
                return args.importer === path.join(REPO, "evaluation", "evaluate.ts")
                    ? { path: path.join(HERE, "bundled-policy-sdk.ts") }
                    : undefined;
            const fromPolicySdk = args.importer.includes(`${path.sep}@pulumi${path.sep}policy${path.sep}`);
            if (args.path === "./server")
                return fromPolicySdk ? { path: path.join(HERE, "policy-server.ts") } : undefined;
            if (args.path === "@pulumi/pulumi" && fromPolicySdk) return { path: path.join(HERE, "pulumi.ts") };
            if (args.path === "@pulumi/pulumi/runtime/rpc" && fromPolicySdk) return { path: path.join(HERE, "rpc.ts") };
            if (args.path === "@pulumi/pulumi" || args.path.startsWith("@pulumi/pulumi/"))
                return { path: args.path, external: true };
            if (EXTERNAL.some((p) => args.path === p || args.path.startsWith(`${p}/`)))
                return { path: args.path, external: true };
            return undefined;
        });
    },
};

/**
 * esbuild writes strings, templates and regular expressions in ASCII (its default charset), but keeps comments as
 * they are, and a few bundled libraries' comments hold typographic quotes. One character above Latin-1 makes V8
 * hold the whole 4 MB source as two bytes a character: twice the memory, and twice the start-up snapshot's bytes
 * to read and check. Outside comments there is none, so each such UTF-16 unit becomes `?` (same columns for the
 * source map).
 */
function asciiOnly(file: string): void {
    const text = fs.readFileSync(file, "utf8");
    if (/[^\x00-\x7f]/.test(text)) fs.writeFileSync(file, text.replace(/[^\x00-\x7f]/g, "?"));
}

/**
 * What `check` loads only for some inputs, bundled into a file of its own beside check's bundle and required from it
 * on first use, so that check's bundle (and its start-up snapshot) does not carry it: ajv, which compiles the rules'
 * config schemas when a policy config is given (evaluation/pack-config.ts).
 */
const CHECK_LATER: Record<string, string> = { ajv: "pko-guard-ajv.js" };

const checkLater: esbuild.Plugin = {
    name: "pko-guard-check-later",
    setup(build) {
        build.onResolve({ filter: /^ajv$/ }, (args) =>
            args.path in CHECK_LATER ? { path: `./${CHECK_LATER[args.path]}`, external: true } : undefined,
        );
    },
};

/** Each package of CHECK_LATER as a bundle of its own (CommonJS: the package's exports). */
async function bundleLater(): Promise<void> {
    for (const [pkg, file] of Object.entries(CHECK_LATER)) {
        const outfile = path.join(path.dirname(CLI_CHECK_BUNDLE), file);
        await esbuild.build(
            extended(BUNDLE_OPTIONS, {
                stdin: { contents: `module.exports = require(${JSON.stringify(pkg)});`, resolveDir: REPO },
                outfile,
                minifyWhitespace: true,
            }),
        );
        asciiOnly(outfile);
    }
}

/**
 * esbuild gives each module that imports a CommonJS module (`fs`, `path`, a bundled package) a namespace object of its
 * own: a getter closure for every export, made when the importing module loads (38 copies of `fs`'s hundred
 * exports in `check`'s bundle), all of which a start-up snapshot holds. This makes its helper share one namespace a
 * module, as ES modules do, made anew when the module has gained exports since (as CommonJS in a cycle can). Written
 * on the line of the helper after it, so the source map's lines stay right; a bundle without the helpers is an error
 * (another esbuild's), never silently left as it is.
 */
function sharedNamespaces(file: string): void {
    const text = fs.readFileSync(file, "latin1");
    const at = /^var __toCommonJS = .*;$/m.exec(text);
    if (at === null || !/^var __toESM = /m.test(text)) {
        if (!/__toESM\(/.test(text)) return;
        throw new Error(`${path.basename(file)}: esbuild's __toESM helper is not where it was`);
    }
    const share =
        " var __namespaces = [new WeakMap(), new WeakMap()], __toESMEach = __toESM; __toESM = (mod, isNodeMode) => {" +
        ' if (mod == null || (typeof mod !== "object" && typeof mod !== "function")) return __toESMEach(mod, isNodeMode);' +
        " const made = __namespaces[isNodeMode ? 1 : 0], n = __getOwnPropNames(mod).length, was = made.get(mod);" +
        " if (was !== undefined && was.n === n) return was.ns;" +
        " const ns = __toESMEach(mod, isNodeMode); made.set(mod, { ns, n }); return ns; };";
    const end = at.index + at[0].length;
    fs.writeFileSync(file, text.slice(0, end) + share + text.slice(end), "latin1");
}

/**
 * One CLI bundle: `entry` (every command's, or `check`'s) into `outfile`, in ASCII, without the whitespace and
 * comments a run need not read (a third of the text V8 reads, keeps, caches and a start-up snapshot holds); names
 * are kept, the source map maps to the sources (esbuild composes the first pass's map).
 */
async function bundleEntry(entry: string, outfile: string, plugins: esbuild.Plugin[] = []): Promise<void> {
    await esbuild.build(
        extended(BUNDLE_OPTIONS, {
            entryPoints: [entry],
            outfile,
            plugins: [...plugins, cliResolve],
            // Never on `check`'s path.
            logOverride: POLICY_SDK_LOG,
        }),
    );
    sharedNamespaces(outfile);
    await esbuild.build(
        extended(BUNDLE_OPTIONS, {
            entryPoints: [outfile],
            outfile,
            bundle: false,
            allowOverwrite: true,
            minifyWhitespace: true,
        }),
    );
    asciiOnly(outfile);
}

/** Runs the built command once with `args` in a folder of its own (a warm-up: the run writes its bundle's cache). */
function warmUp(args: (tmp: string) => string[]): void {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-build-"));
    try {
        spawnSync(process.execPath, [CLI_ENTRY, ...args(tmp)], {
            cwd: tmp,
            stdio: "ignore",
            timeout: 120000,
            env: extended(process.env, { GITHUB_ACTIONS: "" }),
        });
    } finally {
        fs.rmSync(tmp, { recursive: true, force: true });
    }
}

export async function bundleCli(): Promise<void> {
    await bundleEntry(path.join(REPO, "cli", "pko-guard.ts"), CLI_BUNDLE);
    await bundleEntry(path.join(HERE, "check-entry.ts"), CLI_CHECK_BUNDLE, [checkLater]);
    await bundleLater();
    await esbuild.build(extended(BUNDLE_OPTIONS, { entryPoints: [path.join(HERE, "launch.ts")], outfile: CLI_ENTRY }));
    // A stale cache is rejected by V8 anyway; remove it so that the warm-up runs write fresh ones.
    for (const f of fs.readdirSync(path.dirname(CLI_BUNDLE)))
        if (/^pko-guard(-check)?\.bundle\..*\.cache$/.test(f)) fs.rmSync(path.join(path.dirname(CLI_BUNDLE), f));
    if (fs.existsSync(WARM_UP))
        warmUp((tmp) => ["check", WARM_UP, "--report", `json=${path.join(tmp, "warm-up.json")}`]);
    // The whole bundle's cache, from a command that loads the rules (no repository needed).
    warmUp(() => ["rules"]);
    await buildSnapshot();
}

if (require.main === module) runBuild("cli", bundleCli);
