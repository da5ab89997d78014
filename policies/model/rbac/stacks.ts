/** The identities PKO Stacks and Workspaces run as (their service accounts), indexed for the RBAC rules. */
import { PatchedStack, ResourceLike, StackView, resourceProps } from "../stack";
import { IMPLICIT_ACCOUNT, effectiveServiceAccount, workspaceAccount } from "../workspace";
import { Plain, UNKNOWN, Unknown, get, push, str } from "../values";
import { Binding, DEFAULT_NAMESPACE, ServiceAccountRef, Subject } from "./objects";
import { GROUPS_COVERING_ALL_ACCOUNTS, subjectNamespace, subjectUnresolved } from "./grants";

/** A PKO Stack together with the service account its workspace runs as. */
export interface StackIdentity {
    /** Position among the program's Stacks (keeps findings in program order). */
    order: number;
    view: StackView;
    serviceAccount: ServiceAccountRef;
    source: string;
    /** The Stack's field that names the account (none for the implicit default). */
    field?: string;
}

/**
 * Stacks indexed by the service account they run as, so that finding the Stacks a subject may cover
 * is a lookup, not a scan (programs with thousands of Stacks and bindings stay linear). Stacks whose
 * account or namespace is unknown are candidates for every subject.
 */
export class StackIndex {
    private readonly byAccount = new Map<string, StackIdentity[]>();
    private readonly byNamespace = new Map<string, StackIdentity[]>();
    private readonly uncertain: StackIdentity[] = [];

    constructor(public readonly stacks: StackIdentity[]) {
        for (const st of stacks) {
            const { name, namespace } = st.serviceAccount;
            if (typeof namespace !== "string") {
                this.uncertain.push(st);
                continue;
            }
            push(this.byNamespace, namespace, st);
            if (typeof name === "string") push(this.byAccount, `${namespace}/${name}`, st);
            else this.uncertain.push(st);
        }
    }

    /** A superset of the Stacks the subject may cover (subjectCovers decides exactly). */
    candidates(subject: Subject, binding: Binding): StackIdentity[] {
        const { kind, name } = subject;
        if (subjectUnresolved(subject, binding) || typeof kind !== "string" || typeof name !== "string")
            return this.stacks;
        let found: StackIdentity[] = [];
        if (kind === "ServiceAccount") {
            const ns = subjectNamespace(subject, binding);
            if (typeof ns !== "string") return this.stacks;
            found = this.byAccount.get(`${ns}/${name}`) ?? [];
        } else if (kind === "Group") {
            if (GROUPS_COVERING_ALL_ACCOUNTS.has(name)) return this.stacks;
            if (name.startsWith("system:serviceaccounts:"))
                found = this.byNamespace.get(name.slice("system:serviceaccounts:".length)) ?? [];
        } else if (kind === "User" && name.startsWith("system:serviceaccount:")) {
            const [ns, ...rest] = name.slice("system:serviceaccount:".length).split(":");
            found = this.byAccount.get(`${ns}/${rest.join(":")}`) ?? [];
        }
        return this.uncertain.length === 0 ? found : [...found, ...this.uncertain];
    }

    /** The Stacks a binding may cover, each once, in program order. */
    coveredBy(binding: Binding): StackIdentity[] {
        if (binding.subjects === UNKNOWN) return this.stacks;
        const seen = new Set<StackIdentity>();
        for (const s of binding.subjects) for (const st of this.candidates(s, binding)) seen.add(st);
        return seen.size === this.stacks.length ? this.stacks : [...seen].sort((a, b) => a.order - b.order);
    }
}

