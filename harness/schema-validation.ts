/**
 * Validation of rendered Kubernetes manifests with a real JSON-schema validator (ajv): PKO objects against
 * PKO v2.9.0's CRD schemas (cluster/pko-crds.ts), Argo CD Applications against Argo CD's CRD, and Secrets,
 * ServiceAccounts and RBAC against a pinned Kubernetes OpenAPI; other kinds are reported as not validated.
 * JSON schema lets undeclared fields through while the API server prunes or (strict field validation, kubectl's
 * default) rejects them, so an undeclared field is an error here.
 */
import Ajv, { ValidateFunction } from "ajv";
import AjvDraft04 from "ajv-draft-04";
import * as fs from "fs";
import * as path from "path";
import * as YAML from "yaml";
import { BadInputError } from "../support/errors";
import { TOOLCHAIN_DIR, installCommand } from "../support/toolchain";
import { PKO_API_VERSION, loadCrdVersions, loadPkoCrds } from "../cluster/pko-crds";
import { APPLICATION_CRD } from "./argocd-finalizers";

export const SCHEMA_DIR = path.join(TOOLCHAIN_DIR, "schemas");

const K8S_DEFINITIONS: Record<string, string> = {
    "v1/Secret": "io.k8s.api.core.v1.Secret",
    "v1/ServiceAccount": "io.k8s.api.core.v1.ServiceAccount",
    "v1/Namespace": "io.k8s.api.core.v1.Namespace",
    "v1/ConfigMap": "io.k8s.api.core.v1.ConfigMap",
    "rbac.authorization.k8s.io/v1/Role": "io.k8s.api.rbac.v1.Role",
    "rbac.authorization.k8s.io/v1/RoleBinding": "io.k8s.api.rbac.v1.RoleBinding",
    "rbac.authorization.k8s.io/v1/ClusterRole": "io.k8s.api.rbac.v1.ClusterRole",
    "rbac.authorization.k8s.io/v1/ClusterRoleBinding": "io.k8s.api.rbac.v1.ClusterRoleBinding",
};

/** The versions the schemas come from: PKO's committed CRDs, and the Kubernetes release toolchain/install.sh wrote. */
export function schemaVersions(schemaDir: string = SCHEMA_DIR): { pko: string; kubernetes: string } {
    let kubernetes = "unknown";
    try {
        kubernetes = String(
            (JSON.parse(fs.readFileSync(path.join(schemaDir, "versions.json"), "utf8")) as { kubernetes?: unknown })
                .kubernetes ?? "unknown",
        );
    } catch {
        // reported as unknown
    }
    return { pko: PKO_API_VERSION, kubernetes };
}

const OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

export interface ManifestResult {
    file: string;
    kind: string;
    name: string;
    /** "valid", "invalid" or "unvalidated" (no schema for the kind). */
    status: "valid" | "invalid" | "unvalidated";
    errors: string[];
}

type Schema = Record<string, unknown>;

/**
 * Paths of the fields of `value` that `schema` does not declare. `resolve` follows `$ref`s; with
 * `opaque`, an object schema that declares no properties at all accepts anything (swagger's way of
 * writing free-form types), otherwise it accepts nothing (a structural CRD schema prunes it).
 */
function undeclaredFields(
    value: unknown,
    schema: Schema | undefined,
    at: string,
    resolve: (s: Schema) => Schema | undefined,
    opaque: boolean,
    out: string[],
): void {
    const s = schema ? resolve(schema) : undefined;
    if (!s || s["x-kubernetes-preserve-unknown-fields"] === true || s["x-kubernetes-int-or-string"] === true) return;
    if (Array.isArray(value)) {
        const items = s.items as Schema | undefined;
        if (items) value.forEach((v, i) => undeclaredFields(v, items, `${at}[${i}]`, resolve, opaque, out));
        return;
    }
    if (value === null || typeof value !== "object") return;
    const props: Record<string, Schema> = {};
    for (const part of [s, ...((s.allOf as Schema[] | undefined) ?? []).map(resolve)]) {
        Object.assign(props, (part?.properties as Record<string, Schema> | undefined) ?? {});
    }
    const additional = s.additionalProperties as Schema | boolean | undefined;
    if (Object.keys(props).length === 0 && additional === undefined && (opaque || s.type !== "object")) return;
    for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
        const path = at ? `${at}.${key}` : key;
        if (props[key]) undeclaredFields(v, props[key], path, resolve, opaque, out);
        else if (additional && typeof additional === "object")
            undeclaredFields(v, additional, path, resolve, opaque, out);
        else if (additional !== true) out.push(path);
    }
}

export class ManifestValidator {
    /** Custom resources' schemas (PKO's kinds, Argo CD's Application), keyed `apiVersion/kind`. */
    private readonly crdSchemas = new Map<string, { validate: ValidateFunction; schema: Schema }>();
    private readonly k8s = new Map<string, { validate: ValidateFunction; schema: Schema }>();
    private readonly definitions: Record<string, Schema>;
    /** ObjectMeta, which the API server checks for custom resources (a CRD schema leaves metadata open). */
    private readonly objectMeta: { validate: ValidateFunction; schema: Schema };

