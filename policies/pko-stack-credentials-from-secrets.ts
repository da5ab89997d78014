/**
 * pko-stack-credentials-from-secrets (mandatory)
 *
 * What it checks, why, the fix and what it reads: the `about` of its metadata below (`pko-guard explain`).
 */
import { stack } from "./model/examples";
import { credentialShape, findCredentialShapes } from "./model/credential-shapes";
import {
    extraNamesProblem,
    isCredentialName,
    isFilePointerName,
    isPathValue,
    isSecretConfigKey,
    looksLikeCredential,
    urlCredentialPart,
} from "./model/credentials";
import { RuleFinding, stackRule } from "./model/policy";
import { Ref, StackView, describeStack, resourceRef } from "./model/stack";
import { podContainers } from "./model/workspace";
import { Plain, UNKNOWN, configStrings, entries, get, isObject, list, quote } from "./model/values";

export const NAME = "pko-stack-credentials-from-secrets";

const SECRET_REF_FIX = "reference a Kubernetes Secret instead: {type: Secret, secret: {name, key}}";

function refProblem(ref: Ref, what: string): RuleFinding | undefined {
    const message = refMessage(ref, what);
    return message === undefined ? undefined : { message, field: ref.field };
}

function refMessage(ref: Ref, what: string): string | undefined {
    switch (ref.kind) {
        case "Secret":
            return ref.complete
                ? undefined
                : `${ref.field} (${what}) is a Secret reference without a secret name and key; set secret.name and secret.key.`;
        case "Literal":
            return `${ref.field} (${what}) is a Literal: the credential would sit in plaintext in the Stack manifest; ${SECRET_REF_FIX}.`;
        case "Env":
        case "FS":
            return `${ref.field} (${what}) comes from the operator's ${ref.kind === "Env" ? "environment" : "filesystem"}, not a Kubernetes Secret; ${SECRET_REF_FIX}.`;
        case "unknown":
            return `${ref.field} (${what}) is unknown during preview, so it cannot be verified to come from a Kubernetes Secret; make the reference's type known at preview time (type: Secret).`;
        case "malformed":
            return `${ref.field} (${what}) is not a valid PKO resource reference; ${SECRET_REF_FIX}.`;
    }
}

function mapUnknown(field: string, v: Plain): RuleFinding | undefined {
    return v === UNKNOWN
        ? {
              message: `${field} is unknown during preview, so its credentials cannot be verified to come from Kubernetes Secrets; make the map known at preview time.`,
              field,
          }
        : undefined;
}

/**
 * A file-pointer variable (GOOGLE_APPLICATION_CREDENTIALS, KUBECONFIG, `*_FILE`, ...) set to a value
 * in the manifest: fine when the value is a file path (the credential is in the file, mounted from a
 * Secret); a violation when it holds anything else, such as a JSON key or a token inline.
 */
function filePointerProblem(field: string, value: Plain, label = field): RuleFinding | undefined {
    if (value === undefined || value === null || (typeof value === "string" && isPathValue(value))) return undefined;
    return { message: filePointerMessage(label, value), field };
}

function filePointerMessage(field: string, value: Plain): string {
    if (value === UNKNOWN) {
        return `${field} names a credential file but its value is unknown during preview, so it cannot be verified to be a file path rather than the credential itself; make it a known path (e.g. /var/run/secrets/...).`;
    }
    return `${field} names a credential file but holds inline content, not a file path (an absolute path, or one starting with ./ or ~/): the credential would sit in plaintext in the Stack manifest; mount the credential from a Kubernetes Secret and set the variable to the file's path, or ${SECRET_REF_FIX}.`;
}

