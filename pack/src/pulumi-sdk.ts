/**
 * What the bundled pack entry gives `@pulumi/policy` when it asks for `@pulumi/pulumi` (the bundler aliases that bare
 * import here).
 * The SDK's index loads everything (the Automation API too), most of a pack's start-up, while `@pulumi/policy` takes
 * only `asset` and `Output`; they come from the same module files, so instanceof holds.
 * test/integration/pack/alias.spec.ts fails if an SDK upgrade takes more; an SDK without these subpaths gets the full
 * index.
 */
function load(): { asset: unknown; Output: unknown } {
    try {
        const { Output } = require("@pulumi/pulumi/output") as { Output: unknown };
        return { asset: require("@pulumi/pulumi/asset") as unknown, Output };
    } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "MODULE_NOT_FOUND") throw e;
        return require("@pulumi/pulumi") as { asset: unknown; Output: unknown };
    }
}

const sdk = load();
export const asset = sdk.asset;
export const Output = sdk.Output;
