/** Where things are: the package root, the policy pack folder and its entries. */
import * as fs from "fs";
import * as path from "path";

function isPackageRoot(dir: string): boolean {
    try {
        return (
            (JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")) as { name?: unknown }).name ===
            "pko-guard"
        );
    } catch {
        return false;
    }
}

/** The package root (the folder of the `pko-guard` package.json), run from source, from bin/ or installed. */
export const REPO_ROOT = (() => {
    for (let dir = __dirname; ; dir = path.dirname(dir)) {
        if (isPackageRoot(dir)) return dir;
        if (path.dirname(dir) === dir) return path.resolve(__dirname, "..");
    }
})();

/** The policy pack folder (PulumiPolicy.yaml, its own package.json): what `--policy-pack` and `pulumi policy publish` take. */
export const PACK_DIR = path.join(REPO_ROOT, "pack");
/** The pack's entry point: the lean bundle `npm run build` writes (pack/build-pack.ts). */
export const PACK_ENTRY = path.join(PACK_DIR, "dist", "index.js");
/** The same pack compiled by tsc alone, module by module (tests compare the two). */
export const PLAIN_PACK_ENTRY = path.join(REPO_ROOT, "bin", "index.js");
/**
 * The installed command (`bin` of package.json), as a user runs it: cli/bundle/launch.ts, which runs the CLI bundle
 * with V8's code cache for it; both built by `npm run build` (cli/bundle/build-cli.ts).
 */
export const CLI_ENTRY = path.join(REPO_ROOT, "bin", "cli", "pko-guard.js");
/** The CLI bundle the installed command runs (one file for every command). */
export const CLI_BUNDLE = path.join(REPO_ROOT, "bin", "cli", "pko-guard.bundle.js");
/** The bundle of `check` alone, which the installed command runs for `check` (cli/bundle/check-entry.ts). */
export const CLI_CHECK_BUNDLE = path.join(REPO_ROOT, "bin", "cli", "pko-guard-check.bundle.js");
/** The harness's command (`npm run harness`); built by `npm run build`. */
export const HARNESS_ENTRY = path.join(REPO_ROOT, "bin", "harness", "cli.js");
