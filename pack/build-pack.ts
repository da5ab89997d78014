/**
 * Builds the policy pack folder's code (pack/dist, part of `npm run build`, after tsc).
 * `dist/index.js` bundles index.ts, the rules and `@pulumi/policy`, with `@pulumi/pulumi` aliased to src/pulumi-sdk.ts
 * so the SDK's index is never loaded; dist/preload.js is src/preload.ts. Exits 1 with one line on failure.
 */
import * as esbuild from "esbuild";
import * as path from "path";
import { BUNDLE_OPTIONS, POLICY_SDK_LOG, runBuild } from "../support/bundling";
import { REPO_ROOT as REPO } from "../support/paths";

const PACK = path.join(REPO, "pack");
const ALIAS = path.join(PACK, "src", "pulumi-sdk.ts");

/** Bundles @pulumi/policy (and our code); aliases its bare @pulumi/pulumi; leaves every other package external. */
const leanResolve: esbuild.Plugin = {
    name: "pko-guard-lean",
    setup(build) {
        build.onResolve({ filter: /^[^./]/ }, (args) => {
            if (path.isAbsolute(args.path)) return undefined;
            if (args.path === "@pulumi/pulumi" && args.importer !== ALIAS) return { path: ALIAS };
            if (args.path === "@pulumi/policy" || args.path.startsWith("@pulumi/policy/")) return undefined;
            return { path: args.path, external: true };
        });
    },
};

/** Bundles a pack entry the lean way (also used by the benchmark for its comparison packs). */
export async function bundleLeanEntry(entry: string, outfile: string): Promise<void> {
    await esbuild.build({
        ...BUNDLE_OPTIONS,
        entryPoints: [entry],
        outfile,
        plugins: [leanResolve],
        logOverride: POLICY_SDK_LOG,
    });
}

async function main(): Promise<void> {
    await bundleLeanEntry(path.join(REPO, "index.ts"), path.join(PACK, "dist", "index.js"));
    await esbuild.build({
        ...BUNDLE_OPTIONS,
        entryPoints: [path.join(PACK, "src", "preload.ts")],
        outfile: path.join(PACK, "dist", "preload.js"),
        packages: "external",
    });
}

if (require.main === module) runBuild("pack", main);
