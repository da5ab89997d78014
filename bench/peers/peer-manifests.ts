/**
 * Generated manifest repositories for the peer comparison (bench only): PKO Stacks with the RBAC and
 * Secret objects around them, multi-document YAML files of ten objects under one folder a namespace.
 * Findings of the four core Stack rules are sprinkled in by group number, so that a repository of 100
 * objects already holds every kind of finding the peers' policies implement.
 */
import * as fs from "fs";
import * as path from "path";
import { stringify } from "yaml";

const SHA = "2b0889718d3e63feeb6079ccd5e4488d8601e353";
export const CORE_RULES = [
    "pko-stack-credentials-from-secrets",
    "pko-stack-no-cluster-admin",
    "pko-stack-destroy-on-finalize-nonprod",
    "pko-stack-prod-pinned-commit",
] as const;

export type Obj = {
    apiVersion: string;
    kind: string;
    metadata: { name: string; namespace?: string; labels?: Record<string, string> };
    [k: string]: unknown;
};

/** The identity the comparison uses: Kind/namespace/name (namespace empty for cluster-scoped objects). */
export function identity(o: Obj): string {
    return `${o.kind}/${o.metadata.namespace ?? ""}/${o.metadata.name}`;
}

const token = { type: "Secret", secret: { name: "pulumi-access-token", key: "accessToken" } };

function group(g: number): Obj[] {
    const ns = `team-${g % 50}`;
    const out: Obj[] = [];
    for (let j = 0; j < 7; j++) {
        const name = `app-${g}-${j}`;
        const prodByName = j === 0;
        const prodByLabel = j === 1;
        const spec: Record<string, unknown> = {
            stack: `acme/app-${g}/${prodByName ? "prod" : prodByLabel ? "web" : `dev-${j}`}`,
            projectRepo: "https://github.com/acme/app",
            serviceAccountName: `sa-${g}-${j}`,
            envRefs: { PULUMI_ACCESS_TOKEN: token },
        };
        if (prodByName || prodByLabel) {
            spec.commit = prodByLabel && g % 5 === 3 ? "abc1234" : SHA;
            if (prodByName && g % 7 === 1) spec.branch = "release";
            if (prodByName && g % 11 === 2) spec.destroyOnFinalize = true;
        } else {
            spec.branch = "main";
            spec.destroyOnFinalize = true;
        }
        if (j === 2 && g % 9 === 4)
            spec.envRefs = { PULUMI_ACCESS_TOKEN: { type: "Literal", literal: { value: "placeholder" } } };
        if (j === 3 && g % 13 === 5) spec.secrets = { dbPassword: "placeholder" };
        out.push({
            apiVersion: "pulumi.com/v1",
            kind: "Stack",
            metadata: {
                name,
                namespace: ns,
                labels: { env: prodByLabel ? "prod" : prodByName ? "production-candidate" : "dev" },
            },
            spec,
        });
    }
    out.push({ apiVersion: "v1", kind: "Secret", metadata: { name: `token-${g}`, namespace: ns }, type: "Opaque" });
    const admin = g % 8 === 6;
    out.push({
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRoleBinding",
        metadata: { name: `crb-${g}` },
        roleRef: {
            apiGroup: "rbac.authorization.k8s.io",
            kind: "ClusterRole",
            name: admin ? "cluster-admin" : "system:auth-delegator",
        },
        subjects: [{ kind: "ServiceAccount", name: `sa-${g}-${admin ? 2 : 0}`, namespace: ns }],
    });
    out.push({
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name: `rb-${g}`, namespace: ns },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "edit" },
        subjects: [{ kind: "ServiceAccount", name: `sa-${g}-1`, namespace: ns }],
    });
    return out;
}

/** n objects (a multiple of 10), in groups of ten. */
export function objects(n: number): Obj[] {
    const out: Obj[] = [];
    for (let g = 0; out.length < n; g++) out.push(...group(g));
    return out.slice(0, n);
}

/** Writes a repository of n objects under dir (created); one multi-document file a group. */
export function writeRepository(dir: string, n: number): Obj[] {
    const all = objects(n);
    for (let i = 0; i < all.length; i += 10) {
        const docs = all.slice(i, i + 10);
        const folder = path.join(dir, "manifests", String(docs[0].metadata.namespace ?? "cluster"));
        fs.mkdirSync(folder, { recursive: true });
        fs.writeFileSync(path.join(folder, `group-${i / 10}.yaml`), docs.map((d) => stringify(d)).join("---\n"));
    }
    return all;
}
