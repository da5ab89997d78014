/**
 * Effective RBAC permissions: whether a role's rules make whoever holds them cluster-admin, decided by
 * what the rules permit (as the API server's RBAC authorizer matches them), not by how they are spelled.
 *
 * Two kinds of power, three-valued ("maybe" when preview leaves a rule, or part of one, unknown):
 * - `all`: every verb on every resource. `*` in verbs, or every verb listed (get, list, watch, create,
 *   update, patch, delete, deletecollection), on `*` resources, possibly spread over several rules (the
 *   authorizer allows a request when any rule matches). Like the built-in `cluster-admin`, it is reported
 *   wherever it is bound.
 * - `escalation`: a permission that lets its holder grant itself cluster-admin. Kubernetes documents each
 *   as a privilege-escalation path (https://kubernetes.io/docs/concepts/security/rbac-good-practices/
 *   "Privilege escalation risks", and .../access-authn-authz/rbac/#privilege-escalation-prevention-and-bootstrapping):
 *   1. `escalate` or `bind` on `roles`/`clusterroles` (rbac.authorization.k8s.io): the authorizer's
 *      escalation check is skipped, so the holder can write a role with `*` on `*`, or bind
 *      `cluster-admin`, to itself.
 *   2. `impersonate` on `users`, `groups` or `serviceaccounts` (core group): the holder can act as the
 *      group `system:masters`, or as any account that has more.
 *   3. `create` on `serviceaccounts/token`: the holder can mint a token for any account in scope,
 *      including the controllers' accounts in `kube-system`.
 *   4. `create` on `pods`, or `create`/`update`/`patch` on workload controllers (deployments, daemonsets,
 *      statefulsets, replicasets, jobs, cronjobs, replicationcontrollers): a pod runs as any service account
 *      of its namespace and can read its token ("Workload creation" in the good-practices page), so in
 *      `kube-system` it becomes the controllers' accounts (several can escalate or bind).
 *   An escalation counts as cluster-admin when it holds cluster-wide (a ClusterRoleBinding) or in a
 *   privileged namespace (`PRIVILEGED_NAMESPACES`, via a RoleBinding there). In a RoleBinding in any other
 *   namespace it stays inside that namespace: the near miss of binding `admin` or `edit` to a Stack's
 *   account in its own namespace is not cluster-admin.
 *   5. `get`/`list`/`watch` on `secrets`: each returns a Secret's data, and service account token Secrets
 *      (created by hand or left from clusters older than 1.24) are other accounts' credentials ("Listing
 *      secrets" in the good-practices page).
 *   6. `get` or `create` on `nodes/proxy`: the kubelet's API runs commands in any pod of the node ("Access to
 *      proxy subresource of Nodes"; a websocket needs only `get`).
 *   7. `pods/exec`, `pods/attach` (`create`, or `get` for a websocket) and `pods/ephemeralcontainers`
 *      (`update`/`patch`): a shell in another pod holds that pod's service account token; in `kube-system`
 *      the controllers' accounts.
 *   8. `create`/`update`/`patch` on mutating or validating webhook configurations ("Essential admission
 *      controllers"): a webhook sees every object sent to the API server, and a mutating one rewrites them
 *      (a pod's service account, its volumes).
 *   9. CSR approval, three permissions together (possibly over several rules, `CSR_APPROVAL`): `create` on
 *      `certificatesigningrequests`, `update`/`patch` on their `approval`, and `approve` on the
 *      `kubernetes.io/kube-apiserver-client` signer (or every signer): the holder requests, approves and
 *      receives a client certificate for any user and group, `system:masters` among them ("CSRs and
 *      certificate issuing").
 * Not counted: `create` on persistentvolumes, an escalation only with pod creation (path 4); namespace label
 * changes (they weaken pod security admission, which RBAC does not decide).
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
