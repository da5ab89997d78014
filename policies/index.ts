/**
 * The pko-guard rule catalogue: every policy of the pack, one module a rule, named as the policy.
 * Importing this module does not start an analyzer; only the pack entry point (../index.ts) does.
 */
import { Policies } from "@pulumi/policy";
import * as s3PublicAcl from "./aws-s3-no-public-acl";
import * as credentials from "./pko-stack-credentials-from-secrets";
import * as destroyOnFinalize from "./pko-stack-destroy-on-finalize-nonprod";
import * as noClusterAdmin from "./pko-stack-no-cluster-admin";
import * as pinnedCommit from "./pko-stack-prod-pinned-commit";
import * as saClusterAdmin from "./rbac-no-cluster-admin-serviceaccount";

export const policies: Policies = [
    credentials.policy,
    noClusterAdmin.policy,
    destroyOnFinalize.policy,
    pinnedCommit.policy,
    saClusterAdmin.policy,
    s3PublicAcl.policy,
];

export const POLICY_NAMES: string[] = policies.map((p) => p.name);
