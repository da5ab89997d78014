/**
 * argocd-app-pko-sync-order (advisory, stack-level)
 *
 * What it checks, why, the fix and what it reads: the `about` of its metadata below (`pko-guard explain`).
 */
import { governed } from "./model/examples";
import { RuleFinding, RuleContext, classify, programRule } from "./model/policy";
import { DEFAULT_NAMESPACE } from "./model/rbac/objects";
import { StackIdentity } from "./model/rbac/stacks";
import { SOURCE_PATH } from "./model/origin";
import { HOOK_WEIGHT, SYNC_PHASES, SYNC_WAVE, SyncPhase, syncPhase, syncWave as wave } from "./model/sync-waves";
import { ResourceLike, StackView, describeStack, secretsRead } from "./model/stack";
import { Plain, UNKNOWN, Unknown, get, list, str } from "./model/values";
import { Views } from "./model/views";
import { fluxDependencies, fluxOwner } from "./model/flux-order";

export const NAME = "argocd-app-pko-sync-order";

const APPLICATION = /^kubernetes:argoproj\.io\/v1alpha1:Application$/;

interface K8sObject {
    kind: "Secret" | "ServiceAccount";
    name: string | Unknown | undefined;
    namespace: string;
    wave: number | Unknown | undefined;
    /** The first phase of a sync it is applied in (undefined: none). */
    phase: SyncPhase | Unknown | undefined;
    /** The Flux Kustomization that applied it (its owner labels), when one did. */
    fluxOwner?: string;
}

/** When in a sync Argo CD applies an object: its phase, then its wave (gitops-engine `syncTasks.Less`). */
interface SyncPosition {
    phase: SyncPhase | undefined;
    wave: number;
}

/** An object's position from its metadata; UNKNOWN when a deciding annotation is unknown during preview. */
function position(metadata: Plain): SyncPosition | Unknown {
    const phase = syncPhase(metadata);
    const w = wave(metadata);
    if (phase === UNKNOWN || w === UNKNOWN) return UNKNOWN;
    return { phase, wave: w ?? 0 };
}

/** How a position reads in a message: "wave 2", or "the PreSync phase, wave 2" for a hook. */
function describePosition(p: SyncPosition, first: boolean): string {
    if (p.phase === undefined) return "no sync phase (a hook Argo CD applies in none)";
    if (p.phase === "Sync") return first ? `sync wave ${p.wave}` : `wave ${p.wave}`;
    return `the ${p.phase} phase (wave ${p.wave})`;
}

/** Whether Argo CD applies `a` strictly before `b` in a successful sync (an object of no phase: never). */
function before(a: SyncPosition, b: SyncPosition): boolean {
    const rank = (p: SyncPosition) => (p.phase === undefined ? Infinity : SYNC_PHASES.indexOf(p.phase));
    return rank(a) !== rank(b) ? rank(a) < rank(b) : a.wave < b.wave;
}

function normalizePath(p: string): string {
    return p
        .replace(/\\/g, "/")
        .replace(/^(\.\/)+/, "")
        .replace(/\/+$/, "");
}

/** The folders an Application syncs from its repository (`spec.source.path`, `spec.sources[].path`). */
function sourcePaths(app: Plain): string[] {
    const paths = [get(app, "spec", "source", "path"), ...list(get(app, "spec", "sources")).map((s) => get(s, "path"))];
    return paths.filter((p): p is string => typeof p === "string").map(normalizePath);
}

function under(file: string, folder: string): boolean {
    return folder === "" || folder === "." || file === folder || file.startsWith(`${folder}/`);
}

function manages(app: Plain, appName: string | Unknown | undefined, view: StackView): boolean {
    const labels = view.labels === UNKNOWN ? {} : view.labels;
    const annotations = view.annotations === UNKNOWN ? {} : view.annotations;
    const tracking = annotations["argocd.argoproj.io/tracking-id"];
    const instance = labels["app.kubernetes.io/instance"];
    if (typeof tracking === "string" || typeof instance === "string") {
        return (
            typeof appName === "string" &&
            ((typeof tracking === "string" && tracking.split(":")[0] === appName) || instance === appName)
        );
    }
    const file = annotations[SOURCE_PATH];
    const folders = sourcePaths(app);
    if (typeof file === "string" && folders.length > 0) {
        return folders.some((folder) => under(normalizePath(file), folder));
    }
    const dest = get(app, "spec", "destination", "namespace");
    return (
        typeof dest === "string" &&
        dest === (view.namespace === UNKNOWN ? undefined : (view.namespace ?? DEFAULT_NAMESPACE))
    );
}

interface Application {
    r: ResourceLike;
    props: Plain;
}

