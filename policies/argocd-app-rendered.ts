/**
 * argocd-app-rendered (mandatory)
 *
 * What it checks, why, the fix and what it reads: the `about` of its metadata below (`pko-guard explain`).
 */
import { RuleFinding, resourceRule } from "./model/policy";
import { NOT_RENDERED } from "./model/origin";
import { compilePattern, patternProblem } from "./model/production";
import { Plain, configStrings, get, plain } from "./model/values";

export const NAME = "argocd-app-rendered";

const ARGO_TYPE =
    /^kubernetes:(?:argoproj\.io\/[^:]+:(Application|ApplicationSet)|kustomize\.toolkit\.fluxcd\.io\/[^:]+:(Kustomization)|helm\.toolkit\.fluxcd\.io\/[^:]+:(HelmRelease))$/;

/** At most this many reasons are reported for one object (each is one finding). */
const MAX_REASONS = 20;

/** The source a reason is about: the field it starts with (`spec.source`, `spec.sources[2]`), as check writes it. */
const SOURCE_FIELD = /^(spec\.source|spec\.sources\[(\d+)\])(?=[ .:])/;

/**
 * The field a reason is about: check writes each reason starting with the field it is about (`spec.source could
 * not be fetched: ...`, `spec.generators[0].git.repoURL ...`); a reason that starts otherwise names none.
 */
const REASON_FIELD = /^spec(?:\.[A-Za-z0-9_]+|\[\d+\])*(?=[ .:;,]|$)/;

/**
 * The fields of an Application's sources whose repoURL matches one of the patterns: sources the platform team
 * declared judged in their own repository's CI.
 */
function judgedElsewhere(spec: Plain, patterns: string[]): Set<string> {
    const out = new Set<string>();
    if (patterns.length === 0) return out;
    const matches = (source: Plain) => {
        const url = get(source, "repoURL");
        return typeof url === "string" && patterns.some((p) => compilePattern(p)!.test(url));
    };
    if (matches(get(spec, "source"))) out.add("spec.source");
    const sources = get(spec, "sources");
    if (Array.isArray(sources)) sources.forEach((s: Plain, i) => matches(s) && out.add(`spec.sources[${i}]`));
    return out;
}

export const rule = resourceRule(
    {
        name: NAME,
        about: {
            what: "`pko-guard check` computed everything an Argo CD Application or ApplicationSet, or a Flux\nKustomization or HelmRelease, applies: each ApplicationSet's generators were expanded and its template\nexecuted as Argo CD would, and each source was read and rendered from this repository.",
            why: "what cannot be computed cannot be judged: a Stack that an unexpanded generator, a failing template or a\nchart from a Helm repository would apply reaches the cluster unseen, and a folder nobody else renders is\njudged with its defaults instead of the values Argo CD passes. A gate that passes what it could not judge\nfails open.",
            fix: "use what check expands (see the notes) and fix templates that do not execute; vendor remote charts\nand other repositories' paths into this repository. A source judged in its own CI: list its repoURL in\n`sourcesJudgedElsewhere`, or waive the finding for one Application with `allowFailClosed: true`.",
            notes: [
                "What check expands: ApplicationSet generators `list` (with `elements` or `elementsYaml`), git\n`directories` and `files`, and `matrix` and `merge` of those (not `templatePatch`); sources that are\nfolders of this repository (directory, kustomize, Helm). A waiver of a finding here sets\n`allowFailClosed: true` and an expiry.",
                "For Flux: a Kustomization or HelmRelease whose source (`spec.sourceRef`, a chart's `sourceRef` or\n`chartRef`) is not a GitRepository of this repository, whose `substituteFrom` or `valuesFrom` names a\nConfigMap or Secret that is not in the repository (and not `optional`) or is SOPS-encrypted, or that\napplies a SOPS-encrypted object a rule reads, fails closed; so does one more than 10 levels below its\nentry point.",
                "The reasons are computed by `pko-guard check` and carried on the object in the\n`pko-guard/not-rendered` annotation, which check sets itself (a value written in the manifest is\ndiscarded). Every finding fails closed. In a Pulumi program the annotation is absent and the rule passes.",
            ],
            reads: [
                "argoproj.io/Application",
                "argoproj.io/ApplicationSet",
                "kustomize.toolkit.fluxcd.io/Kustomization",
                "helm.toolkit.fluxcd.io/HelmRelease",
            ],
            readsProduction: false,
            patternSettings: ["sourcesJudgedElsewhere"],
            example: [
                {
                    type: "kubernetes:argoproj.io/v1alpha1:Application",
                    name: "webapp",
                    props: {
                        apiVersion: "argoproj.io/v1alpha1",
                        kind: "Application",
                        metadata: { name: "webapp", namespace: "argocd" },
                        spec: {
                            project: "default",
                            source: { repoURL: "https://github.com/myorg/gitops.git", path: "stacks/webapp" },
                            destination: { server: "https://kubernetes.default.svc", namespace: "pulumi" },
                        },
                    },
                },
            ],
        },
        enforcementLevel: "mandatory",
        severity: "high",
        url: "https://argo-cd.readthedocs.io/en/stable/operator-manual/applicationset/",
        config: {
            sourcesJudgedElsewhere: {
                type: "array",
                items: { type: "string", minLength: 1 },
                description:
                    "RE2 regular expressions of source repoURLs (a Helm repository, another git repository) that are judged in their own repository's CI: what check cannot read from such a source is not a finding here. Empty: every such source fails closed.",
                default: [],
            },
        },
    },
    (resource, config) => {
        const m = ARGO_TYPE.exec(String(resource.type ?? ""));
        if (!m) return [];
        const props = plain(resource.props);
        const reasons = get(props, "metadata", "annotations", NOT_RENDERED);
        if (typeof reasons !== "string" || reasons.trim() === "") return [];
        const patterns = configStrings(config.sourcesJudgedElsewhere);

        const name = get(props, "metadata", "name");
        const ns = get(props, "metadata", "namespace");
        const kind = m[1] ?? (m[2] ? "Flux Kustomization" : "Flux HelmRelease");
        const who = `${kind} ${JSON.stringify(`${typeof ns === "string" && ns !== "" ? `${ns}/` : ""}${typeof name === "string" ? name : String(resource.name ?? "")}`)}`;
        const bad = patternProblem("sourcesJudgedElsewhere", patterns);
        if (bad !== undefined) return [`${who}: ${bad}; fix the policy configuration.`];
        const elsewhere = judgedElsewhere(get(props, "spec"), patterns);
        const lines = reasons
            .split("\n")
            .map((l) => l.trim())
            .filter((l) => l !== "" && !elsewhere.has(SOURCE_FIELD.exec(l)?.[1] ?? ""));
        const shown: RuleFinding[] = lines.slice(0, MAX_REASONS).map((reason) => {
            const finding: RuleFinding = {
                message: `${who}: ${reason}; check could not evaluate what it applies, so the rule fails closed.`,
            };
            const field = REASON_FIELD.exec(reason)?.[0];
            if (field !== undefined) finding.field = field;
            return finding;
        });
        if (lines.length > MAX_REASONS)
            shown.push({
                message: `${who}: ${lines.length - MAX_REASONS} more reasons; check could not evaluate what it applies, so the rule fails closed.`,
            });
        return shown;
    },
);
