// Reads a CustomResourceDefinition (YAML) on stdin and writes it without the OpenAPI schema's descriptions
// (every `description` whose value is a string), with the `yaml` package pko-guard already depends on.
const YAML = require("yaml");
let text = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (c) => (text += c));
process.stdin.on("end", () => {
    const strip = (v) => {
        if (Array.isArray(v)) return v.map(strip);
        if (v === null || typeof v !== "object") return v;
        const out = {};
        for (const [k, x] of Object.entries(v)) if (!(k === "description" && typeof x === "string")) out[k] = strip(x);
        return out;
    };
    const docs = YAML.parseAllDocuments(text)
        .map((d) => d.toJS())
        .filter((d) => d !== null);
    process.stdout.write(docs.map((d) => YAML.stringify(strip(d), { lineWidth: 0 })).join("---\n"));
});
