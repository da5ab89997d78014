/**
 * Generated YAML documents for the differential test of the decoder (kube-yaml.spec.ts): block and flow
 * collections nested, YAML 1.1 scalars (booleans, numbers in every base, infinities, timestamps), tags,
 * anchors and aliases (also as keys), merge keys, explicit keys, repeated keys and block scalars. Most are
 * refused by go-yaml; what matters is that pko-guard refuses or decodes exactly the same ones.
 * Deterministic: the same seed gives the same documents.
 */
const SCALARS = [
    "yes",
    "No",
    "on",
    "OFF",
    "y",
    "n",
    "true",
    "~",
    "null",
    "",
    "0x1F",
    "0o17",
    "017",
    "1_000",
    "+12",
    "-0",
    "1e3",
    ".5",
    "1.",
    "-.inf",
    ".NaN",
    "2001-12-14",
    "2001-12-14t21:59:43.10-05:00",
    "12:30:00",
    "190:20:30",
    "'quoted'",
    '"dq\\tx"',
    '"\\/"',
    "a b",
    "a:b",
    "a #c",
    "-",
    "--",
    "!!str 1",
    "!!int '7'",
    "!!bool yes",
    "!!float 1",
    "!!null ''",
    "!!binary aGVsbG8=",
    "!custom x",
    "0b101",
    "1:20",
    "9223372036854775808",
    "-9223372036854775809",
    "18446744073709551615",
    "0.1e+400",
    "'multi\n  line'",
    "|\n  block\n",
    ">-\n  folded\n",
];
const KEYS = ["a", "b", "yes", "on", "1", "0x1", "null", "~", "1.5", "'q'", '"k"', "<<", "a.b", "true", "y", "n"];

export function yamlDocuments(seed: number, count: number): string[] {
    let state = seed;
    const rnd = () => {
        state = (state * 1103515245 + 12345) & 0x7fffffff;
        return state / 0x7fffffff;
    };
    const pick = <T>(a: T[]): T => a[Math.floor(rnd() * a.length)];
    let anchors: string[] = [];
    const flow = (d: number): string => {
        const r = rnd();
        if (d > 2 || r < 0.4) {
            // go-yaml's lone `-` in a flow collection, more often than the scalar list would give it.
            if (rnd() < 0.05) return "-";
            const s = pick(SCALARS);
            return s.includes("\n") ? "x" : s;
        }
        const parts: string[] = [];
        const n = Math.floor(rnd() * 3);
        if (r < 0.7) {
            for (let i = 0; i < n; i++) parts.push(rnd() < 0.2 ? pick(KEYS) : `${pick(KEYS)}: ${flow(d + 1)}`);
            return `{${parts.join(", ")}}`;
        }
        for (let i = 0; i < n; i++) parts.push(rnd() < 0.15 ? `${pick(KEYS)}: ${flow(d + 1)}` : flow(d + 1));
        return `[${parts.join(", ")}]`;
    };
    const value = (d: number, ind: string): string => {
        const r = rnd();
        let pre = "";
        if (rnd() < 0.1) {
            const a = `a${Math.floor(rnd() * 4)}`;
            anchors.push(a);
            pre = `&${a} `;
        }
        if (rnd() < 0.08 && anchors.length) return ` *${pick(anchors)}`;
        if (rnd() < 0.05) pre += pick(["!!map ", "!!seq ", "!!str ", "!!omap ", "!!set "]);
        if (d > 3 || r < 0.35) {
            const s = pick(SCALARS);
            return " " + pre + (s.includes("\n") ? s.replace(/\n {2}/g, `\n${ind}  `) : s);
        }
        if (r < 0.5) return " " + pre + flow(d);
        let out = pre ? " " + pre.trim() : "";
        const n = 1 + Math.floor(rnd() * 3);
        for (let i = 0; i < n; i++) {
            if (r < 0.8) {
                const k =
                    rnd() < 0.05 && anchors.length
                        ? `*${pick(anchors)} `
                        : rnd() < 0.05
                          ? `? ${pick(KEYS)}\n${ind}  `
                          : pick(KEYS);
                out += `\n${ind}  ${k}:${value(d + 1, ind + "  ")}`;
            } else {
                out += `\n${ind}  -${value(d + 1, ind + "    ")}`;
            }
        }
        return out;
    };
    const doc = (): string => {
        anchors = [];
        let out = "";
        const n = 1 + Math.floor(rnd() * 4);
        for (let i = 0; i < n; i++) out += `${pick(KEYS)}:${value(0, "")}\n`;
        return out;
    };
    const docs: string[] = [];
    for (let i = 0; i < count; i++) docs.push(doc() + (rnd() < 0.3 ? "---\n" + doc() : ""));
    return docs;
}
