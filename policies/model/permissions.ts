/**
 * Effective RBAC permissions: whether a role's rules make whoever holds them cluster-admin, decided by
 * what the rules permit (as the API server's RBAC authorizer matches them), not by how they are spelled.
 * Three-valued ("maybe" when preview leaves a rule unknown). `all` is every verb on every resource, possibly
 * spread over several rules (the authorizer allows a request when any rule matches). `escalation` is a
 * permission Kubernetes documents as a privilege-escalation path (rbac-good-practices, "Privilege escalation
 * risks"): escalate/bind on roles, impersonate, minting tokens, pod or workload creation, reading Secrets,
 * nodes/proxy, exec/attach/ephemeral containers, admission webhook configurations, CSR approval. An escalation
 * is cluster-admin cluster-wide or in a privileged namespace (`PRIVILEGED_NAMESPACES`); elsewhere it stays in
 * its namespace, so `admin` or `edit` on a Stack's own namespace is not cluster-admin.
 */
import { Plain, UNKNOWN, get, list } from "./values";

type Tri = "yes" | "no" | "maybe";

/** Every verb the API server's resource requests use; listing all of them on `*` is `*`. */
export const ALL_VERBS: readonly string[] = [
    "get",
    "list",
    "watch",
    "create",
    "update",
    "patch",
    "delete",
    "deletecollection",
];

/** Namespaces where creating pods or tokens gives cluster-admin-equivalent access (the controllers' accounts live there). */
export const PRIVILEGED_NAMESPACES: ReadonlySet<string> = new Set(["kube-system"]);

/** One escalation path: the rule must match one of the groups, one of the resources and one of the verbs. */
interface Path {
    what: string;
    groups: string[];
    resources: string[];
    verbs: string[];
}

const WORKLOADS: Path[] = [
    { what: "create pods", groups: [""], resources: ["pods"], verbs: ["create"] },
    {
        what: "create or change workloads (pods run as any account of their namespace)",
        groups: ["apps"],
        resources: ["deployments", "daemonsets", "statefulsets", "replicasets"],
        verbs: ["create", "update", "patch"],
    },
    {
        what: "create or change workloads (pods run as any account of their namespace)",
        groups: ["batch"],
        resources: ["jobs", "cronjobs"],
        verbs: ["create", "update", "patch"],
    },
    {
        what: "create or change workloads (pods run as any account of their namespace)",
        groups: [""],
        resources: ["replicationcontrollers"],
        verbs: ["create", "update", "patch"],
    },
];

/**
 * The privilege-escalation risks of Kubernetes' "RBAC good practices" that one rule grants on its own (paths
 * 1-8 above). A subresource is also matched by a `*` resource with the same subresource, as the RBAC
 * authorizer matches it.
 */
export const ESCALATION_PATHS: readonly Path[] = [
    {
        what: "escalate or bind roles",
        groups: ["rbac.authorization.k8s.io"],
        resources: ["roles", "clusterroles"],
        verbs: ["escalate", "bind"],
    },
    {
        what: "impersonate users, groups or service accounts",
        groups: [""],
        resources: ["users", "groups", "serviceaccounts"],
        verbs: ["impersonate"],
    },
    {
        what: "create service account tokens",
        groups: [""],
        resources: ["serviceaccounts/token", "*/token"],
        verbs: ["create"],
    },
    // get, list and watch each return a Secret's data, service account token Secrets among them.
    {
        what: "read Secrets (service account tokens among them)",
        groups: [""],
        resources: ["secrets"],
        verbs: ["get", "list", "watch"],
    },
    // The kubelet's API behind nodes/proxy runs commands in every pod of the node (a websocket needs only get).
    {
        what: "reach the kubelet API through nodes/proxy (commands in any pod of a node)",
        groups: [""],
        resources: ["nodes/proxy", "*/proxy"],
        verbs: ["get", "create"],
    },
    // A shell in another pod holds that pod's service account token.
    {
        what: "run commands in or attach to other pods (pods/exec, pods/attach, ephemeral containers)",
        groups: [""],
        resources: [
            "pods/exec",
            "pods/attach",
            "pods/ephemeralcontainers",
            "*/exec",
            "*/attach",
            "*/ephemeralcontainers",
        ],
        verbs: ["create", "get", "update", "patch"],
    },
    // A mutating webhook rewrites any object (a pod's service account, its volumes); either kind sees them all.
    {
        what: "change admission webhooks (see or rewrite every object sent to the API server)",
        groups: ["admissionregistration.k8s.io"],
        resources: ["mutatingwebhookconfigurations", "validatingwebhookconfigurations"],
        verbs: ["create", "update", "patch"],
    },
    ...WORKLOADS,
];

/** Path 9: every part must be granted, by one rule or several of the same role. */
const CSR_APPROVAL: { what: string; parts: Path[] } = {
    what: "approve certificate signing requests (a client certificate for any user or group)",
    parts: [
        {
            what: "create CSRs",
            groups: ["certificates.k8s.io"],
            resources: ["certificatesigningrequests"],
            verbs: ["create"],
        },
        {
            what: "approve CSRs",
            groups: ["certificates.k8s.io"],
            resources: ["certificatesigningrequests/approval", "*/approval"],
            verbs: ["update", "patch"],
        },
        {
            what: "approve for the API server's client signer",
            groups: ["certificates.k8s.io"],
            resources: ["signers"],
            verbs: ["approve"],
        },
    ],
};

