/**
 * pko-stack-secret-committed (advisory, stack-level)
 *
 * What it checks, why, the fix and what it reads: the `about` of its metadata below (`pko-guard explain`).
 */
import { governed } from "./model/examples";
import { RuleFinding, programRule } from "./model/policy";
import { fromManifests } from "./model/origin";
import { DEFAULT_NAMESPACE } from "./model/rbac/objects";
import { push } from "./model/values";
import { describeStack, secretsRead } from "./model/stack";
import { UNKNOWN, entries, get, plain, str } from "./model/values";
import { encryptedSecretValue } from "./model/sops";

export const NAME = "pko-stack-secret-committed";

const SECRET_TYPE = "kubernetes:core/v1:Secret";

/**
 * The keys of `data`/`stringData` that hold a readable value (or a value unknown during preview), as field paths;
 * `encrypted`: whether any other key holds a SOPS-encrypted value (./model/sops.ts), which is not counted.
 */
function filledKeys(props: ReturnType<typeof plain>): { fields: string[]; encrypted: boolean } {
    const fields: string[] = [];
    let encrypted = false;
    for (const field of ["data", "stringData"]) {
        for (const [key, value] of entries(get(props, field))) {
            if (encryptedSecretValue(props, field, key, value)) encrypted = true;
            else if (value === UNKNOWN || (typeof value === "string" && value.length > 0))
                fields.push(`${field}.${key}`);
        }
    }
    return { fields, encrypted };
}

export const rule = programRule(
    {
        name: NAME,
        about: {
            what: "a Kubernetes Secret that a PKO Stack reads (its Pulumi access token, git credentials, envRefs,\nsecretsRef) is not written with its values into YAML manifests: a GitOps repository that `pko-guard check`\nreads, or YAML that a Pulumi program hands to the provider's YAML or kustomize components.",
            why: "manifests live in Git, a Secret's `stringData` is plain text and its `data` only base64: anyone who can read the\nrepository (or its history, forks and CI logs) holds the credential. The Argo CD + PKO guide creates the\ntoken Secret out of band and commits only the Stack that references it.",
            fix: "create the Secret out of band (`kubectl create secret generic ...`), or from a secret store\n(External Secrets Operator, Sealed Secrets, SOPS), and keep only the Stack's reference in Git.",
            notes: [
                "The Secrets a Stack reads: those its `envRefs`, `secretsRef`, `gitAuth` and legacy token fields name, in\nits namespace, as patches leave the Stack. Written with values: a non-empty `data` or `stringData` key.\nYAML a program declares: the provider's `ConfigFile`, `ConfigGroup` and `kustomize.Directory`\ncomponents, told by the URN's parent types. Reported on the Secret, at its first filled key, naming the\nkeys and the Stacks.",
                "Only the names of the keys are ever shown, never a value. Keys with an empty value (placeholders) do\nnot count. Secrets declared in program code are not judged: the analyzer cannot tell a value from\nPulumi config secrets (encrypted in state) from a literal.",
                "SOPS-encrypted values are not committed credentials: a value in SOPS's `ENC[AES256_GCM,...]` form in a\nSecret that carries SOPS metadata (a top-level `sops` with a `mac`, as Flux's kustomize-controller, KSOPS\nand helm-secrets decrypt it); a `data` value that is a whole SOPS-encrypted file; and the keys a kustomize\n`secretGenerator` makes of an encrypted dotenv file (`envs`, its `sops_*` metadata keys included), which\nkustomize-controller decrypts before it builds. A value SOPS left in the clear (`encrypted_regex`,\n`unencrypted_suffix` and the like) counts like any other, and the message says the Secret's other values are\nencrypted.",
            ],
            reads: ["core/Secret", "pulumi.com/Stack"],
            readsProduction: false,
            patternSettings: [],
            example: governed,
        },
        enforcementLevel: "advisory",
        severity: "high",
        url: "https://www.pulumi.com/docs/iac/guides/continuous-delivery/argocd/",
    },
    (resources, _config, ctx) => {
        // Only a Secret from manifests can be a finding: without one (a program's own Secrets, or none), no
        // Stack's reads are gathered.
        if (!resources.some((r) => r.type === SECRET_TYPE && fromManifests(r.urn))) return [];
        // The Stacks (as their patches leave them) that read each Secret, by namespace and name.
        const readers = new Map<string, string[]>();
        for (const { view } of ctx.views.patchedStacks(resources)) {
            if (view.namespace === UNKNOWN) continue;
            const ns = view.namespace ?? DEFAULT_NAMESPACE;
            for (const name of secretsRead(view)) push(readers, `${ns}/${name}`, describeStack(view));
        }
        const findings: RuleFinding[] = [];
        if (readers.size === 0) return findings;
        for (const r of resources) {
            if (r.type !== SECRET_TYPE || !fromManifests(r.urn)) continue;
            const props = ctx.views.props(r);
            const name = str(get(props, "metadata", "name"));
            const ns = str(get(props, "metadata", "namespace"));
            if (typeof name !== "string" || ns === UNKNOWN) continue;
            const stacks = readers.get(`${ns ?? DEFAULT_NAMESPACE}/${name}`);
            if (!stacks) continue;
            const { fields, encrypted } = filledKeys(props);
            if (fields.length === 0) continue;
            // Key names only: the Kubernetes provider turns stringData into data, so messages never say which.
            const keys = [...new Set(fields.map((f) => f.slice(f.indexOf(".") + 1)))];
            // In name order: the engine and the mocks register resources in different orders.
            stacks.sort();
            const shown =
                stacks.length > 2
                    ? `${stacks.slice(0, 2).join(", ")} and ${stacks.length - 2} more`
                    : stacks.join(" and ");
            // The namespace as the object's identity has it: none written means the one it is applied to.
            const secret =
                ns === undefined
                    ? `${JSON.stringify(name)} (no metadata.namespace: "${DEFAULT_NAMESPACE}" assumed)`
                    : JSON.stringify(`${ns}/${name}`);
            findings.push({
                message:
                    `Secret ${secret}, read by ${shown}, is committed with values in its manifest (key${keys.length > 1 ? "s" : ""} ${keys
                        .slice(0, 5)
                        .map((k) => JSON.stringify(k))
                        .join(
                            ", ",
                        )}${keys.length > 5 ? ", ..." : ""}${encrypted ? `; SOPS encrypted its other values but left ${keys.length > 1 ? "these" : "this one"} in the clear` : ""}); ` +
                    `anyone who can read the repository can read them (data is only base64, stringData plain text): create it out of band or from a secret store, keep only the reference in Git, and rotate the credential.`,
                urn: typeof r.urn === "string" ? r.urn : undefined,
                field: fields[0],
            });
        }
        return findings;
    },
);