function checkEnvRefs(view: StackView, extra: string[], out: RuleFinding[]): void {
    const envRefs = get(view.spec, "envRefs");
    const unknown = mapUnknown("spec.envRefs", envRefs);
    if (unknown) {
        out.push(unknown);
        return;
    }
    for (const [name, value] of entries(envRefs)) {
        const ref = resourceRef(`spec.envRefs.${name}`, value);
        if (isCredentialName(name, extra)) {
            const p = refProblem(ref, "a credential");
            if (p) out.push(p);
        } else if (isFilePointerName(name)) {
            const p =
                ref.kind === "Literal"
                    ? filePointerProblem(ref.field, ref.literal ?? undefined, `${ref.field} (a Literal)`)
                    : ref.kind === "unknown"
                      ? refProblem(ref, "a credential file's path")
                      : undefined;
            if (p) out.push(p);
        } else if (ref.kind === "Literal" && looksLikeCredential(ref.literal)) {
            out.push({
                message: `spec.envRefs.${name} is a Literal whose value is a credential (${credentialShape(ref.literal)}); ${SECRET_REF_FIX}.`,
                field: ref.field,
            });
        }
    }
}

function checkPlainEnvs(view: StackView, extra: string[], out: RuleFinding[]): void {
    const envs = get(view.spec, "envs");
    for (const [name, value] of entries(envs)) {
        if (!isCredentialName(name, extra) && isFilePointerName(name)) {
            const p = filePointerProblem(`spec.envs.${name}`, value);
            if (p) out.push(p);
        } else if (isCredentialName(name, extra) || looksLikeCredential(value)) {
            out.push({
                message: `spec.envs.${name} holds a credential in plaintext; move it to spec.envRefs.${name} with {type: Secret, secret: {name, key}}.`,
                field: `spec.envs.${name}`,
            });
        }
    }
}

function checkSecrets(view: StackView, out: RuleFinding[]): void {
    const secrets = get(view.spec, "secrets");
    if (secrets === UNKNOWN || entries(secrets).length > 0) {
        out.push({
            message: `spec.secrets holds secret config values in plaintext in the Stack manifest; use spec.secretsRef with {type: Secret, secret: {name, key}} for each value.`,
            field: "spec.secrets",
        });
    }
    const secretsRef = get(view.spec, "secretsRef");
    const unknown = mapUnknown("spec.secretsRef", secretsRef);
    if (unknown) {
        out.push(unknown);
        return;
    }
    for (const [key, value] of entries(secretsRef)) {
        const p = refProblem(resourceRef(`spec.secretsRef.${key}`, value), "a secret config value");
        if (p) out.push(p);
    }
}

/**
 * Literal values that hold a credential by their shape, nested values included (JSON config values,
 * Program expressions): one finding per field, naming the field and the shape, never the value.
 */
export function literalShapeProblems(field: string, value: Plain, fix: string, out: RuleFinding[]): void {
    if (value === UNKNOWN) return;
    const { found, truncated } = findCredentialShapes(value);
    for (const f of found)
        out.push({
            message: `${field}${f.at} holds a credential in plaintext (${f.what}); ${fix}.`,
            field: `${field}${f.at}`,
        });
    if (truncated && found.length === 0)
        out.push({
            message: `${field} is too large or too deeply nested to be verified to hold no credential; the rule fails closed: simplify it.`,
            field,
        });
}

function checkConfig(view: StackView, out: RuleFinding[]): void {
    const fix = "move it to spec.secretsRef with {type: Secret, secret: {name, key}}";
    for (const [key, value] of entries(get(view.spec, "config"))) {
        if (isSecretConfigKey(key)) {
            out.push({
                message: `spec.config.${key} looks like a secret but is plain config in the Stack manifest; ${fix}.`,
                field: `spec.config.${key}`,
            });
            continue;
        }
        literalShapeProblems(`spec.config.${key}`, value, fix, out);
    }
    // configRef (PKO 2.3+) reads config values from ConfigMaps, which are plaintext: no secret config there.
    const configRef = get(view.spec, "configRef");
    if (configRef === UNKNOWN) {
        out.push(mapUnknown("spec.configRef", configRef)!);
        return;
    }
    for (const [key] of entries(configRef)) {
        if (isSecretConfigKey(key)) {
            out.push({
                message: `spec.configRef.${key} takes a secret-looking config value from a ConfigMap, which is not a Secret; ${fix}.`,
                field: `spec.configRef.${key}`,
            });
        }
    }
}

