/**
 * Policy pack configuration, handled as the Pulumi engine handles `--policy-pack-config`: parse the
 * file (`"all"`, `"<policy>": "<level>"` or `{enforcementLevel, ...properties}`), start from every
 * policy's defaults (level and schema defaults), apply the file, then validate each policy's
 * properties against its config schema. The mock leg sends the result to the analyzer, as the engine
 * does; invalid config is bad input for both legs.
 */
import Ajv from "ajv";
import * as fs from "fs";
import { BadInputError } from "./errors";

export const LEVELS = ["advisory", "mandatory", "remediate", "disabled"] as const;
export type ConfigLevel = (typeof LEVELS)[number];

export interface PolicyConfigEntry {
    enforcementLevel?: ConfigLevel;
    properties?: Record<string, unknown>;
}

export type PackConfig = Record<string, PolicyConfigEntry>;

export interface PolicyMeta {
    name: string;
    enforcementLevel: ConfigLevel;
    configSchema?: { properties?: Record<string, Record<string, unknown>>; required?: string[] };
}

function isLevel(v: unknown): v is ConfigLevel {
    return typeof v === "string" && (LEVELS as readonly string[]).includes(v);
}

/** Parses a policy config document; throws BadInputError with one line on anything malformed. */
export function parsePackConfig(text: string, source: string): PackConfig {
    if (text.trim() === "") return {};
    let doc: unknown;
    try {
        doc = JSON.parse(text);
    } catch (e) {
        throw new BadInputError(`${source}: invalid JSON: ${(e as Error).message}`);
    }
    if (doc === null || typeof doc !== "object" || Array.isArray(doc)) {
        throw new BadInputError(`${source}: must be a JSON object of policy name -> level or settings`);
    }
    const out: PackConfig = {};
    for (const [name, value] of Object.entries(doc as Record<string, unknown>)) {
        if (name === "environments") continue;
        if (typeof value === "string") {
            if (!isLevel(value)) throw new BadInputError(`${source}: ${name}: ${JSON.stringify(value)} is not an enforcement level`);
            out[name] = { enforcementLevel: value };
        } else if (value !== null && typeof value === "object" && !Array.isArray(value)) {
            const { enforcementLevel, ...properties } = value as Record<string, unknown>;
            if (enforcementLevel !== undefined && !isLevel(enforcementLevel)) {
                throw new BadInputError(`${source}: ${name}.enforcementLevel: ${JSON.stringify(enforcementLevel)} is not an enforcement level`);
            }
            out[name] = {
                enforcementLevel: enforcementLevel as ConfigLevel | undefined,
                properties: Object.keys(properties).length > 0 ? properties : undefined,
            };
        } else {
            throw new BadInputError(`${source}: ${name}: must be an enforcement level or an object`);
        }
    }
    return out;
}

export function loadPackConfig(file: string): PackConfig {
    let text: string;
    try {
        text = fs.readFileSync(file, "utf8");
    } catch {
        throw new BadInputError(`${file}: cannot read policy config`);
    }
    return parsePackConfig(text, file);
}

const ajv = new Ajv({ allErrors: true, strict: false, useDefaults: false });

/**
 * Reconciles a parsed config with the pack's policies as the engine does and validates it.
 * Unknown policy names are rejected (the engine ignores them; here a typo must not pass silently).
 */
export function reconcilePackConfig(policies: PolicyMeta[], config: PackConfig, source: string): PackConfig {
    const known = new Set(policies.map((p) => p.name));
    for (const name of Object.keys(config)) {
        if (name !== "all" && !known.has(name)) {
            throw new BadInputError(`${source}: ${JSON.stringify(name)} is not a policy of this pack`);
        }
    }
    const result: PackConfig = {};
    for (const p of policies) {
        const defaults: Record<string, unknown> = {};
        for (const [k, s] of Object.entries(p.configSchema?.properties ?? {})) {
            if ("default" in s) defaults[k] = s.default;
        }
        result[p.name] = {
            enforcementLevel: config.all?.enforcementLevel ?? p.enforcementLevel,
            properties: Object.keys(defaults).length > 0 ? defaults : undefined,
        };
    }
    for (const [name, given] of Object.entries(config)) {
        if (name === "all") continue;
        const cur = result[name];
        result[name] = {
            enforcementLevel: given.enforcementLevel ?? cur.enforcementLevel,
            properties: given.properties ? { ...(cur.properties ?? {}), ...given.properties } : cur.properties,
        };
    }
    for (const p of policies) {
        if (!p.configSchema) continue;
        const validate = ajv.compile({ type: "object", ...p.configSchema });
        if (!validate(result[p.name].properties ?? {})) {
            const err = validate.errors?.[0];
            throw new BadInputError(`${source}: ${p.name}: ${err?.instancePath || "config"} ${err?.message ?? "is invalid"}`);
        }
    }
    return result;
}
