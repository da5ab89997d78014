/**
 * Policy pack configuration, handled as the Pulumi engine handles `--policy-pack-config`: parse the
 * file, start from every policy's defaults (level and schema defaults), apply the file, then validate each policy's
 * properties against its config schema. Invalid config is bad input for both legs.
 */
import type Ajv from "ajv";
import type { ValidateFunction } from "ajv";
import * as fs from "fs";
import { BadInputError, BadInputsError } from "../support/errors";
import { didYouMean } from "../support/suggest";
import { unknownProperty } from "../policies/model/config";
import { isCalendarDate } from "../policies/model/waivers";
import { looksLikeCredential } from "../policies/model/credentials";
import { SETTINGS_POLICY, patternProblem } from "../policies/model/production";
import { policies } from "../policies/index";
import { extended } from "../support/shapes";

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
    /** Settings holding regular expressions (RE2), checked here before any preview (the rule's `about`). */
    patternSettings?: string[];
    /** Whether the policy reads the production settings of pko-guard-production (the rule's `about`). */
    readsProduction?: boolean;
    configSchema?: {
        properties?: Record<string, Record<string, unknown>>;
        required?: string[];
        additionalProperties?: unknown;
    };
}

/**
 * The offset of the first JSON syntax error in `text` (a small RFC 8259 scanner), or undefined when it is
 * valid. Node 20's JSON.parse messages give no position for many errors and quote the text instead.
 */
export function jsonErrorOffset(text: string): number | undefined {
    try {
        new JsonScanner(text).document();
        return undefined;
    } catch (e) {
        if (typeof e === "number") return Math.min(e, text.length);
        throw e;
    }
}

/** A scan of one JSON text; each step throws the offset of the first error it meets (caught by jsonErrorOffset). */
class JsonScanner {
    private i = 0;
    /** The containers open around the scan: iterative over them, so deep nesting cannot overflow the stack. */
    private readonly open: ("{" | "[")[] = [];

    constructor(private readonly text: string) {}

    /** One value, then every container's remaining members and its end, then nothing but white space. */
    document(): void {
        const text = this.text;
        this.value();
        for (;;) {
            this.ws();
            const top = this.open[this.open.length - 1];
            if (top === undefined) break;
            if (text[this.i] === (top === "{" ? "}" : "]")) {
                this.open.pop();
                this.i++;
                continue;
            }
            if (text[this.i] !== ",") this.fail();
            this.i++;
            this.ws();
            if (top === "{") this.key();
            this.value();
        }
        this.ws();
        if (this.i < text.length) this.fail();
    }

    private fail(): never {
        // eslint-disable-next-line @typescript-eslint/only-throw-error -- the offset, caught by the one caller
        throw this.i;
    }

    private ws(): void {
        while (this.i < this.text.length && " \t\n\r".includes(this.text[this.i])) this.i++;
    }

    /** A scalar, an empty container, or the opening of a container (left open, its first key read). */
    private value(): void {
        const text = this.text;
        for (;;) {
            this.ws();
            const c = text[this.i];
            if (c === "{" || c === "[") {
                this.i++;
                this.ws();
                if (text[this.i] === (c === "{" ? "}" : "]")) return void this.i++;
                this.open.push(c);
                if (c === "{") this.key();
                continue;
            }
            if (c === '"') this.string();
            else if (c === "t") this.literal("true");
            else if (c === "f") this.literal("false");
            else if (c === "n") this.literal("null");
            else if (c === "-" || (c !== undefined && c >= "0" && c <= "9")) this.number();
            else this.fail();
            return;
        }
    }

    private literal(word: string): void {
        if (!this.text.startsWith(word, this.i)) this.fail();
        this.i += word.length;
    }

    private string(): void {
        const text = this.text;
        this.i++; // the opening quote
        for (;;) {
            if (this.i >= text.length) this.fail();
            const c = text.charCodeAt(this.i);
            if (c === 0x22) return void this.i++;
            if (c < 0x20) this.fail();
            if (c === 0x5c) this.escape();
            else this.i++;
        }
    }