function checkGitAuth(view: StackView, out: RuleFinding[]): void {
    const gitAuth = get(view.spec, "gitAuth");
    if (gitAuth === UNKNOWN) {
        out.push(mapUnknown("spec.gitAuth", gitAuth)!);
        return;
    }
    const fields: [string[], string][] = [
        [["accessToken"], "a git access token"],
        [["sshAuth", "sshPrivateKey"], "a git SSH private key"],
        [["sshAuth", "password"], "a git SSH key password"],
        [["basicAuth", "password"], "a git password"],
        [["githubApp", "privateKey"], "a GitHub App private key"],
    ];
    for (const [path, what] of fields) {
        const v = get(gitAuth, ...path);
        if (v === undefined) continue;
        const p = refProblem(resourceRef(`spec.gitAuth.${path.join(".")}`, v), what);
        if (p) out.push(p);
    }
}

function checkUrl(field: string, value: Plain, fix: string, out: RuleFinding[]): void {
    const part = typeof value === "string" ? urlCredentialPart(value) : undefined;
    if (part)
        out.push({ message: `${field} embeds credentials in its URL (${part}); remove them and use ${fix}.`, field });
}

function checkUrls(view: StackView, out: RuleFinding[]): void {
    checkUrl("spec.projectRepo", view.projectRepo, "spec.gitAuth with Secret references", out);
    checkUrl("spec.backend", view.backend, "spec.envRefs with Secret references", out);
    checkUrl("spec.secretsProvider", get(view.spec, "secretsProvider"), "spec.envRefs with Secret references", out);
}

export function checkEnvVarList(field: string, env: Plain, extra: string[], out: RuleFinding[]): void {
    if (env === UNKNOWN) {
        out.push(mapUnknown(field, env)!);
        return;
    }
    list(env).forEach((e, i) => {
        if (!isObject(e)) return;
        const name = get(e, "name");
        const at = `${field}[${i}]`;
        const label = `${at}${typeof name === "string" ? ` (${quote(name)})` : ""}`;
        const credentialName = typeof name === "string" && isCredentialName(name, extra);
        const value = get(e, "value");
        if (!credentialName && typeof name === "string" && isFilePointerName(name)) {
            // Its value is a path; valueFrom (a ConfigMap holding the path, say) is fine too.
            const p = filePointerProblem(`${at}.value`, value, `${label} value`);
            if (p) out.push(p);
            return;
        }
        if (value !== undefined && (credentialName || looksLikeCredential(value))) {
            const shape = credentialShape(value);
            out.push({
                message: `${label} sets a credential as a literal value${shape ? ` (${shape})` : ""}; use valueFrom.secretKeyRef.`,
                field: `${at}.value`,
            });
            return;
        }
        if (!credentialName) return;
        const valueFrom = get(e, "valueFrom");
        if (valueFrom === UNKNOWN) {
            out.push({
                message: `${label} has a valueFrom unknown during preview, so it cannot be verified to come from a Secret; use valueFrom.secretKeyRef.`,
                field: `${at}.valueFrom`,
            });
        } else if (isObject(valueFrom) && get(valueFrom, "secretKeyRef") === undefined) {
            out.push({
                message: `${label} takes a credential from something other than a Secret; use valueFrom.secretKeyRef.`,
                field: `${at}.valueFrom`,
            });
        }
    });
}

/**
 * Credentials by shape anywhere else in a workspace pod template (a container's `args` or `command`, a probe's
 * header, an annotation): every field but the containers' `env`, judged by name and value above.
 */
function podTemplateShapeProblems(podTemplate: Plain, at: string, out: RuleFinding[]): void {
    const fix = "pass it from a Secret (valueFrom.secretKeyRef in env, or a mounted Secret volume)";
    for (const [key, value] of entries(podTemplate)) {
        if (key !== "spec") literalShapeProblems(`${at}.${key}`, value, fix, out);
    }
    const pod = get(podTemplate, "spec");
    for (const [key, value] of entries(pod)) {
        if (key !== "containers" && key !== "initContainers")
            literalShapeProblems(`${at}.spec.${key}`, value, fix, out);
    }
    for (const { field, container } of podContainers(pod, `${at}.spec`)) {
        for (const [key, value] of entries(container)) {
            if (key !== "env") literalShapeProblems(`${field}.${key}`, value, fix, out);
        }
    }
}

