/**
 * go-yaml v2's reading of a scalar, as sigs.k8s.io/yaml decodes it (gitops/decode/kube-yaml.ts): its resolve table
 * and rules (booleans, nulls, Go's integer and float syntax, timestamps), the tags they give, and how a float map
 * key is written. Shared by the decoder's fast and exact paths.
 */
const TAG = "tag:yaml.org,2002:";
export const STR = `${TAG}str`;
export const BOOL = `${TAG}bool`;
export const INT = `${TAG}int`;
export const FLOAT = `${TAG}float`;
export const NULL = `${TAG}null`;
export const TIMESTAMP = `${TAG}timestamp`;
export const BINARY = `${TAG}binary`;
export const MERGE = `${TAG}merge`;

export type Resolved =
    | { tag: typeof STR | typeof TIMESTAMP | typeof BINARY | "other"; value: string }
    | { tag: typeof BOOL; value: boolean }
    | { tag: typeof NULL; value: null }
    | { tag: typeof INT; value: bigint; unsigned?: boolean }
    | { tag: typeof FLOAT; value: number }
    | { tag: typeof MERGE; value: "<<" };

/** go-yaml v2's resolve table: plain scalars with a fixed meaning. */
const MAP = new Map<string, Resolved>();
for (const s of ["y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"])
    MAP.set(s, { tag: BOOL, value: true });
for (const s of ["n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"])
    MAP.set(s, { tag: BOOL, value: false });
for (const s of ["", "~", "null", "Null", "NULL"]) MAP.set(s, { tag: NULL, value: null });
for (const s of [".nan", ".NaN", ".NAN"]) MAP.set(s, { tag: FLOAT, value: NaN });
for (const s of [".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"]) MAP.set(s, { tag: FLOAT, value: Infinity });
for (const s of ["-.inf", "-.Inf", "-.INF"]) MAP.set(s, { tag: FLOAT, value: -Infinity });
MAP.set("<<", { tag: MERGE, value: "<<" });

const YAML_STYLE_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

/** Go's strconv.ParseInt(s, 0, 64) / ParseUint(s, 0, 64) syntax (after go-yaml removed every `_`). */
function goParseInt(s: string, signed: boolean): bigint | undefined {
    const m = /^([+-]?)(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)$/.exec(s);
    if (!m || (!signed && m[1] !== "")) return undefined;
    let digits = m[2];
    if (/^0[0-7]+$/.test(digits)) digits = "0o" + digits.slice(1);
    const v = (m[1] === "-" ? -1n : 1n) * BigInt(digits.toLowerCase());
    return signed ? (v >= INT64_MIN && v <= INT64_MAX ? v : undefined) : v <= UINT64_MAX ? v : undefined;
}

/** Go's strconv.ParseFloat(s, 64) for the syntax go-yaml hands it; undefined where Go returns an error. */
function goParseFloat(s: string): number | undefined {
    const v = Number(s);
    return Number.isFinite(v) ? v : undefined;
}

/** go-yaml v2's parseTimestamp: whether a plain scalar reads as a timestamp (it then stays a string). */
function isTimestamp(s: string): boolean {
    if (!/^[0-9]{4}-/.test(s)) return false;
    const d = "([0-9]{1,2})";
    const frac = "(\\.[0-9]+)?";
    return (
        new RegExp(`^[0-9]{4}-${d}-${d}$`).test(s) ||
        new RegExp(`^[0-9]{4}-${d}-${d} ${d}:${d}:${d}${frac}$`).test(s) ||
        new RegExp(`^[0-9]{4}-${d}-${d}[Tt]${d}:${d}:${d}${frac}(Z|[+-][0-9]{2}:[0-9]{2})$`).test(s)
    );
}

/** go-yaml v2's resolve(tag, in): the tag and value a scalar gets ("" tag: a plain scalar without one). */
export function resolve(tag: string, s: string): Resolved {
    const resolvable =
        tag === "" || tag === STR || tag === BOOL || tag === INT || tag === FLOAT || tag === NULL || tag === TIMESTAMP;
    if (!resolvable) return { tag: tag === BINARY ? BINARY : "other", value: s };
    const r = resolveImplicit(tag, s);
    if (tag === "" || tag === r.tag || tag === STR) return r;
    if (tag === FLOAT && r.tag === INT) return { tag: FLOAT, value: Number(r.value) };
    throw new Error(`cannot decode a ${short(r.tag)} value as a ${short(tag)}`);
}

