/**
 * The one place where what the rules derive from their inputs is shared between policies (policies/model/views.ts):
 * a resource's properties as plain data and its Stack view, and over a program its joined patches, patched Stacks,
 * RBAC model and identities. Results are remembered by the identity of their input (weak maps), never by what it
 * contains, so nothing is reused for other inputs; shared results are never changed (callers copy). The analyzer
 * deserializes every input again for each policy, so a request's policies read its first policy's inputs; a request
 * ends when another begins or with the turn of the event loop. Figures: docs/contributing/benchmarks.md.
 */
import { ResourceValidation, ResourceValidationPolicy, StackValidation, StackValidationPolicy } from "@pulumi/policy";
import { Rule } from "../policies/index";
import { programKeyOf } from "../policies/model/production";
import { JoinedPatch, PatchedStack, ResourceLike, StackView } from "../policies/model/stack";
import { Powers, RbacModel } from "../policies/model/rbac/objects";
import { FluxSources } from "../policies/model/flux-pins";
import { StackIdentity } from "../policies/model/rbac/stacks";
import { Plain } from "../policies/model/values";
import { Views, derivedViews } from "../policies/model/views";
import { extended } from "../support/shapes";

/** A view built for a props object, with what else it was built from. */
interface ViewEntry {
    wanted: "Stack" | "StackPatch";
    type: string;
    name: string;
    urn: string | undefined;
    view: StackView | undefined;
}

/** A table of results by the identity of their input: weak (entries go with their inputs) or for one request. */
type Table<V> = Map<object, V> | WeakMap<object, V>;

/**
 * Views that remember what they derive, by the identity of its input: for as long as that input lives (`weak`), or
 * for as long as these views live (one analyzer request). Each derivation reads what it derives from through these
 * same views (`derivedViews`), so a program's patched Stacks are built from the Stack views its resource hooks
 * already built, and its identities from its patched Stacks. A table is made when first needed (a request about one
 * resource needs two of eight).
 */
class SharingViews implements Views {
    private readonly derive: Views = derivedViews(this);
    private propsTable?: Table<Plain>;
    private viewTable?: Table<ViewEntry[]>;
    private stackPatchesTable?: Table<JoinedPatch[]>;
    private patchedStacksTable?: Table<PatchedStack[]>;
    private powersTable?: Table<Powers>;
    private rbacModelTable?: Table<RbacModel>;
    private fluxSourcesTable?: Table<FluxSources>;
    private stackIdentitiesTable?: Table<StackIdentity[]>;
    private workspaceIdentitiesTable?: Table<Map<number, StackIdentity[]>>;

    constructor(private readonly weak: boolean) {}

    private table<V>(): Table<V> {
        return this.weak ? new WeakMap<object, V>() : new Map<object, V>();
    }

    props(resource: ResourceLike): Plain {
        const key = resource.props;
        if (key === null || typeof key !== "object") return this.derive.props(resource);
        const table = (this.propsTable ??= this.table());
        if (table.has(key)) return table.get(key);
        const value = this.derive.props(resource);
        table.set(key, value);
        return value;
    }

    view(resource: ResourceLike, wanted: "Stack" | "StackPatch"): StackView | undefined {
        const key = resource.props;
        if (key === null || typeof key !== "object") return this.derive.view(resource, wanted);
        // The same props object may be read as another resource (another type, name or URN): one entry for each.
        const { type, name, urn } = resource;
        const table = (this.viewTable ??= this.table());
        const entries = table.get(key);
        if (entries)
            for (const e of entries)
                if (e.wanted === wanted && e.type === type && e.name === name && e.urn === urn) return e.view;
        const entry: ViewEntry = { wanted, type, name, urn, view: this.derive.view(resource, wanted) };
        if (entries) entries.push(entry);
        else table.set(key, [entry]);
        return entry.view;
    }

    stackPatches(resources: ResourceLike[]): JoinedPatch[] {
        const table = (this.stackPatchesTable ??= this.table());
        return remembered(table, resources, () => this.derive.stackPatches(resources));
    }

    patchedStacks(resources: ResourceLike[]): PatchedStack[] {
        const table = (this.patchedStacksTable ??= this.table());
        return remembered(table, resources, () => this.derive.patchedStacks(resources));
    }

    powers(rules: Plain): Powers {
        // By the identity of the rules as `props` gave them: a live role's rules are one object for as long as
        // the cache holds it, so its rules are classified once, however many reviews judge it.
        if (rules === null || typeof rules !== "object") return this.derive.powers(rules);
        const table = (this.powersTable ??= this.table());
        return remembered(table, rules, () => this.derive.powers(rules));
    }

