/**
 * rbac-no-cluster-admin-serviceaccount (advisory, stack-level)
 *
 * What it checks, why, the fix and what it reads: the `about` of its metadata below (`pko-guard explain`).
 */
import { governed } from "./model/examples";
import { RuleContext, RuleFinding, programRule } from "./model/policy";
import { ResourceLike } from "./model/stack";
import { Binding, Subject } from "./model/rbac/objects";
import { StackIndex } from "./model/rbac/stacks";
import { adminGrant, subjectCovers, subjectRejected } from "./model/rbac/grants";
import { describeBinding, describeBindingRole, describeSubject, quoteName } from "./model/rbac/describe";
import { UNKNOWN } from "./model/values";
import { judgedWith } from "./model/origin";

export const NAME = "rbac-no-cluster-admin-serviceaccount";

function isServiceAccountSubject(kind: unknown, name: unknown): boolean {
    if (kind === "ServiceAccount") return true;
    if (typeof name !== "string") return false;
    if (kind === "Group")
        return (
            name === "system:serviceaccounts" ||
            name === "system:authenticated" ||
            name.startsWith("system:serviceaccounts:")
        );
    return kind === "User" && name.startsWith("system:serviceaccount:");
}

/** Whether a subject may be a service account (or a group of them); unknown kinds or names may. */
function mayBeServiceAccount(s: Subject): boolean {
    if (s.kind === UNKNOWN || s.kind === undefined || s.kind === "") return true;
    if ((s.kind === "Group" || s.kind === "User") && (s.name === UNKNOWN || s.name === undefined || s.name === ""))
        return true;
    return isServiceAccountSubject(s.kind, s.name);
}

const key = (s: Subject) =>
    JSON.stringify([
        s.kind === UNKNOWN ? "?" : s.kind,
        s.name === UNKNOWN ? "?" : s.name,
        s.namespace === UNKNOWN ? "?" : s.namespace,
    ]);

/**
 * A binding's subjects the API server rejects (grants.ts `subjectRejected`): the binding is invalid, never applied,
 * and grants nothing; a patch's that its target has already are not reported again.
 */
function rejectedSubjects(binding: Binding, role: string): RuleFinding[] {
    if (binding.subjects === UNKNOWN) return [];
    const base = binding.patch?.base?.subjects;
    const inBase = new Set(base === undefined || base === UNKNOWN ? [] : base.map(key));
    return binding.subjects.flatMap((subject, index) =>
        subjectRejected(subject, binding) && !inBase.has(key(subject))
            ? [
                  {
                      message: `${describeBinding(binding)} is invalid: its subject ${describeSubject(subject)} (subjects[${index}]) is a ServiceAccount with no namespace, which the API server rejects in a ClusterRoleBinding, so the binding is never applied and grants ${role} to nobody; set subjects[${index}].namespace to the account's namespace (and bind a least-privilege role).`,
                      urn: binding.urn,
                      field: `subjects[${index}]`,
                  },
              ]
            : [],
    );
}

/**
 * When `check` judges several scopes (clusters) and a Stack of another one runs as the subject: a clause saying
 * so, since the account of that name there is another cluster's, which this binding does not reach (else "").
 * The scopes are named as the evaluation names them (quoted, escaped); at most two are named.
 */
function runsElsewhere(subject: Subject, binding: Binding, ctx: RuleContext): string {
    const others = ctx.scope?.others ?? [];
    const named = others.filter(({ resources }) => {
        const list = resources as ResourceLike[];
        const identities = ctx.views.stackIdentities(list);
        const stacks = new StackIndex([...identities, ...ctx.views.workspaceIdentities(list, identities.length)]);
        return stacks
            .candidates(subject, binding)
            .some((st) => subjectCovers(subject, binding, st.serviceAccount) !== "no");
    });
    if (named.length === 0) return "";
    const names = named.map((o) => o.name);
    const where =
        names.length > 2
            ? `${names.slice(0, 2).join(", ")} and ${names.length - 2} more scope(s)`
            : names.join(" and ");
    return ` (a PKO Stack ${where} runs as an account of that name, but this binding is not applied there)`;
}