/**
 * The credentials a Workspace spec carries (a Stack's `spec.workspaceTemplate.spec`, or a Workspace's
 * `spec`, found at `at`): env of the workspace and of every container of its pod template, the stacks'
 * config items (a secret config value must not be a literal; the Workspace API reads secret values only
 * from the pod's environment or files, `valueFrom.env`/`valueFrom.path`), credentials by shape in any
 * literal config value, and credentials in the git URL or a stack's secrets provider URL.
 * Shared with the rule for Workspace objects.
 */
export function workspaceSpecProblems(wsSpec: Plain, at: string, extra: string[], out: RuleFinding[]): void {
    if (wsSpec === UNKNOWN) {
        out.push(mapUnknown(at, UNKNOWN)!);
        return;
    }
    checkEnvVarList(`${at}.env`, get(wsSpec, "env"), extra, out);
    for (const { field, container } of podContainers(get(wsSpec, "podTemplate", "spec"), `${at}.podTemplate.spec`)) {
        checkEnvVarList(`${field}.env`, get(container, "env"), extra, out);
    }
    podTemplateShapeProblems(get(wsSpec, "podTemplate"), `${at}.podTemplate`, out);
    const stacks = get(wsSpec, "stacks");
    if (stacks === UNKNOWN) out.push(mapUnknown(`${at}.stacks`, UNKNOWN)!);
    list(stacks).forEach((st, i) => {
        const config = get(st, "config");
        if (config === UNKNOWN) out.push(mapUnknown(`${at}.stacks[${i}].config`, UNKNOWN)!);
        list(config).forEach((item, j) => {
            const field = `${at}.stacks[${i}].config[${j}]`;
            if (item === UNKNOWN) {
                out.push(mapUnknown(field, UNKNOWN)!);
                return;
            }
            const key = get(item, "key");
            const value = get(item, "value");
            const secret = get(item, "secret");
            const named = typeof key === "string" && isSecretConfigKey(key);
            if (value !== undefined && value !== null && (secret === true || secret === UNKNOWN || named)) {
                out.push({
                    message: `${field}${typeof key === "string" ? ` (${quote(key)})` : ""} sets a secret config value as a literal; read it with valueFrom.env from a variable set by valueFrom.secretKeyRef, or use a Stack's spec.secretsRef.`,
                    field: `${field}.value`,
                });
                return;
            }
            literalShapeProblems(
                `${field}.value`,
                value,
                "read it with valueFrom.env from a variable set by valueFrom.secretKeyRef",
                out,
            );
        });
        checkUrl(
            `${at}.stacks[${i}].secretsProvider`,
            get(st, "secretsProvider"),
            "spec.envRefs with Secret references",
            out,
        );
    });
    checkUrl(`${at}.git.url`, get(wsSpec, "git", "url"), "git.auth with Secret references", out);
}

function checkWorkspace(view: StackView, extra: string[], out: RuleFinding[]): void {
    if (view.workspaceTemplate === UNKNOWN) {
        out.push(mapUnknown("spec.workspaceTemplate", UNKNOWN)!);
        return;
    }
    if (view.workspaceTemplate === undefined || view.workspaceTemplate === null) return;
    workspaceSpecProblems(get(view.workspaceTemplate, "spec"), "spec.workspaceTemplate.spec", extra, out);
}