    fluxSources(resources: ResourceLike[]): FluxSources {
        const table = (this.fluxSourcesTable ??= this.table());
        return remembered(table, resources, () => this.derive.fluxSources(resources));
    }

    rbacModel(resources: ResourceLike[]): RbacModel {
        const table = (this.rbacModelTable ??= this.table());
        return remembered(table, resources, () => this.derive.rbacModel(resources));
    }

    stackIdentities(resources: ResourceLike[]): StackIdentity[] {
        const table = (this.stackIdentitiesTable ??= this.table());
        return remembered(table, resources, () => this.derive.stackIdentities(resources));
    }

    workspaceIdentities(resources: ResourceLike[], firstOrder: number): StackIdentity[] {
        const table = (this.workspaceIdentitiesTable ??= this.table());
        const byOrder = remembered(table, resources, () => new Map<number, StackIdentity[]>());
        let known = byOrder.get(firstOrder);
        if (known === undefined) {
            known = this.derive.workspaceIdentities(resources, firstOrder);
            byOrder.set(firstOrder, known);
        }
        return known;
    }
}

/** What `compute` returns for the list `key`, computed once for it. */
function remembered<V>(table: Table<V>, key: object, compute: () => V): V {
    if (table.has(key)) return table.get(key) as V;
    const value = compute();
    table.set(key, value);
    return value;
}

/**
 * Views that remember what they derive by the identity of its input, for as long as that input lives (the
 * in-process evaluator's, for every evaluation: ./evaluate.ts).
 */
export function sharingViews(): Views {
    return new SharingViews(true);
}

/**
 * Views that remember what they derive for as long as they live (strong maps, no weak references for the
 * collector to trace): one evaluation's, for inputs that no other evaluation reads (./evaluate.ts).
 */
export function evaluationViews(): Views {
    return new SharingViews(false);
}

/** One analyzer request as the pack's policies see it: what it is about, the policies that ran, what they share. */
interface Request {
    key: string;
    ran: Set<string>;
    /** The first policy's inputs (its props in Analyze, its resource list in AnalyzeStack), which the others read. */
    input: unknown;
    views: Views;
}

let open: Request | undefined;
/** Whether the end of this turn of the event loop is already set to forget the open request. */
let closing = false;

/**
 * The request a policy's call belongs to: the open one when it is about the same thing (`key`: the resource's URN,
 * or the program's key) and the policy has not run in it yet, else a new one, whose first policy's inputs every
 * later policy of it reads. The analyzer calls each policy once per request, one request after another (a
 * request's policies run in one turn of the event loop); a request is forgotten when another opens, at the latest
 * when the turn ends.
 */
function requestOf(key: string, policy: string, input: unknown): Request {
    if (open === undefined || open.key !== key || open.ran.has(policy)) {
        open = { key, ran: new Set(), input, views: new SharingViews(false) };
        if (!closing) {
            closing = true;
            setImmediate(() => {
                closing = false;
                open = undefined;
            }).unref();
        }
    }
    open.ran.add(policy);
    return open;
}

/**
 * The policies as the analyzer runs them: each hook joins the request its call belongs to (`requestOf`) and runs
 * with that request's first inputs and its views in its arguments, so the policies of a request share what their
 * rules derive. A hook's verdict is the same either way: the inputs are the same values, and the views compute
 * what the hook would compute.
 */
export function sharingRequests<P extends Rule>(list: P[]): P[] {
    return list.map((p) => {
        const hooks: Partial<ResourceValidationPolicy & StackValidationPolicy> = {};
        const { validateResource, validateStack } = p as Partial<ResourceValidationPolicy & StackValidationPolicy>;
        const resource =
            (validate: ResourceValidation, name: string): ResourceValidation =>
            (args, reportViolation) => {
                const request = requestOf(args.urn, name, args.props);
                const props = request.input as typeof args.props;
                return validate(extended(args, { props, views: request.views }), reportViolation);
            };
        if (Array.isArray(validateResource))
            hooks.validateResource = validateResource.map((v, i) => resource(v, `${p.name}#${i}`));
        else if (validateResource) hooks.validateResource = resource(validateResource, p.name);
        if (validateStack) {
            const stack: StackValidation = (args, reportViolation) => {
                const request = requestOf(programKeyOf(args.resources), p.name, args.resources);
                return validateStack(
                    extended(args, { resources: request.input as typeof args.resources, views: request.views }),
                    reportViolation,
                );
            };
            hooks.validateStack = stack;
        }
        return extended(p, hooks) as P;
    });
}
