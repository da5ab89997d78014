/**
 * The CLI bundle's evaluation/policy-sdk.ts (./build-cli.ts): the policy SDK's deserializer and unknown-checking proxy,
 * bundled, with the SDK modules they import and do not use stood in for at build time (no stand-in at run time).
 */
import type { PolicySdk } from "../../evaluation/policy-sdk";

let sdk: PolicySdk | undefined;

export function policySdk(): PolicySdk {
    if (sdk) return sdk;
    const { deserializeProperties } = require("@pulumi/policy/deserialize") as Pick<PolicySdk, "deserializeProperties">;
    const { unknownCheckingProxy, UnknownValueError } = require("@pulumi/policy/proxy") as Omit<
        PolicySdk,
        "deserializeProperties"
    >;
    sdk = { deserializeProperties, unknownCheckingProxy, UnknownValueError };
    return sdk;
}
