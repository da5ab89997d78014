/**
 * The pko-guard rule catalogue: every policy of the pack, one module a rule, named as the policy.
 * Importing this module does not start an analyzer; only the pack entry point (../index.ts) does.
 */
import { ResourceValidationPolicy, StackValidationPolicy } from "@pulumi/policy";
import { DescribedRule } from "./model/policy";
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

/** A rule of the pack: a CrossGuard policy that describes itself (`about`, policies/model/policy.ts). */
export type Rule = (ResourceValidationPolicy | StackValidationPolicy) & DescribedRule;

/**
 * Every rule file of policies/ is listed here, and nothing else (test/unit/meta.spec.ts). In this order: the analyzer calls policies in list order in every request, and the settings policy
 * (pko-guard-production) must publish the pack's production settings before any rule reads them.
 */
export const policies: Rule[] = [
    production.policy,
    credentials.policy,
    noClusterAdmin.policy,
    destroyOnFinalize.policy,
    pinnedCommit.policy,
    saClusterAdmin.policy,
    s3PublicAcl.policy,
    prodRefresh.policy,
    previewOnly.policy,
    repoAllowlist.policy,
    resyncFloor.policy,
    workspaceHardening.policy,
    escOrOidc.policy,
    authDelegator.policy,
    argoSyncOrder.policy,
    argoRendered.policy,
    nameLength.policy,
    secretCommitted.policy,
    workspaceProgram.policy,
];

export const POLICY_NAMES: string[] = policies.map((p) => p.name);
