/**
 * The policy SDK's deserializer and unknown-checking proxy, as evaluation/evaluate.ts runs them. Run from tsc's output
 * or ts-node; the CLI bundle has its own (cli/bundle/bundled-policy-sdk.ts), where the bundler does what the stand-in
 * below does.
 */
export interface PolicySdk {
    deserializeProperties(struct: unknown, keepUnknowns: boolean): Record<string, unknown>;
    unknownCheckingProxy(v: unknown): Record<string, unknown>;
    UnknownValueError: new (...args: never[]) => Error;
}
let sdk: PolicySdk | undefined;

/**
 * The policy SDK's own deserializer and unknown-checking proxy, loaded on first use. The deserializer
 * requires the `@pulumi/pulumi` index only for its `asset` classes, and that index also loads the Automation
 * API (most of a second of start-up, which `pko-guard check` would pay on every run). Unless something
 * already loaded the index, it is stood in for by a module that serves `asset` from its own module and loads
 * the real index for anything else (after which the real index is what every later `require` gets).
 */
export function policySdk(): PolicySdk {
    if (sdk) return sdk;
    const index = require.resolve("@pulumi/pulumi");
    if (!require.cache[index]) {
        const Module = require("module") as typeof import("module");
        const standIn = new Module(index, module);
        standIn.filename = index;
        standIn.loaded = true;
        standIn.exports = new Proxy(
            {},
            {
                get(_t, key) {
                    if (key === "asset") return require("@pulumi/pulumi/asset") as unknown;
                    if (require.cache[index] === standIn) delete require.cache[index];
                    return (require("@pulumi/pulumi") as Record<string | symbol, unknown>)[key];
                },
            },
        );
        require.cache[index] = standIn;
    }
    const { deserializeProperties } = require("@pulumi/policy/deserialize") as Pick<PolicySdk, "deserializeProperties">;
    const { unknownCheckingProxy, UnknownValueError } = require("@pulumi/policy/proxy") as Omit<
        PolicySdk,
        "deserializeProperties"
    >;
    sdk = { deserializeProperties, unknownCheckingProxy, UnknownValueError };
    return sdk;
}