function applications(resources: ResourceLike[], views: Views): Application[] {
    return resources.filter((r) => APPLICATION.test(String(r.type))).map((r) => ({ r, props: views.props(r) }));
}

/** The Secrets and service accounts of the program, with their sync waves. */
function wavedObjects(resources: ResourceLike[], views: Views): K8sObject[] {
    const objects: K8sObject[] = [];
    for (const r of resources) {
        const m = /^kubernetes:core\/v1:(Secret|ServiceAccount)$/.exec(String(r.type));
        if (!m) continue;
        const props = views.props(r);
        const ns = str(get(props, "metadata", "namespace"));
        objects.push({
            kind: m[1] as K8sObject["kind"],
            name: str(get(props, "metadata", "name")),
            namespace: typeof ns === "string" ? ns : DEFAULT_NAMESPACE,
            wave: wave(get(props, "metadata")),
            phase: syncPhase(get(props, "metadata")),
            fluxOwner: fluxOwner(get(props, "metadata", "labels")),
        });
    }
    return objects;
}

/** Argo CD is in use when the program declares an Application or uses sync-wave annotations. */
function argoInUse(apps: Application[], objects: K8sObject[], stacks: StackIdentity[]): boolean {
    return (
        apps.length > 0 ||
        objects.some((o) => o.wave !== undefined) ||
        stacks.some(
            (s) =>
                s.view.annotations !== UNKNOWN &&
                (s.view.annotations[SYNC_WAVE] !== undefined || s.view.annotations[HOOK_WEIGHT] !== undefined),
        )
    );
}

/** What to change so the Stack comes after its dependency. */
function advice(own: SyncPosition, theirs: SyncPosition): string {
    if (theirs.phase === undefined || theirs.phase === "SyncFail" || theirs.phase === "PostSync")
        return "apply it as a plain object (no hook annotation) or in an earlier phase, before the Stack";
    if (own.phase === theirs.phase) return `give the Stack a wave of at least ${theirs.wave}`;
    return `apply the Stack in the ${theirs.phase} phase or later (wave at least ${theirs.wave}), or the dependency earlier`;
}

/** A Stack synced before a Secret or the service account it uses. */
function syncWaveFindings(stacks: StackIdentity[], objects: K8sObject[]): RuleFinding[] {
    const findings: RuleFinding[] = [];
    // The first object of each kind, namespace and name (looked up once per dependency, not searched).
    const byKey = new Map<string, K8sObject>();
    const key = (kind: string, namespace: string | undefined, name: string) => `${kind}\u0000${namespace}\u0000${name}`;
    for (const o of objects) {
        if (typeof o.name !== "string") continue;
        const k = key(o.kind, o.namespace, o.name);
        if (!byKey.has(k)) byKey.set(k, o);
    }
    for (const st of stacks) {
        const view = st.view;
        const ns = view.namespace === UNKNOWN ? undefined : (view.namespace ?? DEFAULT_NAMESPACE);
        const own = view.annotations === UNKNOWN ? UNKNOWN : position({ annotations: view.annotations as Plain });
        const deps = [
            ...secretsRead(view).map((name) => ({ kind: "Secret", name })),
            ...(typeof st.serviceAccount.name === "string"
                ? [{ kind: "ServiceAccount", name: st.serviceAccount.name }]
                : []),
        ];
        for (const dep of deps) {
            const obj = ns === undefined ? undefined : byKey.get(key(dep.kind, ns, dep.name));
            if (!obj) continue;
            const theirs: SyncPosition | Unknown =
                obj.wave === UNKNOWN || obj.phase === UNKNOWN ? UNKNOWN : { phase: obj.phase, wave: obj.wave ?? 0 };
            const what = `its ${dep.kind} ${JSON.stringify(dep.name)}`;
            if (theirs === UNKNOWN || own === UNKNOWN) {
                findings.push({
                    message: `${describeStack(view)}: the sync wave or hook phase of the Stack or of ${what} is unknown during preview; make the sync-wave and hook annotations known.`,
                    urn: view.urn,
                });
            } else if (before(own, theirs)) {
                findings.push({
                    message: `${describeStack(view)} is in ${describePosition(own, true)} but ${what} is in ${describePosition(theirs, false)}, so Argo CD applies the Stack first; ${advice(own, theirs)}.`,
                    urn: view.urn,
                });
            }
        }
    }
    return findings;
}

/**
 * An Application with automated prune that manages a production Stack with destroyOnFinalize. The
 * Stacks are read as their patches leave them (a patch that sets destroyOnFinalize counts), classified
 * by the pack-wide production settings.
 */
