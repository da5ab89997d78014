/**
 * pko-stack-prod-pinned-commit (mandatory)
 *
 * What it checks, why, the fix and what it reads: the `about` of its metadata below (`pko-guard explain`).
 */
import { stack } from "./model/examples";
import { RuleContext, RuleFinding, classify, stackRule } from "./model/policy";
import { productionFindings } from "./model/production";
import { ResourceLike, StackView, describeStack } from "./model/stack";
import { SourcePin, fluxSourceRef, sourcePin } from "./model/flux-pins";
import { UNKNOWN } from "./model/values";
import { FLOATING_SOURCE } from "./model/origin";

export const NAME = "pko-stack-prod-pinned-commit";

const FULL_SHA = /^[0-9a-fA-F]{40}$/;

/**
 * The reasons a Stack is not pinned by its own fields; empty when it is. A Stack that deploys from a Flux source is
 * pinned or not by that source, which the program-level check judges (fluxSourceFindings).
 */
export function pinProblems(view: StackView, allowUnpinnableSources: boolean): string[] {
    const problems: string[] = [];
    if (view.spec === UNKNOWN) {
        return ["its spec is unknown during preview"];
    }
    const flux = view.fluxSource !== undefined && view.fluxSource !== null;
    const programRef = view.programRef !== undefined && view.programRef !== null;
    if (programRef && !allowUnpinnableSources) {
        problems.push(
            "it deploys from spec.programRef, which cannot be pinned to a commit (allowUnpinnableSources is off)",
        );
    }
    if ((flux || programRef) && view.projectRepo === undefined) {
        return problems;
    }
    if (view.branch === UNKNOWN) {
        problems.push("spec.branch is unknown during preview");
    } else if (typeof view.branch === "string" && view.branch.length > 0) {
        problems.push("it tracks a branch (spec.branch), a movable ref");
    }
    // An object read from a fetched source whose reference can move (check sets the annotation itself): what the
    // cluster receives can change without a commit in the repository checked, whatever the spec pins.
    const floating = view.annotations === UNKNOWN ? undefined : view.annotations[FLOATING_SOURCE];
    if (typeof floating === "string" && floating !== "")
        problems.push(
            `it is read from ${floating}, a reference that can move (pin the source to a commit or exact version)`,
        );
    if (view.commit === UNKNOWN) {
        problems.push("spec.commit is unknown during preview");
    } else if (view.commit === undefined || view.commit === "") {
        problems.push("it sets no spec.commit");
    } else if (!FULL_SHA.test(view.commit)) {
        problems.push("spec.commit is not a full 40-hex commit SHA (a short SHA or tag is a movable ref)");
    }
    return problems;
}

/** The field a pinning finding points at: the branch when one is set, else the source or the commit. */
function pinField(view: StackView): string {
    if (view.branch !== undefined && view.branch !== "") return "spec.branch";
    if (view.fluxSource !== undefined && view.fluxSource !== null) return "spec.fluxSource";
    if (view.programRef !== undefined && view.programRef !== null) return "spec.programRef";
    return view.commit === undefined ? "spec" : "spec.commit";
}

/**
 * A production Stack that deploys from a Flux source, judged by the source it names (in the Stack's namespace,
 * where PKO looks it up), read from the program's resources: pinned only by a GitRepository's full
 * `spec.ref.commit` or an OCIRepository's `spec.ref.digest` (model/flux-pins.ts).
 */
function fluxSourceFindings(resources: ResourceLike[], ctx: RuleContext): RuleFinding[] {
    const findings: RuleFinding[] = [];
    const stacks = ctx.views
        .patchedStacks(resources)
        .filter((s) => s.stack !== undefined && s.view.fluxSource !== undefined && s.view.fluxSource !== null);
    if (stacks.length === 0) return findings;
    const sources = ctx.views.fluxSources(resources);
    for (const { view } of stacks) {
        const { kind, name } = fluxSourceRef(view.fluxSource);
        const ns = view.namespace === UNKNOWN ? UNKNOWN : (view.namespace ?? "default");
        let pin: SourcePin;
        if (kind === UNKNOWN || name === UNKNOWN || ns === UNKNOWN)
            pin = {
                problem: "the source it names (spec.fluxSource.sourceRef, its namespace) is unknown during preview",
                unknown: true,
            };
        else if (typeof kind !== "string" || typeof name !== "string")
            pin = { problem: "spec.fluxSource.sourceRef names no source (kind and name)" };
        else pin = sourcePin(sources, kind, ns, name);
        if (!pin.problem) continue;
        const who = describeStack(view);
        const fix =
            "pin the source: a full spec.ref.commit on the GitRepository, a spec.ref.digest on the OCIRepository";
        const production = classify(view, ctx);
        if (production.verdict === "invalid-config") continue; // said once, on the Stack, by its resource hook
        for (const f of productionFindings(
            who,
            production,
            {
                production: (reason) =>
                    `${who} is ${reason} but the Flux source its spec.fluxSource names is not pinned: ${pin.problem}; ${fix}.`,
                unknown: (reason) =>
                    `the Flux source that ${who} deploys from (spec.fluxSource) is not pinned (${pin.problem}) and ${reason}; the rule fails closed: ${fix}, or make the deciding values known at preview time.`,
            },
            "spec.fluxSource",
        ))
            findings.push({ ...f, urn: typeof view.urn === "string" ? view.urn : undefined });
    }
    return findings;
}

