import * as assert from "assert";
import Ajv from "ajv";
import * as fs from "fs";
import * as path from "path";
import * as YAML from "yaml";

/**
 * The Flux objects of the Flux fixtures are what Flux's controllers accept: each is valid against the
 * openAPIV3Schema of its kind and version in the CRDs committed under schemas/flux/ (taken from the controllers'
 * releases by schemas/flux/generate.sh), so the fixtures exercise check on objects Flux would apply.
 */
const ROOT = path.resolve(__dirname, "../../../..");
const SCHEMAS = path.join(ROOT, "schemas", "flux");
const FLUX_GROUPS = /^(source|kustomize|helm)\.toolkit\.fluxcd\.io\//;

function crdSchemas(): Map<string, object> {
    const out = new Map<string, object>();
    for (const dir of fs.readdirSync(SCHEMAS)) {
        const full = path.join(SCHEMAS, dir);
        if (!fs.statSync(full).isDirectory()) continue;
        for (const f of fs.readdirSync(full)) {
            const crd = YAML.parse(fs.readFileSync(path.join(full, f), "utf8"));
            for (const v of crd.spec.versions)
                out.set(`${crd.spec.group}/${v.name}/${crd.spec.names.kind}`, v.schema.openAPIV3Schema);
        }
    }
    return out;
}

function yamlFiles(dir: string): string[] {
    return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) return e.name === "templates" ? [] : yamlFiles(p);
        return /\.ya?ml$/.test(e.name) ? [p] : [];
    });
}

describe("Flux CRDs (schemas/flux)", () => {
    const schemas = crdSchemas();
    const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false, logger: false });

    it("hold every kind check reads, at the versions the fixtures use", () => {
        for (const key of [
            "source.toolkit.fluxcd.io/v1/GitRepository",
            "source.toolkit.fluxcd.io/v1/OCIRepository",
            "source.toolkit.fluxcd.io/v1/Bucket",
            "source.toolkit.fluxcd.io/v1/HelmRepository",
            "source.toolkit.fluxcd.io/v1/HelmChart",
            "kustomize.toolkit.fluxcd.io/v1/Kustomization",
            "helm.toolkit.fluxcd.io/v2/HelmRelease",
        ])
            assert.ok(schemas.has(key), key);
    });

    it("accept every Flux object of the Flux fixtures, and refuse a malformed one", () => {
        const fixtures = fs.readdirSync(path.join(ROOT, "fixtures")).filter((f) => f.startsWith("gitops-flux-"));
        let seen = 0;
        for (const fixture of fixtures) {
            for (const file of yamlFiles(path.join(ROOT, "fixtures", fixture, "manifests"))) {
                for (const doc of YAML.parseAllDocuments(fs.readFileSync(file, "utf8"))) {
                    const o = doc.toJS();
                    if (!o || typeof o.apiVersion !== "string" || !FLUX_GROUPS.test(o.apiVersion)) continue;
                    const schema = schemas.get(`${o.apiVersion}/${o.kind}`);
                    assert.ok(schema, `${file}: no CRD for ${o.apiVersion} ${o.kind}`);
                    const validate = ajv.compile(schema);
                    assert.ok(validate(o), `${path.relative(ROOT, file)}: ${ajv.errorsText(validate.errors)}`);
                    seen++;
                }
            }
        }
        assert.ok(seen >= 20, `only ${seen} Flux objects in the fixtures`);
        const bad = { apiVersion: "kustomize.toolkit.fluxcd.io/v1", kind: "Kustomization", spec: { prune: "yes" } };
        assert.strictEqual(ajv.compile(schemas.get("kustomize.toolkit.fluxcd.io/v1/Kustomization")!)(bad), false);
    });
});
