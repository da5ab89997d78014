/**
 * What the bundled pack entry gives `@pulumi/policy` when it asks for `@pulumi/pulumi` (the bundler
 * aliases that bare import here). The SDK's index loads everything, the Automation API included, which
 * is most of a policy pack's start-up; `@pulumi/policy` only takes `asset` and `Output` from it
 * (test/integration/pack/alias.spec.ts scans its code so an SDK upgrade that takes more fails a test). Both come
 * from the same module files the index re-exports, so identity (instanceof, isInstance) is unchanged.
 * An SDK without these subpaths gets the full index: slower, never broken.
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
