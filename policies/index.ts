/**
 * The pko-guard rule catalogue: every policy of the pack, one module a rule, named as the policy, and how the
 * pack is built from them. Importing this module does not start an analyzer; only the pack entry point
 * (../index.ts) does. `buildPolicies` itself places the settings policy first (the analyzer calls a pack's
 * policies in order), so no list of rules has to remember to, and gives each pack its own settings channel
 * (model/settings.ts).
 */
import { ResourceValidationPolicy, StackValidationPolicy } from "@pulumi/policy";
import { DescribedRule, RuleDefinition } from "./model/policy";
import { productionChannel } from "./model/production";
import * as production from "./pko-guard-production";
import * as s3PublicAcl from "./aws-s3-no-public-acl";
import * as credentials from "./pko-stack-credentials-from-secrets";
import * as destroyOnFinalize from "./pko-stack-destroy-on-finalize-nonprod";
import * as noClusterAdmin from "./pko-stack-no-cluster-admin";
import * as pinnedCommit from "./pko-stack-prod-pinned-commit";
import * as saClusterAdmin from "./rbac-no-cluster-admin-serviceaccount";
import * as argoSyncOrder from "./argocd-app-pko-sync-order";
import * as argoRendered from "./argocd-app-rendered";
import * as authDelegator from "./pko-stack-auth-delegator";
import * as escOrOidc from "./pko-stack-esc-or-oidc-preferred";
import * as nameLength from "./pko-stack-name-length";
import * as previewOnly from "./pko-stack-preview-only-nonprod";
import * as prodRefresh from "./pko-stack-prod-refresh";
import * as repoAllowlist from "./pko-stack-repo-allowlist";
import * as resyncFloor from "./pko-stack-resync-floor";
import * as workspaceHardening from "./pko-stack-workspace-hardening";
import * as secretCommitted from "./pko-stack-secret-committed";
import * as workspaceProgram from "./pko-workspace-program-objects";
import * as updateApprovedPath from "./pko-update-prod-approved-path";

/** A rule of the pack: a CrossGuard policy that describes itself (`about`, policies/model/policy.ts). */
export type Rule = (ResourceValidationPolicy | StackValidationPolicy) & DescribedRule;

/**
 * The rules that read the pack's settings, in catalogue order (reports and listings follow it). Every rule file of
 * policies/ is here or is the settings policy, and nothing else (test/unit/meta.spec.ts).
 */
export const RULES: RuleDefinition<ResourceValidationPolicy | StackValidationPolicy>[] = [
    credentials.rule,
    noClusterAdmin.rule,
    destroyOnFinalize.rule,
    pinnedCommit.rule,
    saClusterAdmin.rule,
    s3PublicAcl.rule,
    prodRefresh.rule,
    previewOnly.rule,
    repoAllowlist.rule,
    resyncFloor.rule,
    workspaceHardening.rule,
    escOrOidc.rule,
    authDelegator.rule,
    argoSyncOrder.rule,
    argoRendered.rule,
    nameLength.rule,
    secretCommitted.rule,
    workspaceProgram.rule,
    updateApprovedPath.rule,
];

/**
 * A pack: the settings policy first, then every rule, all built around one new settings channel (see above).
 * The pack entry builds the analyzer's pack with it; each in-process evaluation builds its own.
 */
export function buildPolicies(): Rule[] {
    const settings = productionChannel();
    return [production.rule.build(settings), ...RULES.map((r) => r.build(settings))];
}

/**
 * The pack's policies, built once: the catalogue every command and report reads (names, metadata, config
 * schemas), and a pack to drive in process (tests, the bench).
 */
export const policies: Rule[] = buildPolicies();

export const POLICY_NAMES: string[] = policies.map((p) => p.name);