export interface Powers {
    all: Tri;
    escalation: Tri;
    /** The escalation path found (its `what`), for messages. */
    escalationWhat?: string;
}

/** Whether a rule's list (apiGroups, resources, verbs) matches one of `wanted`: `*` matches all. */
function matches(v: Plain, wanted: string[]): Tri {
    if (v === UNKNOWN) return "maybe";
    const items = list(v);
    if (items.includes("*") || wanted.some((w) => items.includes(w))) return "yes";
    return items.includes(UNKNOWN) ? "maybe" : "no";
}

function and(...ts: Tri[]): Tri {
    if (ts.includes("no")) return "no";
    return ts.every((t) => t === "yes") ? "yes" : "maybe";
}

const RANK: Record<Tri, number> = { no: 0, maybe: 1, yes: 2 };

/**
 * `resourceNames` narrows a rule to named objects: such a rule never matches `create` (the name is not
 * part of the request the authorizer sees) and never covers every object, so it does not count towards
 * `all` or towards creating pods, workloads or tokens. For `bind`/`escalate` it counts when it names
 * `cluster-admin`, for `impersonate` when it names `system:masters`; a role naming other objects is as
 * strong as those objects, which are judged where they are bound.
 */
const NAMED_ESCALATION: Record<string, string[]> = {
    bind: ["cluster-admin"],
    escalate: ["cluster-admin"],
    impersonate: ["system:masters"],
    // A signer's name, or every signer of its domain (`<domain>/*`, as the authorizer checks approve on signers).
    approve: ["kubernetes.io/kube-apiserver-client", "kubernetes.io/*"],
};

/** Whether a rule's resourceNames lets it match the path ("yes" when it has none). */
function namesAllow(names: Plain, p: Path): Tri {
    if (names === UNKNOWN) return "maybe";
    const items = list(names);
    if (items.length === 0) return "yes";
    const wanted = p.verbs.flatMap((v) => NAMED_ESCALATION[v] ?? []);
    if (wanted.length === 0) return "no";
    if (wanted.some((w) => items.includes(w))) return "yes";
    return items.includes(UNKNOWN) ? "maybe" : "no";
}

/** Whether one rule grants a path: its group, resource and verb, and its resourceNames allowing it. */
function pathMatch(rule: Plain, verbs: Plain, names: Plain, p: Path): Tri {
    return and(
        matches(get(rule, "apiGroups"), p.groups),
        matches(get(rule, "resources"), p.resources),
        matches(verbs, p.verbs),
        namesAllow(names, p),
    );
}

/** What a list of rules permits, as `Powers`. */
export function rulesPowers(rules: Plain): Powers {
    if (rules === UNKNOWN)
        return { all: "maybe", escalation: "maybe", escalationWhat: "its rules are unknown during preview" };
    // all: the union of the verbs of the rules that cover every resource (sure), or may (possible).
    const sure = new Set<string>();
    const possible = new Set<string>();
    let escalation: Tri = "no";
    let escalationWhat: string | undefined;
    // The best each part of CSR_APPROVAL is granted by any one rule.
    const csr: Tri[] = CSR_APPROVAL.parts.map(() => "no");
    const raise = (t: Tri, what: string) => {
        if (RANK[t] > RANK[escalation]) {
            escalation = t;
            escalationWhat = what;
        }
    };
    for (const rule of list(rules)) {
        if (rule === UNKNOWN) {
            possible.add("*");
            raise("maybe", "a rule unknown during preview");
            continue;
        }
        const names = get(rule, "resourceNames");
        const unnamed: Tri = names === UNKNOWN ? "maybe" : list(names).length === 0 ? "yes" : "no";
        const everyResource = and(matches(get(rule, "resources"), []), unnamed);
        const verbs = get(rule, "verbs");
        if (everyResource !== "no") {
            for (const v of verbs === UNKNOWN ? [UNKNOWN] : list(verbs)) {
                const verb = v === UNKNOWN ? "*" : typeof v === "string" ? v : undefined;
                if (verb === undefined) continue;
                possible.add(verb);
                if (everyResource === "yes" && v !== UNKNOWN) sure.add(verb);
            }
        }
        for (const p of ESCALATION_PATHS) raise(pathMatch(rule, verbs, names, p), p.what);
        CSR_APPROVAL.parts.forEach((p, i) => {
            const t = pathMatch(rule, verbs, names, p);
            if (RANK[t] > RANK[csr[i]]) csr[i] = t;
        });
    }
    raise(and(...csr), CSR_APPROVAL.what);
    const covers = (s: Set<string>) => s.has("*") || ALL_VERBS.every((v) => s.has(v));
    const all: Tri = covers(sure) ? "yes" : covers(possible) ? "maybe" : "no";
    return escalation === "no" ? { all, escalation } : { all, escalation, escalationWhat };
}

/**
 * Whether an escalation held through a binding makes its subjects cluster-admin: cluster-wide
 * (ClusterRoleBinding), or a RoleBinding in a privileged namespace (unknown namespace: maybe).
 */
export function escalationScope(bindingKind: string, namespace: string | typeof UNKNOWN | undefined): Tri {
    if (bindingKind === "ClusterRoleBinding") return "yes";
    if (namespace === UNKNOWN) return "maybe";
    return PRIVILEGED_NAMESPACES.has(namespace ?? "default") ? "yes" : "no";
}
