/**
 * The engine's wire form of values, as the mock leg handles them (secret and unknown sentinels kept), and the
 * refusal it raises where it cannot reproduce the engine or the Kubernetes provider.
 */
import { isRecord } from "../../support/records";

/** The engine's wire sentinels. */
export const UNKNOWN_WIRE = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
export const SIG_KEY = "4dabf18193072939515e22adb298388d";
export const SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270";

/** The mock leg cannot reproduce what the engine would do here: the fixture is an error, never a match. */
export class MockRefusal extends Error {}

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type Obj = { [k: string]: Json };

/** A map of wire values (isRecord, typed for the wire form). */
export function isObj(v: unknown): v is Obj {
    return isRecord(v);
}

export function isSecret(v: unknown): boolean {
    return isObj(v) && v[SIG_KEY] === SECRET_SIG;
}

export function makeSecret(v: Json): Obj {
    return { [SIG_KEY]: SECRET_SIG, value: v };
}

/** True when an unknown sentinel occurs anywhere in the value (the provider skips normalisation then). */
export function hasUnknown(v: unknown): boolean {
    if (v === UNKNOWN_WIRE) return true;
    if (Array.isArray(v)) return v.some(hasUnknown);
    if (isObj(v)) return Object.values(v).some(hasUnknown);
    return false;
}

/** A plain copy without secret markers (what `propMapToUnstructured` hands the provider's own code). */
export function unwrap(v: Json): Json {
    if (isSecret(v)) return unwrap((v as Obj).value);
    if (Array.isArray(v)) return v.map(unwrap);
    if (isObj(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, unwrap(x)]));
    return v;
}
