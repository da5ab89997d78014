/**
 * What the two esbuild bundles of `npm run build` share: the pack's (pack/build-pack.ts) and the installed
 * command's (cli/bundle/build-cli.ts). Both are CommonJS for the Node version package.json's engines name, with a
 * source map, built from the package root; and both are run as scripts that say a failure in one line and exit 1.
 */
import type * as esbuild from "esbuild";
import { REPO_ROOT } from "./paths";

/** The options every bundle of this package is built with. */
export const BUNDLE_OPTIONS: esbuild.BuildOptions = {
    bundle: true,
    platform: "node",
    target: "node20",
    format: "cjs",
    sourcemap: true,
    logLevel: "error",
    absWorkingDir: REPO_ROOT,
};

/**
 * A bundle that carries `@pulumi/policy`: it reads the pack's package.json at run time from the working directory
 * (a `require` esbuild cannot follow, by design).
 */
export const POLICY_SDK_LOG: esbuild.BuildOptions["logOverride"] = { "unsupported-require-call": "silent" };

/** Runs a build script's `build`; a failure is one line (`<what> build failed: ...`) on stderr and exit code 1. */
export function runBuild(what: string, build: () => Promise<void>): void {
    build().catch((e: Error) => {
        process.stderr.write(`${what} build failed: ${e.message.split("\n")[0]}\n`);
        process.exit(1);
    });
}