function pruneFindings(apps: Application[], stacks: { view: StackView }[], ctx: RuleContext): RuleFinding[] {
    const findings: RuleFinding[] = [];
    // Only production Stacks with destroyOnFinalize can be at risk: found once, not once per Application.
    const atRisk = stacks.filter(
        (st) => st.view.destroyOnFinalize === true && classify(st.view, ctx).verdict === "production",
    );
    for (const { r, props } of apps) {
        if (atRisk.length === 0) break;
        if (get(props, "spec", "syncPolicy", "automated", "prune") !== true) continue;
        const appName = str(get(props, "metadata", "name"));
        for (const st of atRisk) {
            if (!manages(props, appName, st.view)) continue;
            findings.push({
                message: `Argo CD Application ${JSON.stringify(r.name)} auto-prunes (syncPolicy.automated.prune) production ${describeStack(st.view)}, which sets destroyOnFinalize: deleting its manifest from Git would destroy production; disable prune or remove destroyOnFinalize.`,
                urn: typeof r.urn === "string" ? r.urn : undefined,
                field: "spec.syncPolicy.automated.prune",
            });
        }
    }
    return findings;
}

const FLUX_KUSTOMIZATION = /^kubernetes:kustomize\.toolkit\.fluxcd\.io\/[^:]+:Kustomization$/;

/**
 * A Flux Kustomization with `spec.prune: true` that applied a production Stack with destroyOnFinalize: the Stack
 * carries the owner labels kustomize-controller sets on what it applies (`kustomize.toolkit.fluxcd.io/name` and
 * `/namespace`), and the Kustomization garbage-collects it when its manifest leaves Git or the Kustomization
 * itself is deleted.
 */
function fluxPruneFindings(resources: ResourceLike[], stacks: { view: StackView }[], ctx: RuleContext): RuleFinding[] {
    const findings: RuleFinding[] = [];
    const kustomizations = resources.filter((r) => FLUX_KUSTOMIZATION.test(String(r.type)));
    if (kustomizations.length === 0) return findings;
    const atRisk = stacks.filter(
        (st) => st.view.destroyOnFinalize === true && classify(st.view, ctx).verdict === "production",
    );
    for (const r of kustomizations) {
        if (atRisk.length === 0) break;
        const props = ctx.views.props(r);
        if (get(props, "spec", "prune") !== true) continue;
        const name = str(get(props, "metadata", "name"));
        const ns = str(get(props, "metadata", "namespace")) ?? DEFAULT_NAMESPACE;
        for (const st of atRisk) {
            const labels = st.view.labels === UNKNOWN ? {} : st.view.labels;
            if (
                labels["kustomize.toolkit.fluxcd.io/name"] !== name ||
                labels["kustomize.toolkit.fluxcd.io/namespace"] !== ns
            )
                continue;
            findings.push({
                message: `Flux Kustomization ${JSON.stringify(`${String(ns)}/${String(name)}`)} prunes (spec.prune) production ${describeStack(st.view)}, which sets destroyOnFinalize: deleting its manifest from Git, or the Kustomization, would destroy production; disable prune or remove destroyOnFinalize.`,
                urn: typeof r.urn === "string" ? r.urn : undefined,
            });
        }
    }
    return findings;
}

/**
 * A Stack that one Flux Kustomization applies while another applies its Secret or service account, without
 * waiting for it (`spec.dependsOn`, transitively): Flux may apply the Stack first (model/flux-order.ts).
 */
function fluxOrderFindings(
    resources: ResourceLike[],
    stacks: StackIdentity[],
    objects: K8sObject[],
    views: Views,
): RuleFinding[] {
    const findings: RuleFinding[] = [];
    const owned = objects.filter((o) => o.fluxOwner !== undefined && typeof o.name === "string");
    if (owned.length === 0) return findings;
    const dependencies = fluxDependencies(resources, (r) => views.props(r));
    for (const st of stacks) {
        const view = st.view;
        const owner = view.labels === UNKNOWN ? undefined : fluxOwner(view.labels);
        const ns = view.namespace === UNKNOWN ? undefined : (view.namespace ?? DEFAULT_NAMESPACE);
        if (owner === undefined || ns === undefined || !dependencies.has(owner)) continue;
        const deps = [
            ...secretsRead(view).map((name) => ({ kind: "Secret", name })),
            ...(typeof st.serviceAccount.name === "string"
                ? [{ kind: "ServiceAccount", name: st.serviceAccount.name }]
                : []),
        ];
        for (const dep of deps) {
            const obj = owned.find((o) => o.kind === dep.kind && o.namespace === ns && o.name === dep.name);
            if (!obj || obj.fluxOwner === owner || dependencies.get(owner)!.has(obj.fluxOwner!)) continue;
            findings.push({
                message: `${describeStack(view)} is applied by Flux Kustomization ${JSON.stringify(owner)}, but its ${dep.kind} ${JSON.stringify(dep.name)} by Kustomization ${JSON.stringify(obj.fluxOwner)}, which it does not wait for (spec.dependsOn), so Flux may apply the Stack first; add ${JSON.stringify(obj.fluxOwner)} to the spec.dependsOn of ${JSON.stringify(owner)}.`,
                urn: view.urn,
            });
        }
    }
    return findings;
}