export const rule = stackRule(
    {
        name: NAME,
        about: {
            what: "every credential a PKO Stack uses (the Pulumi access token, cloud keys, git auth tokens,\npasswords and SSH keys, secret config values, credentials in the workspace pod) comes\nfrom a Kubernetes Secret reference. Literal values, `Env`/`FS` refs, the plaintext `spec.secrets` and\n`spec.envs` fields, and credentials embedded in repository or backend URLs are violations.",
            why: "a Stack manifest is synced from Git (Argo CD) and readable by anyone who can read the custom\nresource; the PKO guide stores the access token in a Secret and references it with\n`envRefs.PULUMI_ACCESS_TOKEN: {type: Secret, ...}`, and the Argo CD guide does the same.",
            fix: "create a Kubernetes Secret and reference it: `{type: Secret, secret: {name, key}}` for envRefs,\nsecretsRef and gitAuth; `valueFrom.secretKeyRef` in the workspace pod; move secret config to secretsRef.",
            notes: [
                "Credential names: `PULUMI_ACCESS_TOKEN`, `*_TOKEN`, `*_SECRET*`, `*_PASSWORD`, `*_KEY`, cloud keys, and\nwhat `extraCredentialNames` matches; gitAuth tokens, passwords and SSH keys; `secretsRef`; secret-looking\n`config` keys; the workspace pod's env. Credentials in `projectRepo`/`backend` URLs are user-info or\nquery parameters such as `access_token` or `sig`.",
                "File-pointer variables (`GOOGLE_APPLICATION_CREDENTIALS`, `AWS_SHARED_CREDENTIALS_FILE`, `AWS_CONFIG_FILE`,\n`AWS_WEB_IDENTITY_TOKEN_FILE`, `AZURE_FEDERATED_TOKEN_FILE`, `KUBECONFIG`, and every `*_FILE` / `*_PATH` such\nas `PULUMI_CONFIG_PASSPHRASE_FILE`) name a file holding the credential: a literal value (envRefs\n`Literal`, `envs`, workspace env `value`) is fine when it is a path (absolute, or starting with `./`, `../`\nor `~/`; for `KUBECONFIG` a `:`-separated list of such paths; one line, no whitespace, quotes or braces)\nand a violation otherwise (inline content: a JSON key, a PEM block, a token); a value unknown during\npreview fails closed. A name `extraCredentialNames` matches is a credential even when it ends in `_FILE`.",
                "Credentials by value: whatever a field is called, a literal value pko-guard reads (envRefs `Literal`, env\n`value`, `config` values however nested, Workspace config, Program text, any field of the workspace pod\ntemplate: a container's `args`, `command` or probes) that has a credential's shape\nis a violation naming the field and the shape: a URL with a password in its user-info (a bare login such\nas `ssh://git@host/...` is not), a URL with a credential query parameter (`token`, `access_token`,\n`api_key`, `password`, `secret`, `sig`, `X-Amz-Signature`, ...), a PEM private key, an AWS access key id, a\nGCP service-account key, a JWT, Pulumi/GitHub/GitLab/Slack tokens, an Azure storage `AccountKey=`.",
                "PKO v2 fields: `configRef` keys that look secret are violations (ConfigMaps are plaintext);\n`gitAuth.githubApp.privateKey` must be a Secret reference; `secretsProvider` URLs are checked for\ncredentials.",
                "Messages name the field, never the value.",
            ],
            reads: ["pulumi.com/Stack"],
            readsProduction: false,
            patternSettings: ["extraCredentialNames"],
            example: [stack],
        },
        enforcementLevel: "mandatory",
        severity: "critical",
        url: "https://www.pulumi.com/docs/iac/guides/continuous-delivery/pulumi-kubernetes-operator/",
        config: {
            extraCredentialNames: {
                type: "array",
                items: { type: "string", minLength: 1 },
                description:
                    "Extra RE2 regular expressions (whole-name match) for environment variables that hold credentials.",
                default: [],
            },
        },
    },
    (view, config) => {
        if (view.spec === UNKNOWN) {
            return [
                {
                    message: `${describeStack(view)}: spec is unknown during preview, so its credentials cannot be verified to come from Kubernetes Secrets; make the spec known at preview time.`,
                    field: "spec",
                },
            ];
        }
        const extra = configStrings(config.extraCredentialNames);
        const bad = extraNamesProblem(extra);
        if (bad !== undefined) return [`${describeStack(view)}: ${bad}; fix the policy configuration.`];
        const out: RuleFinding[] = [];
        checkEnvRefs(view, extra, out);
        checkPlainEnvs(view, extra, out);
        checkSecrets(view, out);
        checkConfig(view, out);
        checkGitAuth(view, out);
        checkUrls(view, out);
        checkWorkspace(view, extra, out);
        return out;
    },
);