    /** A backslash escape: `\uXXXX` or one of `"\/bfnrt`; an error is at the character after the backslash. */
    private escape(): void {
        const text = this.text;
        const e = text[this.i + 1];
        if (e === "u") {
            if (!/^[0-9a-fA-F]{4}$/.test(text.slice(this.i + 2, this.i + 6))) {
                this.i++;
                this.fail();
            }
            this.i += 6;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) this.i += 2;
        else {
            this.i++;
            this.fail();
        }
    }

    private number(): void {
        const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(this.text.slice(this.i, this.i + 400));
        if (!m) this.fail();
        this.i += m[0].length;
    }

    /** An object member's key and its colon. */
    private key(): void {
        if (this.text[this.i] !== '"') this.fail();
        this.string();
        this.ws();
        if (this.text[this.i] !== ":") this.fail();
        this.i++;
    }
}

/**
 * Where a JSON parse failed, without its content: JSON.parse messages quote the text around the error,
 * and the wrong file (a credentials file, say) must never be echoed.
 */
export function jsonErrorPosition(text: string, _e?: unknown): string {
    const offset = jsonErrorOffset(text);
    if (offset === undefined) return "";
    const before = text.slice(0, offset);
    const line = before.split("\n").length;
    const column = before.length - before.lastIndexOf("\n");
    return ` at line ${line}, column ${column}`;
}

function isLevel(v: unknown): v is ConfigLevel {
    return typeof v === "string" && (LEVELS as readonly string[]).includes(v);
}

/** Parses a policy config document; throws BadInputError with one line on anything malformed. */
export function parsePackConfig(text: string, source: string): PackConfig {
    // A byte-order mark (editors on Windows write one) is not content.
    if (text.startsWith("\ufeff")) text = text.slice(1);
    if (text.trim() === "") return {};
    let doc: unknown;
    try {
        doc = JSON.parse(text);
    } catch (e) {
        throw new BadInputError(
            `${source}: not valid JSON${jsonErrorPosition(text, e)} (a policy pack config is a JSON object of policy name -> level or settings)`,
        );
    }
    if (doc === null || typeof doc !== "object" || Array.isArray(doc)) {
        throw new BadInputError(`${source}: must be a JSON object of policy name -> level or settings`);
    }
    const out: PackConfig = {};
    for (const [name, value] of Object.entries(doc as Record<string, unknown>)) {
        if (name === "environments") continue;
        if (typeof value === "string") {
            if (!isLevel(value))
                throw new BadInputError(`${source}: ${shown(name)}: not an enforcement level (${LEVELS.join(", ")})`);
            out[name] = { enforcementLevel: value };
        } else if (value !== null && typeof value === "object" && !Array.isArray(value)) {
            const { enforcementLevel, ...properties } = value as Record<string, unknown>;
            if (enforcementLevel !== undefined && !isLevel(enforcementLevel)) {
                throw new BadInputError(
                    `${source}: ${shown(name)}.enforcementLevel: not an enforcement level (${LEVELS.join(", ")})`,
                );
            }
            out[name] = {
                enforcementLevel: enforcementLevel,
                properties: Object.keys(properties).length > 0 ? properties : undefined,
            };
        } else {
            throw new BadInputError(`${source}: ${shown(name)}: must be an enforcement level or an object`);
        }
    }
    return out;
}

/**
 * What went wrong in a YAML file and where, without its content: the yaml library's error code and
 * position only (some of its messages quote the text, such as an alias name).
 */
export function yamlErrorPosition(e: unknown): string {
    const err = e as { code?: unknown; linePos?: { line: number; col: number }[] };
    const code = typeof err?.code === "string" ? ` (${err.code.toLowerCase().replace(/_/g, " ")})` : "";
    const at = err?.linePos?.[0] ? ` at line ${err.linePos[0].line}, column ${err.linePos[0].col}` : "";
    return `${code}${at}`;
}