export const rule = programRule(
    {
        name: NAME,
        about: {
            what: "when Argo CD syncs PKO Stacks (the program declares an Argo CD Application, or uses\n`argocd.argoproj.io/sync-wave` annotations), each Stack is synced no earlier than the Secrets and the\nservice account it uses (its sync wave is not lower than theirs); and an Application with automated\nprune, or a Flux Kustomization with `spec.prune`, does not manage a production Stack with `destroyOnFinalize`.",
            why: "the Argo CD + PKO guide applies RBAC in wave 1 before the Stack in wave 2; a Stack synced before its\ntoken Secret or service account fails its first reconcile. With `prune: true`, deleting the manifest\nfrom Git deletes the Stack, and `destroyOnFinalize` then destroys production.",
            fix: "give the Stack a higher sync wave than its Secrets and service account; turn off automated prune\nfor production or remove destroyOnFinalize.",
            notes: [
                "A Flux Kustomization manages a Stack when the Stack carries the owner labels kustomize-controller sets\non what it applies (`kustomize.toolkit.fluxcd.io/name` and `/namespace` naming it), which `pko-guard\ncheck` sets on what each Kustomization applies; with `spec.prune: true` it deletes the Stack when its\nmanifest leaves Git or the Kustomization is deleted.",
                "With Flux, a Stack applied by one Kustomization whose Secret or service account another Kustomization\napplies is flagged unless its Kustomization waits for that one (`spec.dependsOn`, transitively):\nkustomize-controller applies what one Kustomization builds together, and Kustomizations that do not\ndepend on each other in no set order.",
                "An Application manages a Stack when the Stack carries Argo CD's tracking label\n(`app.kubernetes.io/instance`) or annotation (`argocd.argoproj.io/tracking-id`) naming it, or, without\neither, when the Stack's manifest file lies under the Application's `spec.source.path` (or one of\n`spec.sources[].path`): the file is read from the Stack's `pko-guard/source-path` annotation, its path\nrelative to the repository root, which `pko-guard check` sets on every manifest it reads (a program's\nresources have none). Without either, when the Application's destination namespace is the Stack's namespace.",
                "An object's wave is computed as Argo CD computes it (gitops-engine `syncwaves.Wave`): its\n`argocd.argoproj.io/sync-wave` annotation when that is an integer, else its Helm `helm.sh/hook-weight`\nannotation when that is an integer, else 0. Objects are ordered as gitops-engine orders a sync's tasks:\nby phase first (PreSync, Sync, PostSync; an object that is not a hook is in Sync; a hook's phase comes\nfrom `argocd.argoproj.io/hook`, else from Helm's `pre-install`/`pre-upgrade` and\n`post-install`/`post-upgrade`), then by wave. A dependency that is only a SyncFail hook, or a hook\nArgo CD applies in no phase (`Skip`, Helm `test`), is never there before the Stack.",
            ],
            reads: [
                "argoproj.io/Application",
                "kustomize.toolkit.fluxcd.io/Kustomization",
                "pulumi.com/Stack",
                "core/Secret",
                "core/ServiceAccount",
            ],
            readsProduction: true,
            patternSettings: [],
            example: governed,
        },
        enforcementLevel: "advisory",
        severity: "medium",
        url: "https://www.pulumi.com/docs/iac/guides/continuous-delivery/argocd/",
    },
    (resources: ResourceLike[], _config, ctx) => {
        const apps = applications(resources, ctx.views);
        const objects = wavedObjects(resources, ctx.views);
        const stacks = ctx.views.stackIdentities(resources);
        const flux = [
            ...fluxPruneFindings(resources, ctx.views.patchedStacks(resources), ctx),
            ...fluxOrderFindings(resources, stacks, objects, ctx.views),
        ];
        if (!argoInUse(apps, objects, stacks)) return flux;
        return [
            ...syncWaveFindings(stacks, objects),
            ...pruneFindings(apps, ctx.views.patchedStacks(resources), ctx),
            ...flux,
        ];
    },
);
