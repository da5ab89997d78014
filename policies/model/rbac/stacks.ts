/** The identities PKO Stacks run as (their service accounts), indexed for the RBAC rules. */
import { effectiveServiceAccount, patchedStacks, ResourceLike, StackView } from "../stack";
import { push, UNKNOWN } from "../values";
import { Binding, DEFAULT_NAMESPACE, ServiceAccountRef, Subject } from "./objects";
import { GROUPS_COVERING_ALL_ACCOUNTS, subjectNamespace, subjectUnresolved } from "./grants";

/** A PKO Stack together with the service account its workspace runs as. */
export interface StackIdentity {
    /** Position among the program's Stacks (keeps findings in program order). */
    order: number;
    view: StackView;
    serviceAccount: ServiceAccountRef;
    source: string;
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
        if (subjectUnresolved(subject, binding) || typeof kind !== "string" || typeof name !== "string") return this.stacks;
        let found: StackIdentity[] = [];
        if (kind === "ServiceAccount") {
            const ns = subjectNamespace(subject, binding);
            if (typeof ns !== "string") return this.stacks;
            found = this.byAccount.get(`${ns}/${name}`) ?? [];
        } else if (kind === "Group") {
            if (GROUPS_COVERING_ALL_ACCOUNTS.has(name)) return this.stacks;
            if (name.startsWith("system:serviceaccounts:")) found = this.byNamespace.get(name.slice("system:serviceaccounts:".length)) ?? [];
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


/** The program's Stacks and the accounts they run as (built per call: the analyzer hands every policy its own list). */
export function stackIdentities(resources: ResourceLike[]): StackIdentity[] {
    return buildStackIdentities(resources);
}

export function buildStackIdentities(resources: ResourceLike[]): StackIdentity[] {
    const out: StackIdentity[] = [];
    // Each declared Stack as it will be after its patches (a patch that switches a Stack's service account
    // is judged with the account it switches to), under the Stack's own identity. A patch of a Stack the
    // program does not declare says nothing reliable about the account it runs as, so it is not a Stack here.
    for (const { view: patched, stack } of patchedStacks(resources)) {
        if (!stack) continue;
        const view: StackView = { ...patched, resourceName: stack.resourceName, urn: stack.urn, type: stack.type, label: stack.label };
        const sa = effectiveServiceAccount(view);
        const namespace = view.namespace === UNKNOWN ? UNKNOWN : view.namespace ?? DEFAULT_NAMESPACE;
        out.push({ order: out.length, view, serviceAccount: { name: sa.name, namespace }, source: sa.source });
    }
    return out;
}