export const rule = programRule(
    {
        name: NAME,
        about: {
            what: "no binding of the program gives `cluster-admin`, or a role with `*` verbs on `*` resources, to a\nservice account (or a group of them) that no PKO Stack of the program runs as; and a binding of a ClusterRole\nthat aggregates roles the program cannot show is pointed out.",
            why: 'any pod running as that account can do anything in the cluster; it is usually a leftover of a\n"cluster-admin for simplicity" setup. An aggregated role grows with whatever is installed later.',
            fix: "bind a least-privilege role, or remove the binding; for aggregation, use selectors only your\nown roles carry, or a role with explicit rules.",
            notes: [
                "Two findings:\n1. A ClusterRoleBinding or RoleBinding of the program (or a patch of one, judged merged) grants\n   `cluster-admin`, or a ClusterRole/Role whose rules, own or aggregated, give `*` verbs on `*`\n   resources, to a service account, or to a group of service accounts, that no PKO Stack of the\n   program runs as. (Bindings to a Stack's account are `pko-stack-no-cluster-admin`.)\n2. A binding gives a service account (any, a Stack's included) a ClusterRole that aggregates by label\n   selectors declared in this program, and the program's roles do not make it wildcard: the cluster\n   may hold ClusterRoles the program does not declare that match those selectors (built-in ones such\n   as those labelled `rbac.authorization.k8s.io/aggregate-to-admin`, or any install's), so the role's\n   effective rules cannot be judged from the program. The pack does not guess; it says so here. The\n   built-in `admin`/`edit`/`view` roles bound as they are do not raise this.",
                "A ClusterRoleBinding of such a role whose ServiceAccount subject has no namespace is reported as\ninvalid: the API server rejects it, so it is never applied and grants nothing (it is not a possible grant).",
            ],
            reads: [
                "pulumi.com/Stack",
                "core/ServiceAccount",
                "rbac.authorization.k8s.io/ClusterRole",
                "rbac.authorization.k8s.io/ClusterRoleBinding",
                "rbac.authorization.k8s.io/Role",
                "rbac.authorization.k8s.io/RoleBinding",
            ],
            readsProduction: false,
            patternSettings: [],
            example: governed,
        },
        enforcementLevel: "advisory",
        severity: "high",
        url: "https://kubernetes.io/docs/reference/access-authn-authz/rbac/#user-facing-roles",
    },
    (resources, _config, ctx) => {
        const model = ctx.views.rbacModel(resources);
        const identities = ctx.views.stackIdentities(resources);
        const stacks = new StackIndex([...identities, ...ctx.views.workspaceIdentities(resources, identities.length)]);
        const findings: RuleFinding[] = [];
        const wildcardReported = new Map<Binding, Set<string>>();
        const openReported = new Set<Binding>();
        for (const binding of model.bindings) {
            const grant = adminGrant(binding, model);
            const base = binding.patch?.base;
            if (grant.admin !== "no") findings.push(...rejectedSubjects(binding, describeBindingRole(binding, grant)));
            if (grant.admin === "yes" && binding.subjects !== UNKNOWN) {
                const role = describeBindingRole(binding, grant);
                const mine = new Set<string>();
                wildcardReported.set(binding, mine);
                const already = base ? wildcardReported.get(base) : undefined;
                for (const [index, subject] of binding.subjects.entries()) {
                    if (!isServiceAccountSubject(subject.kind, subject.name) || subjectRejected(subject, binding))
                        continue;
                    if (
                        stacks
                            .candidates(subject, binding)
                            .some((st) => subjectCovers(subject, binding, st.serviceAccount) !== "no")
                    )
                        continue;
                    mine.add(key(subject));
                    if (already?.has(key(subject))) continue;
                    const elsewhere = runsElsewhere(subject, binding, ctx);
                    findings.push({
                        message: `${describeBinding(binding)} grants ${role} to ${describeSubject(subject)}, which no PKO Stack ${judgedWith(binding.urn, ctx.scope?.name).of} runs as${elsewhere}; bind a least-privilege role or remove the binding.`,
                        urn: binding.urn,
                        field: `subjects[${index}]`,
                    });
                }
                continue;
            }
            if (grant.admin === "yes" || grant.openAggregators.length === 0) continue;
            if (binding.subjects !== UNKNOWN && !binding.subjects.some(mayBeServiceAccount)) continue;
            openReported.add(binding);
            if (base && openReported.has(base)) continue;
            const aggregators = grant.openAggregators
                .slice(0, 3)
                .map((r) => `ClusterRole ${quoteName(r.name)}`)
                .join(", ");
            findings.push({
                message: `${describeBinding(binding)} binds ${describeBindingRole(binding, grant)} to service accounts, and it aggregates through ${aggregators}, whose clusterRoleSelectors may match ClusterRoles not declared ${judgedWith(binding.urn, ctx.scope?.name).among} (the cluster's own or another install's); only the roles ${judgedWith(binding.urn, ctx.scope?.name).among} were judged. Select labels only your own roles carry, or bind a role with explicit rules.`,
                urn: binding.urn,
            });
        }
        return findings;
    },
);
