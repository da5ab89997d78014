/**
 * The CLI bundle's stand-in for the policy SDK's analyzer server module (`@pulumi/policy/server`, gRPC),
 * which the SDK's policy module imports for `PolicyPack` (./build-cli.ts). `check` evaluates in process and
 * serves nothing; should anything call `serve`, the real server is loaded then.
 */
export function serve(...args: unknown[]): unknown {
    return (require("@pulumi/policy/server") as { serve: (...a: unknown[]) => unknown }).serve(...args);
}