    constructor(schemaDir: string = SCHEMA_DIR, pkoCrdDir?: string) {
        if (!fs.existsSync(path.join(schemaDir, "kubernetes-swagger.json"))) {
            throw new BadInputError(
                `schema ${path.join(schemaDir, "kubernetes-swagger.json")} not found; run: ${installCommand("schemas")}`,
            );
        }
        const crdAjv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
        for (const k of [
            "x-kubernetes-preserve-unknown-fields",
            "x-kubernetes-int-or-string",
            "x-kubernetes-embedded-resource",
            "x-kubernetes-list-type",
            "x-kubernetes-list-map-keys",
            "x-kubernetes-map-type",
            "x-kubernetes-validations",
        ]) {
            crdAjv.addKeyword(k);
        }
        for (const [gvk, crd] of [...loadPkoCrds(pkoCrdDir), ...loadCrdVersions(APPLICATION_CRD)]) {
            if (crd.served) this.crdSchemas.set(gvk, { validate: crdAjv.compile(crd.schema), schema: crd.schema });
        }
        const swagger = JSON.parse(fs.readFileSync(path.join(schemaDir, "kubernetes-swagger.json"), "utf8")) as {
            definitions?: Record<string, Schema>;
        };
        this.definitions = swagger.definitions ?? {};
        const k8sAjv = new AjvDraft04({ strict: false, allErrors: true, validateFormats: false });
        for (const k of [
            "x-kubernetes-group-version-kind",
            "x-kubernetes-patch-merge-key",
            "x-kubernetes-patch-strategy",
            "x-kubernetes-list-type",
            "x-kubernetes-list-map-keys",
            "x-kubernetes-map-type",
            "x-kubernetes-unions",
        ]) {
            k8sAjv.addKeyword(k);
        }
        k8sAjv.addSchema({ id: "k8s", definitions: swagger.definitions }, "k8s");
        const entry = (def: string) => ({
            validate: k8sAjv.compile({ $ref: `k8s#/definitions/${def}` }),
            schema: { $ref: `#/definitions/${def}` },
        });
        for (const [gvk, def] of Object.entries(K8S_DEFINITIONS)) {
            if (this.definitions[def]) this.k8s.set(gvk, entry(def));
        }
        if (!this.definitions[OBJECT_META])
            throw new BadInputError(
                `${path.join(schemaDir, "kubernetes-swagger.json")} has no ${OBJECT_META}; run: ${installCommand("schemas")}`,
            );
        this.objectMeta = entry(OBJECT_META);
    }

    /** Validates one parsed object. */
    validate(file: string, doc: Record<string, unknown>): ManifestResult {
        const apiVersion = String(doc.apiVersion ?? "");
        const kind = String(doc.kind ?? "");
        const name = String((doc.metadata as { name?: unknown } | undefined)?.name ?? "");
        const gvk = `${apiVersion}/${kind}`;
        const isPko = /^(auto\.)?pulumi\.com\//.test(apiVersion);
        const custom = this.crdSchemas.get(gvk);
        const entry = custom ?? this.k8s.get(gvk);
        if (!entry) {
            // A PKO object without a schema is a failure (it is what this leg is for); other kinds are shown as unvalidated.
            if (isPko)
                return {
                    file,
                    kind: gvk,
                    name,
                    status: "invalid",
                    errors: [`no schema for ${gvk} in the PKO ${PKO_API_VERSION} CRDs`],
                };
            return { file, kind: gvk, name, status: "unvalidated", errors: [] };
        }

        const errors: string[] = [];
        const ajvErrors = (v: ValidateFunction, prefix: string) =>
            (v.errors ?? []).map((e) => `${prefix}${e.instancePath || "/"} ${e.message}`);
        if (!entry.validate(doc)) errors.push(...ajvErrors(entry.validate, ""));
        const undeclared: string[] = [];
        const resolve = (s: Schema): Schema | undefined => {
            const ref = s.$ref;
            return typeof ref === "string" ? this.definitions[ref.replace(/^#\/definitions\//, "")] : s;
        };
        if (custom) {
            // The CRD schema leaves metadata to the API server, which checks it as an ObjectMeta.
            const meta = this.objectMeta;
            if (!meta.validate(doc.metadata ?? {})) errors.push(...ajvErrors(meta.validate, "/metadata"));
            const { metadata, ...rest } = doc;
            undeclaredFields(rest, entry.schema, "", resolve, false, undeclared);
            undeclaredFields(metadata, meta.schema, "metadata", resolve, true, undeclared);
        } else {
            undeclaredFields(doc, entry.schema, "", resolve, true, undeclared);
        }
        for (const p of undeclared) {
            errors.push(`${p}: unknown field (the API server prunes it, or rejects it under strict field validation)`);
        }
        return { file, kind: gvk, name, status: errors.length === 0 ? "valid" : "invalid", errors };
    }

    /** Validates every YAML document under a rendered-manifests folder. */
    validateDirectory(dir: string): ManifestResult[] {
        const out: ManifestResult[] = [];
        if (!fs.existsSync(dir)) return out;
        const files = fs
            .readdirSync(dir, { recursive: true, withFileTypes: true })
            .filter((d) => d.isFile() && /\.ya?ml$/.test(d.name))
            .map((d) => path.join(d.parentPath ?? (d as unknown as { path: string }).path, d.name))
            .sort();
        for (const file of files) {
            for (const doc of YAML.parseAllDocuments(fs.readFileSync(file, "utf8"))) {
                if (doc.errors.length > 0) {
                    out.push({
                        file: path.relative(dir, file),
                        kind: "(YAML)",
                        name: "",
                        status: "invalid",
                        errors: doc.errors.map((e) => e.message.split("\n")[0]),
                    });
                    continue;
                }
                const value: unknown = doc.toJS();
                if (value && typeof value === "object")
                    out.push(this.validate(path.relative(dir, file), value as Record<string, unknown>));
            }
        }
        return out;
    }
}
