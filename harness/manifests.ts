/**
 * Validation of rendered Kubernetes manifests with a real JSON-schema validator (ajv):
 * - PKO Stack objects against the Stack CRD's OpenAPI v3 schema, generated from the operator's own Go
 *   API types with controller-gen at a pinned version (toolchain/schemas, `npm run setup`);
 * - Secrets, ServiceAccounts and RBAC objects against the Kubernetes OpenAPI (swagger) definitions of a
 *   pinned Kubernetes release.
 * Objects of other kinds are reported as not validated (never as valid).
 */
import Ajv, { ValidateFunction } from "ajv";
import AjvDraft04 from "ajv-draft-04";
import * as fs from "fs";
import * as path from "path";
import * as YAML from "yaml";
import { BadInputError } from "./expect";
import { REPO_ROOT } from "./paths";

export const SCHEMA_DIR = path.join(REPO_ROOT, ".cache", "toolchain", "schemas");

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

export interface ManifestResult {
    file: string;
    kind: string;
    name: string;
    /** "valid", "invalid" or "unvalidated" (no schema for the kind). */
    status: "valid" | "invalid" | "unvalidated";
    errors: string[];
}

export class ManifestValidator {
    private readonly stackSchemas = new Map<string, ValidateFunction>();
    private readonly k8s = new Map<string, ValidateFunction>();

    constructor(schemaDir: string = SCHEMA_DIR) {
        const need = ["pko-stack-v1.json", "kubernetes-swagger.json"];
        for (const f of need) {
            if (!fs.existsSync(path.join(schemaDir, f))) {
                throw new BadInputError(`schema ${path.join(schemaDir, f)} not found; run: npm run setup`);
            }
        }
        const crdAjv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
        for (const k of ["x-kubernetes-preserve-unknown-fields", "x-kubernetes-int-or-string", "x-kubernetes-embedded-resource", "x-kubernetes-list-type", "x-kubernetes-list-map-keys", "x-kubernetes-map-type", "x-kubernetes-validations"]) {
            crdAjv.addKeyword(k);
        }
        for (const version of ["v1", "v1alpha1"]) {
            const file = path.join(schemaDir, `pko-stack-${version}.json`);
            if (fs.existsSync(file)) this.stackSchemas.set(`pulumi.com/${version}`, crdAjv.compile(JSON.parse(fs.readFileSync(file, "utf8"))));
        }
        const swagger = JSON.parse(fs.readFileSync(path.join(schemaDir, "kubernetes-swagger.json"), "utf8"));
        const k8sAjv = new AjvDraft04({ strict: false, allErrors: true, validateFormats: false });
        for (const k of ["x-kubernetes-group-version-kind", "x-kubernetes-patch-merge-key", "x-kubernetes-patch-strategy", "x-kubernetes-list-type", "x-kubernetes-list-map-keys", "x-kubernetes-map-type", "x-kubernetes-unions"]) {
            k8sAjv.addKeyword(k);
        }
        k8sAjv.addSchema({ id: "k8s", definitions: swagger.definitions }, "k8s");
        for (const [gvk, def] of Object.entries(K8S_DEFINITIONS)) {
            if (swagger.definitions[def]) this.k8s.set(gvk, k8sAjv.compile({ $ref: `k8s#/definitions/${def}` }));
        }
    }

    /** Validates one parsed object. */
    validate(file: string, doc: Record<string, unknown>): ManifestResult {
        const apiVersion = String(doc.apiVersion ?? "");
        const kind = String(doc.kind ?? "");
        const name = String((doc.metadata as { name?: unknown } | undefined)?.name ?? "");
        const validator = kind === "Stack" ? this.stackSchemas.get(apiVersion) : this.k8s.get(`${apiVersion}/${kind}`);
        if (!validator) return { file, kind: `${apiVersion}/${kind}`, name, status: "unvalidated", errors: [] };
        // The CRD schema covers the object as the API server sees it; metadata is validated by the server itself.
        const ok = validator(doc);
        return {
            file,
            kind: `${apiVersion}/${kind}`,
            name,
            status: ok ? "valid" : "invalid",
            errors: ok ? [] : (validator.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message}`),
        };
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
                const value = doc.toJS();
                if (value && typeof value === "object") out.push(this.validate(path.relative(dir, file), value as Record<string, unknown>));
            }
        }
        return out;
    }
}