/** A key of the config for a message: bounded, quoted if odd (keys, never values, are shown). */
function shown(name: string): string {
    if (looksLikeCredential(name)) return "(a name that looks like a credential, not shown)";
    return /^[A-Za-z0-9._-]{1,80}$/.test(name)
        ? name
        : JSON.stringify(name.length > 60 ? `${name.slice(0, 57)}...` : name);
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

let ajv: Ajv | undefined;
/** Each policy's compiled config schema (compiling is most of a small run's start-up: done once, on first use). */
const validators = new WeakMap<object, ValidateFunction>();

function validatorOf(schema: object): ValidateFunction {
    let v = validators.get(schema);
    if (!v) {
        ajv ??= new (require("ajv") as { default: typeof Ajv }).default({
            allErrors: true,
            strict: false,
            useDefaults: false,
        });
        v = ajv.compile({ type: "object", ...schema });
        validators.set(schema, v);
    }
    return v;
}

/**
 * Reconciles a parsed config with the pack's policies as the engine does and validates it.
 * Unknown policy names are rejected (the engine ignores them; here a typo must not pass silently), with the
 * nearest policy's name. Every problem of the file is found before it is refused: one is a BadInputError's line,
 * several a BadInputsError's (a line each, then how many).
 */
export function reconcilePackConfig(policies: PolicyMeta[], config: PackConfig, source: string): PackConfig {
    const problems: string[] = [];
    const fail = (message: string) => problems.push(message);
    rejectUnknownNames(policies, config, source, fail);
    const result = withDefaults(policies, config);
    for (const [name, given] of Object.entries(config)) {
        // "all" is applied by withDefaults; an unknown name is a problem already.
        if (name === "all" || !(name in result)) continue;
        const cur = result[name];
        result[name] = {
            enforcementLevel: given.enforcementLevel ?? cur.enforcementLevel,
            properties: given.properties ? extended(cur.properties ?? {}, given.properties) : cur.properties,
        };
    }
    for (const p of policies) {
        if (!p.configSchema) continue;
        const properties = result[p.name].properties;
        // A policy's schema defaults are valid (test/unit/evaluation/pack-config.spec.ts): the schema checks given
        // properties.
        if (config[p.name]?.properties !== undefined && !problems.some((m) => m.startsWith(`${source}: ${p.name}: `)))
            checkSchema(p, properties, source, fail);
        // A date the schema's pattern refused already has its line: one problem, one line.
        const refused = (i: number) =>
            problems.some((m) => m.startsWith(`${source}: ${p.name}: /waivers/${i}/expires `));
        checkWaiverDates(p, properties, source, (m, i) => {
            if (!refused(i)) fail(m);
        });
        checkPatterns(p, properties, source, fail);
    }
    requireSettingsForReaders(policies, result, source, fail);
    if (problems.length === 1) throw new BadInputError(problems[0]);
    if (problems.length > 1)
        throw new BadInputsError(problems, `${source}: ${problems.length} problems in the policy config`);
    return result;
}

/** Where a check reports a problem (reconcilePackConfig collects them all). */
type Fail = (message: string) => void;

/** Policy names the pack does not have, properties under `all`, properties a policy's schema does not have. */
function rejectUnknownNames(policies: PolicyMeta[], config: PackConfig, source: string, fail: Fail): void {
    const names = policies.map((p) => p.name);
    for (const name of Object.keys(config)) {
        if (name !== "all" && !names.includes(name)) {
            const hint = looksLikeCredential(name) ? "" : didYouMean(name, names);
            fail(`${source}: ${shown(name)} is not a policy of this pack${hint}`);
        }
    }
    // "all" sets the level of every policy and nothing else.
    for (const name of Object.keys(config.all?.properties ?? {})) {
        fail(
            `${source}: all: unknown property ${looksLikeCredential(name) ? "(a name that looks like a credential, not shown)" : shown(name)} ("all" takes only enforcementLevel)`,
        );
    }
    for (const p of policies) {
        const given = config[p.name]?.properties;
        const unknown = given
            ? unknownProperty(p.name, given, Object.keys(p.configSchema?.properties ?? {}))
            : undefined;
        if (unknown) fail(`${source}: ${p.name}: ${unknown}`);
    }
}

/** Every policy at its level (or `all`'s) with its schema's defaults, before the config's own entries. */
function withDefaults(policies: PolicyMeta[], config: PackConfig): PackConfig {
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
    return result;
}

function checkSchema(p: PolicyMeta, properties: Record<string, unknown> | undefined, source: string, fail: Fail): void {
    const validate = validatorOf(p.configSchema!);
    if (!validate(properties ?? {})) {
        const seen = new Set<string>();
        for (const err of validate.errors ?? [{ instancePath: "", message: "is invalid" }]) {
            const line = `${source}: ${p.name}: ${err.instancePath || "config"} ${err.message ?? "is invalid"}`;
            if (!seen.has(line)) fail(line);
            seen.add(line);
        }
    }
}

/** Waiver expiries must be real dates (the schema's pattern cannot tell 2026-02-30 from 2026-02-28). */
function checkWaiverDates(
    p: PolicyMeta,
    properties: Record<string, unknown> | undefined,
    source: string,
    fail: (message: string, index: number) => void,
): void {
    const waivers = properties?.waivers;
    if (!Array.isArray(waivers)) return;
    waivers.forEach((w, i) => {
        const expires = (w as { expires?: unknown })?.expires;
        if (typeof expires === "string" && !isCalendarDate(expires)) {
            fail(`${source}: ${p.name}: waivers[${i}].expires is not a calendar date (YYYY-MM-DD)`, i);
        }
    });
}

/** User patterns run with RE2 (linear time): reject what it cannot compile before any preview. */
function checkPatterns(
    p: PolicyMeta,
    properties: Record<string, unknown> | undefined,
    source: string,
    fail: Fail,
): void {
    for (const setting of p.patternSettings ?? []) {
        const value = properties?.[setting];
        const bad = Array.isArray(value)
            ? patternProblem(
                  setting,
                  value.filter((v): v is string => typeof v === "string"),
              )
            : undefined;
        if (bad) fail(`${source}: ${p.name}: ${bad}`);
    }
}

/** The settings policy may not be disabled while a rule that reads its settings is enabled. */
function requireSettingsForReaders(policies: PolicyMeta[], result: PackConfig, source: string, fail: Fail): void {
    const settings = policies.find((p) => p.name === SETTINGS_POLICY);
    if (!settings || result[SETTINGS_POLICY]?.enforcementLevel !== "disabled") return;
    const readers = policies
        .filter((p) => p.readsProduction && result[p.name]?.enforcementLevel !== "disabled")
        .map((p) => p.name);
    if (readers.length > 0) {
        fail(
            `${source}: ${SETTINGS_POLICY} is disabled but ${readers.join(", ")} ${readers.length === 1 ? "reads" : "read"} its production settings; set it to advisory or mandatory`,
        );
    }
}

/** The pack's policies as the config reconciler needs them (from the pack's own modules, closed schemas included). */
export function packPolicies(): PolicyMeta[] {
    return policies.map((p) => ({
        name: p.name,
        enforcementLevel: p.enforcementLevel ?? "advisory",
        configSchema: p.configSchema as PolicyMeta["configSchema"],
        patternSettings: p.about.patternSettings,
        readsProduction: p.about.readsProduction,
    }));
}

/**
 * The pack config of a run (the gate, `check`) or of a fixture (every harness leg): the file, or none for the
 * defaults, loaded and reconciled with the pack's policies as the engine does. The one way config is read:
 * BadInputError with one line on anything the pack would reject.
 */
export function packConfig(file?: string): PackConfig {
    return reconcilePackConfig(packPolicies(), file ? loadPackConfig(file) : {}, file ?? "default config");
}