/** The program's Stacks and the accounts they run as, from its Stacks after their patches (`patchedStacks`). */
export function stackIdentitiesOf(patched: PatchedStack[]): StackIdentity[] {
    const out: StackIdentity[] = [];
    // Each declared Stack as it will be after its patches (a patch that switches a Stack's service account
    // is judged with the account it switches to), under the Stack's own identity. A patch of a Stack the
    // program does not declare says nothing reliable about the account it runs as, so it is not a Stack here.
    for (const { view: patchedView, stack } of patched) {
        if (!stack) continue;
        // An unpatched Stack is its own view (most programs patch none): copying it would only make another
        // object for every Stack of the program.
        const view: StackView =
            patchedView === stack
                ? stack
                : {
                      ...patchedView,
                      resourceName: stack.resourceName,
                      urn: stack.urn,
                      type: stack.type,
                      label: stack.label,
                  };
        const sa = effectiveServiceAccount(view);
        const namespace = view.namespace === UNKNOWN ? UNKNOWN : (view.namespace ?? DEFAULT_NAMESPACE);
        // A Stack that names no namespace is read in "default", as the account it runs as: said where it is shown.
        const source = view.namespace === undefined ? `${sa.source}; no namespace set, "default" assumed` : sa.source;
        const identity: StackIdentity = {
            order: out.length,
            view,
            serviceAccount: { name: sa.name, namespace },
            source,
        };
        if (sa.source !== IMPLICIT_ACCOUNT) identity.field = sa.source;
        out.push(identity);
    }
    return out;
}

export const WORKSPACE_TYPE = "kubernetes:auto.pulumi.com/v1alpha1:Workspace";

/**
 * The program's PKO `Workspace` objects (auto.pulumi.com/v1alpha1, declared directly) and the accounts
 * their pods run as, as identities like a Stack's (the rules that judge what a Stack's account is granted
 * judge a Workspace's the same way). The account follows the workspace controller: the pod template's
 * `serviceAccountName` wins over `spec.serviceAccountName`, which the CRD defaults to `default`.
 */
export function workspaceIdentities(
    resources: ResourceLike[],
    firstOrder = 0,
    propsOf: (resource: ResourceLike) => Plain = resourceProps,
): StackIdentity[] {
    const out: StackIdentity[] = [];
    for (const r of resources) {
        const type = String(r?.type ?? "");
        if (!type.startsWith("kubernetes:") || type.endsWith("Patch")) continue;
        const props = propsOf(r);
        const isWorkspace =
            type === WORKSPACE_TYPE ||
            (get(props, "apiVersion") === "auto.pulumi.com/v1alpha1" && get(props, "kind") === "Workspace");
        if (!isWorkspace) continue;
        const name = String(r.name ?? "");
        const namespaceRaw = str(get(props, "metadata", "namespace"));
        const view: StackView = {
            resourceName: name,
            label: `Workspace ${JSON.stringify(name)}`,
            urn: typeof r.urn === "string" ? r.urn : undefined,
            type,
            apiVersion: "auto.pulumi.com/v1alpha1",
            name: str(get(props, "metadata", "name")),
            namespace: namespaceRaw,
            labels: {},
            annotations: {},
            object: props,
            spec: get(props, "spec"),
            stack: undefined,
            projectRepo: undefined,
            repoDir: undefined,
            commit: undefined,
            branch: undefined,
            backend: undefined,
            fluxSource: undefined,
            programRef: undefined,
            destroyOnFinalize: undefined,
            refresh: undefined,
            preview: undefined,
            resyncFrequencySeconds: undefined,
            serviceAccountName: undefined,
            workspaceTemplate: undefined,
            environment: undefined,
        };
        const spec = get(props, "spec");
        const named: { name: string | Unknown; source: string } | undefined =
            props === UNKNOWN ? { name: UNKNOWN, source: "spec" } : workspaceAccount(spec, "spec");
        const sa = named ?? { name: "default", source: "the Workspace's default service account" };
        const namespace = namespaceRaw === UNKNOWN || props === UNKNOWN ? UNKNOWN : (namespaceRaw ?? DEFAULT_NAMESPACE);
        const identity: StackIdentity = {
            order: firstOrder + out.length,
            view,
            serviceAccount: { name: sa.name, namespace },
            source: sa.source,
        };
        // A named account's source is the field naming it; the Workspace's default has none.
        if (named) identity.field = named.source;
        out.push(identity);
    }
    return out;
}
