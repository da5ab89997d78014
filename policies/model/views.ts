/**
 * What rules read of the resources they judge, derived from them: a resource's properties as plain data and its
 * Stack view, and over a program its patches joined to their Stacks, its RBAC model, its Flux sources and the
 * identities its Stacks and Workspaces run as. Each is a pure function of its input and callers copy, so how
 * often one is computed (evaluation/request-cache.ts shares them per request) cannot change a verdict.
 */
import { JoinedPatch, PatchedStack, ResourceLike, StackView, kindedView, patchedStacks, stackPatches } from "./stack";
import { Powers, RbacModel, powersOf, rbacModel } from "./rbac/objects";
import { StackIdentity, stackIdentitiesOf, workspaceIdentities } from "./rbac/stacks";
import { Plain, plain } from "./values";
import { FluxSources, fluxSourcesOf } from "./flux-pins";

export interface Views {
    /** A resource's properties as plain data (values.ts `plain`). */
    props(resource: ResourceLike): Plain;
    /** The resource's view as a Stack or as a patch of one (`wanted`), or undefined when it is not one (stack.ts). */
    view(resource: ResourceLike, wanted: "Stack" | "StackPatch"): StackView | undefined;
    /** The program's Stack patches joined to their Stacks (stack.ts `stackPatches`). */
    stackPatches(resources: ResourceLike[]): JoinedPatch[];
    /** The program's Stacks after their patches (stack.ts `patchedStacks`). */
    patchedStacks(resources: ResourceLike[]): PatchedStack[];
    /** What a role's `rules` (a role's props' field, as `props` gives it) allow (rbac/objects.ts `powersOf`). */
    powers(rules: Plain): Powers;
    /** The program's Flux sources by kind, namespace and name (flux-pins.ts). */
    fluxSources(resources: ResourceLike[]): FluxSources;
    /** The program's RBAC model (rbac/objects.ts). */
    rbacModel(resources: ResourceLike[]): RbacModel;
    /** The program's Stacks and the accounts they run as (rbac/stacks.ts). */
    stackIdentities(resources: ResourceLike[]): StackIdentity[];
    /** The program's Workspaces and the accounts they run as, numbered from `firstOrder` (rbac/stacks.ts). */
    workspaceIdentities(resources: ResourceLike[], firstOrder: number): StackIdentity[];
}

/**
 * The views, each derived from its input, reading what it derives from through `views`: through themselves
 * (`computedViews`), or through views that keep what they derive, which then share every step.
 */
export function derivedViews(views: Views): Views {
    const props = (resource: ResourceLike) => views.props(resource);
    const view = (resource: ResourceLike, wanted: "Stack" | "StackPatch") => views.view(resource, wanted);
    return {
        props: (resource) => plain(resource.props),
        view: (resource, wanted) => kindedView(resource, wanted, props),
        stackPatches: (resources) => stackPatches(resources, view),
        patchedStacks: (resources) => patchedStacks(resources, view, views.stackPatches(resources)),
        powers: (rules) => powersOf(rules),
        fluxSources: (resources) => fluxSourcesOf(resources, props),
        rbacModel: (resources) => rbacModel(resources, props, (rules) => views.powers(rules)),
        stackIdentities: (resources) => stackIdentitiesOf(views.patchedStacks(resources)),
        workspaceIdentities: (resources, firstOrder) => workspaceIdentities(resources, firstOrder, props),
    };
}

/** Views that compute everything anew, every time. */
export const computedViews: Views = (() => {
    const views = {} as Views;
    return Object.assign(views, derivedViews(views));
})();
