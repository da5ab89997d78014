/**
 * The CLI bundle's stand-in for the bare `@pulumi/pulumi` that the policy SDK's deserializer imports
 * (./build-cli.ts): it uses `asset` (only for a value carrying the asset or archive signature) and `Output`
 * (only when serializing). Both come from the SDK's own module files when first read, so identity
 * (instanceof, isInstance) is the SDK's; the index itself (the Automation API, gRPC) is never loaded.
 */
module.exports = {
    get asset(): unknown {
        return require("@pulumi/pulumi/asset") as unknown;
    },
    get Output(): unknown {
        return (require("@pulumi/pulumi/output") as { Output: unknown }).Output;
    },
};
