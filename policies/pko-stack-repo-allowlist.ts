/**
 * pko-stack-repo-allowlist (mandatory)
 *
 * What it checks, why, the fix and what it reads: the `about` of its metadata below (`pko-guard explain`).
 */
import { stack } from "./model/examples";
import { displayUrl } from "./model/credentials";
import { RuleFinding, stackRule } from "./model/policy";
import { compilePattern, patternProblem } from "./model/production";
import { describeStack } from "./model/stack";
import { UNKNOWN, configStrings, get, quote } from "./model/values";

export const NAME = "pko-stack-repo-allowlist";

export const rule = stackRule(
    {
        name: NAME,
        about: {
            what: "`spec.projectRepo` matches one of the configured `allowedRepoPatterns` (when configured), is\nnever a plaintext `http://` URL, and Flux (`spec.fluxSource`) or Program (`spec.programRef`) sources\nare used only when configured (`allowFluxSource`, `allowProgramRef`).",
            why: "a Stack runs whatever program its source contains with the Stack's credentials and service\naccount; the source is the supply chain. Plain HTTP lets anyone on the path change the program.",
            fix: "use an approved repository over HTTPS or SSH, or add it to `allowedRepoPatterns`; set\n`allowFluxSource` or `allowProgramRef` to deploy from those sources.",
            notes: [
                "The workspace template sets no source of its own (`spec.workspaceTemplate.spec.git`, `.flux`, `.local`):\nPKO merges the template over the Workspace it builds, so such a source would replace the Stack's, past\nthis rule and the pinned commit.",
                "Messages show a repository as scheme, host and path only.",
            ],
            reads: ["pulumi.com/Stack"],
            readsProduction: false,
            patternSettings: ["allowedRepoPatterns"],
            example: [stack],
        },
        enforcementLevel: "mandatory",
        severity: "high",
        url: "https://www.pulumi.com/docs/iac/guides/continuous-delivery/pulumi-kubernetes-operator/",
        config: {
            allowedRepoPatterns: {
                type: "array",
                items: { type: "string", minLength: 1 },
                description:
                    "RE2 regular expressions a projectRepo URL must match; empty means any repository (the other checks still apply).",
                default: [],
            },
            allowFluxSource: { type: "boolean", description: "Allow spec.fluxSource.", default: false },
            allowProgramRef: { type: "boolean", description: "Allow spec.programRef.", default: false },
        },
    },
    (view, config) => {
        const who = describeStack(view);
        const out: RuleFinding[] = [];
        const patterns = configStrings(config.allowedRepoPatterns);
        const bad = patternProblem("allowedRepoPatterns", patterns);
        if (bad !== undefined) return [`${who}: ${bad}; fix the policy configuration.`];
        if (view.spec === UNKNOWN)
            return [
                {
                    message: `${who}: spec is unknown during preview, so its program source cannot be verified; the rule fails closed.`,
                    field: "spec",
                },
            ];
        const repo = view.projectRepo;
        if (repo === UNKNOWN) {
            out.push({
                message: `${who}: spec.projectRepo is unknown during preview, so it cannot be checked against the allowlist; the rule fails closed.`,
                field: "spec.projectRepo",
            });
        } else if (typeof repo === "string") {
            if (/^http:\/\//i.test(repo.trim())) {
                out.push({
                    message: `${who}: spec.projectRepo uses plaintext http://, so the program can be altered in transit; use https:// or ssh.`,
                    field: "spec.projectRepo",
                });
            }
            if (patterns.length > 0 && !patterns.some((p) => compilePattern(p)!.test(repo))) {
                out.push({
                    message: `${who}: spec.projectRepo ${quote(displayUrl(repo))} matches none of allowedRepoPatterns; use an approved repository or extend the allowlist.`,
                    field: "spec.projectRepo",
                });
            }
        }
        if (view.fluxSource !== undefined && view.fluxSource !== null && config.allowFluxSource !== true) {
            out.push({
                message: `${who}: spec.fluxSource is not allowed (allowFluxSource is off); deploy from an allowlisted projectRepo or enable allowFluxSource.`,
                field: "spec.fluxSource",
            });
        }
        if (view.programRef !== undefined && view.programRef !== null && config.allowProgramRef !== true) {
            out.push({
                message: `${who}: spec.programRef is not allowed (allowProgramRef is off); deploy from an allowlisted projectRepo or enable allowProgramRef.`,
                field: "spec.programRef",
            });
        }
        // PKO strategic-merges spec.workspaceTemplate over the Workspace it builds from the Stack's source
        // (stack_controller.go, setupWorkspace): a template's git, flux or local source replaces the Stack's,
        // past this allowlist and the pinned commit.
        const wt = view.workspaceTemplate;
        const wsSpec = wt === UNKNOWN ? UNKNOWN : get(wt, "spec");
        if (wsSpec === UNKNOWN) {
            out.push({
                message: `${who}: spec.workspaceTemplate is unknown during preview, so it cannot be verified not to replace the program source; the rule fails closed.`,
                field: "spec.workspaceTemplate",
            });
        } else {
            for (const source of ["git", "flux", "local"]) {
                const v = get(wsSpec, source);
                if (v !== undefined && v !== null) {
                    out.push({
                        message: `${who}: spec.workspaceTemplate.spec.${source} replaces the Stack's program source (PKO merges the template over it), bypassing the source rules; set the source on the Stack (projectRepo and commit) instead.`,
                        field: `spec.workspaceTemplate.spec.${source}`,
                    });
                }
            }
        }
        return out;
    },
);