function short(tag: string): string {
    return tag.startsWith(TAG) ? "!!" + tag.slice(TAG.length) : tag;
}

export function resolveImplicit(tag: string, s: string): Resolved {
    const c = s === "" ? "" : s[0];
    const hint =
        s === ""
            ? "N"
            : /[0-9]/.test(c)
              ? "D"
              : c === "+" || c === "-"
                ? "S"
                : "yYnNtTfFoO~".includes(c)
                  ? "M"
                  : c === "."
                    ? "."
                    : "";
    if (hint === "" || tag === STR) return { tag: STR, value: s };
    const known = MAP.get(s);
    if (known) return known;
    if (hint === ".") {
        if (/^\.[0-9]+([eE][-+]?[0-9]+)?$/.test(s)) {
            const f = goParseFloat(s);
            if (f !== undefined) return { tag: FLOAT, value: f };
        }
    } else if (hint === "D" || hint === "S") {
        if ((tag === "" || tag === TIMESTAMP) && isTimestamp(s)) return { tag: TIMESTAMP, value: s };
        const plain = s.replace(/_/g, "");
        const i = goParseInt(plain, true);
        if (i !== undefined) return { tag: INT, value: i };
        const u = goParseInt(plain, false);
        if (u !== undefined) return { tag: INT, value: u, unsigned: true };
        if (YAML_STYLE_FLOAT.test(plain)) {
            const f = goParseFloat(plain);
            if (f !== undefined) return { tag: FLOAT, value: f };
        }
        if (plain.startsWith("0b") && /^[01]+$/.test(plain.slice(2))) {
            const v = BigInt("0b" + plain.slice(2));
            if (v <= INT64_MAX) return { tag: INT, value: v };
            if (v <= UINT64_MAX) return { tag: INT, value: v, unsigned: true };
        } else if (plain.startsWith("-0b") && /^[01]+$/.test(plain.slice(3))) {
            const v = -BigInt("0b" + plain.slice(3));
            if (v >= INT64_MIN) return { tag: INT, value: v };
        }
    }
    return { tag: STR, value: s };
}

/** Go's strconv.FormatFloat(f, 'g', -1, 32): how sigs.k8s.io/yaml writes a float map key. */
export function formatFloat32g(f: number): string {
    if (Number.isNaN(f)) return ".nan";
    if (f === Infinity) return ".inf";
    if (f === -Infinity) return "-.inf";
    const x = Math.fround(f);
    if (x === Infinity) return ".inf"; // Go: +Inf, which sigs.k8s.io/yaml writes as .inf
    if (x === -Infinity) return "-.inf";
    if (x === 0) return Object.is(x, -0) ? "-0" : "0";
    let exp = "";
    for (let p = 1; p <= 9; p++) {
        exp = x.toExponential(p - 1);
        if (Math.fround(Number(exp)) === x) break;
    }
    // exp is d[.ddd]e±N: the shortest digits that read back as the same float32. Go's %g for the shortest
    // precision switches to the exponent form below 1e-4 and from 1e6.
    const [mant, e] = exp.split("e");
    const neg = mant.startsWith("-");
    const digits = mant.replace("-", "").replace(".", "");
    const e10 = Number(e);
    if (e10 >= -4 && e10 < 6) return formatFixed(neg, digits, e10);
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const ee = Math.abs(e10) < 10 ? `0${Math.abs(e10)}` : String(Math.abs(e10));
    return `${neg ? "-" : ""}${m}e${e10 < 0 ? "-" : "+"}${ee}`;
}

function formatFixed(neg: boolean, digits: string, e10: number): string {
    let s: string;
    if (e10 < 0) s = "0." + "0".repeat(-e10 - 1) + digits;
    else if (digits.length <= e10 + 1) s = digits + "0".repeat(e10 + 1 - digits.length);
    else s = digits.slice(0, e10 + 1) + "." + digits.slice(e10 + 1);
    return (neg ? "-" : "") + s;
}