export const rule = stackRule(
    {
        name: NAME,
        about: {
            what: "a production Stack deploys a full 40-hex `spec.commit` and sets no `spec.branch`; one that deploys\nfrom a Flux source (`spec.fluxSource`) names a source pinned to one revision; one that deploys from a\n`programRef` (which cannot be pinned) is allowed only when configured.",
            why: "PKO treats a branch as something to poll and roll out; anything shorter than a full SHA is\nresolved as a movable ref. The Argo CD + PKO guide shows promotion through a moving `release` branch\nand notes that only a pinned commit records exactly which revision is live.",
            fix: "set `spec.commit` to the full 40-character SHA you validated, remove `spec.branch`, and promote\nby changing the commit in Git; for a Flux source, set a full `spec.ref.commit` on its GitRepository or a\n`spec.ref.digest` on its OCIRepository.",
            notes: [
                "Fails closed: when the commit, the branch or the values that decide production are unknown.",
                "`pko-guard check` also holds a production Stack it read from a fetched source whose reference can\nmove (another repository's branch or tag, a chart version range) as not pinned: what the cluster receives\ncan change without a commit in the repository checked. It marks such objects with the\n`pko-guard/floating-source` annotation itself (a value written in the manifest is discarded).",
                "A Flux source is read as source-controller reads it: the Stack's `spec.fluxSource.sourceRef` names a\n`GitRepository`, `OCIRepository` or `Bucket` in the Stack's namespace (where PKO looks it up), judged among\nthe objects checked with it (the same cluster, for `pko-guard check`). A GitRepository checks out the\nfirst of `spec.ref.commit`, `name`, `tag`, `semver` and `branch` that is set (default: the `master` branch):\nonly a full `commit` SHA pins it, and each GitRepository it `include`s must be pinned too. An\nOCIRepository is pinned only by `spec.ref.digest` (a `semver` range or a `tag`, default `latest`, moves).\nA Bucket's objects change in place: never pinned. A source that is not among the objects judged is not\nknown to be pinned. `allowUnpinnableSources` does not apply to Flux sources; `allowFluxSource` of\n`pko-stack-repo-allowlist` only says whether `fluxSource` may be used at all.",
            ],
            reads: [
                "pulumi.com/Stack",
                "source.toolkit.fluxcd.io/GitRepository",
                "source.toolkit.fluxcd.io/OCIRepository",
                "source.toolkit.fluxcd.io/Bucket",
            ],
            readsProduction: true,
            patternSettings: [],
            example: [stack],
        },
        enforcementLevel: "mandatory",
        severity: "high",
        url: "https://www.pulumi.com/docs/iac/guides/continuous-delivery/argocd/",
        config: {
            allowUnpinnableSources: {
                type: "boolean",
                description:
                    "Allow production Stacks that deploy from programRef (a Program cannot be pinned to a commit). A fluxSource is judged by the source it names, whatever this says.",
                default: false,
            },
        },
    },
    (view, config, ctx) => {
        const problems = pinProblems(view, config.allowUnpinnableSources === true);
        if (problems.length === 0) {
            return [];
        }
        const who = describeStack(view);
        const fix = "set spec.commit to the full 40-hex SHA and remove spec.branch";
        return productionFindings(
            who,
            classify(view, ctx),
            {
                production: (reason) => `${who} is ${reason} but is not pinned: ${problems.join("; ")}; ${fix}.`,
                unknown: (reason) =>
                    `${who} is not pinned (${problems.join("; ")}) and ${reason}; the rule fails closed: ${fix}, or make the deciding values known at preview time.`,
            },
            pinField(view),
        );
    },
    undefined,
    (resources, _config, ctx) => fluxSourceFindings(resources, ctx),
);
