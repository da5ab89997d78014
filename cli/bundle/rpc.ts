/**
 * The CLI bundle's stand-in for `@pulumi/pulumi/runtime/rpc` where the policy SDK's deserializer imports it
 * (./build-cli.ts): it reads only these signature constants of the wire format, and the real module loads gRPC
 * and the SDK's runtime. The spec test/integration/cli/bundle/bundle.spec.ts requires them to equal the SDK's own.
 */
export const specialSigKey = "4dabf18193072939515e22adb298388d";
export const specialAssetSig = "c44067f5952c0a294b673a41bacd8c17";
export const specialArchiveSig = "0def7320c3a5731c473e5ecbe6d01bc7";
export const specialSecretSig = "1b47061264138c4ac30d75fd1eb44270";
