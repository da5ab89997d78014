/**
 * pko-workspace-program-objects (mandatory)
 *
 * What it checks, why, the fix and what it reads: the `about` of its metadata below (`pko-guard explain`).
 */
import { workspace } from "./model/examples";
import { findCredentialShapes } from "./model/credential-shapes";
import { isSecretConfigKey, looksLikeCredential } from "./model/credentials";
import { RuleFinding, resourceRule } from "./model/policy";
import { Plain, UNKNOWN, entries, get, isObject, quote } from "./model/values";
import { workspaceSpecProblems } from "./pko-stack-credentials-from-secrets";
import { workspacePodProblems } from "./pko-stack-workspace-hardening";

export const NAME = "pko-workspace-program-objects";

export const WORKSPACE_TYPES: readonly string[] = ["kubernetes:auto.pulumi.com/v1alpha1:Workspace"];
export const PROGRAM_TYPES: readonly string[] = ["kubernetes:pulumi.com/v1:Program"];

/** Which PKO object a resource is: by type token, or (a typed wrapper) by the object's own GVK. */
export function pkoObjectKind(type: string, props: Plain): "Workspace" | "Program" | undefined {
    if (WORKSPACE_TYPES.includes(type)) return "Workspace";
    if (PROGRAM_TYPES.includes(type)) return "Program";
    if (!type.startsWith("kubernetes:") || type.endsWith("Patch")) return undefined;
    const apiVersion = get(props, "apiVersion");
    const kind = get(props, "kind");
    if (apiVersion === "auto.pulumi.com/v1alpha1" && kind === "Workspace") return "Workspace";
    if (apiVersion === "pulumi.com/v1" && kind === "Program") return "Program";
    return undefined;
}

function shapes(field: string, value: Plain, out: RuleFinding[]): void {
    if (value === UNKNOWN) {
        out.push({
            message: `${field} is unknown during preview, so it cannot be verified to hold no credential; make it known at preview time.`,
            field,
        });
        return;
    }
    const { found, truncated } = findCredentialShapes(value);
    for (const f of found)
        out.push({
            message: `${field}${f.at} holds a credential in plaintext (${f.what}); pass it as secret config of the Stack that runs the Program (spec.secretsRef).`,
            field: `${field}${f.at}`,
        });
    if (truncated && found.length === 0)
        out.push({
            message: `${field} is too large or too deeply nested to be verified to hold no credential; the rule fails closed: simplify it.`,
            field,
        });
}

/**
 * A property name that says credential but names or points at one (`secretName`, `tokenSecretRef`,
 * `passwordFile`, `apiKeyArn`): it holds a reference, not the credential.
 */
const NAMES_A_REFERENCE = /(name|ref|refs|arn|id|file|path|selector)$/i;

/** A literal a Program holds: a string with no `${...}` interpolation, or a number. */
function isLiteral(v: Plain): boolean {
    return (typeof v === "string" && v !== "" && !v.includes("${")) || typeof v === "number";
}

/**
 * Properties named like a credential (the Stack config key names, `isSecretConfigKey`) holding a literal, at any
 * depth of `value` (a Program's resource properties, `fn::secret` wrappers included: the literal is in the Program
 * all the same). Bounded: a value too deep is left to the shape check, which fails closed on it.
 */
function namedCredentialLiterals(field: string, value: Plain, out: RuleFinding[], depth = 0): void {
    if (depth > 32) return;
    const items: [string | undefined, string, Plain][] = Array.isArray(value)
        ? value.map((v, i) => [undefined, `[${i}]`, v])
        : entries(value).map(([k, v]) => [k, /^[A-Za-z_][A-Za-z0-9_]*$/.test(k) ? `.${k}` : `[${quote(k)}]`, v]);
    for (const [name, at, v] of items) {
        const named = name !== undefined && isSecretConfigKey(name) && !NAMES_A_REFERENCE.test(name);
        const literal = isObject(v) ? get(v, "fn::secret") : v;
        // A literal with a credential's shape is reported by the shape check already, once.
        if (named && isLiteral(literal) && !looksLikeCredential(literal)) {
            out.push({
                message: `${field}${at} is named like a credential and holds a literal in the Program; pass it as secret config of the Stack that runs the Program (spec.secretsRef) and refer to that config with \${...}.`,
                field: `${field}${at}`,
            });
        } else if (typeof v === "object" && v !== null) namedCredentialLiterals(`${field}${at}`, v, out, depth + 1);
    }
}

function programProblems(program: Plain): RuleFinding[] {
    if (program === UNKNOWN)
        return [
            {
                message:
                    "program is unknown during preview, so it cannot be verified to hold no credential; make it known at preview time.",
                field: "program",
            },
        ];
    const out: RuleFinding[] = [];
    const configuration = get(program, "configuration");
    if (configuration === UNKNOWN)
        out.push({
            message: "program.configuration is unknown during preview; make it known at preview time.",
            field: "program.configuration",
        });
    for (const [name, c] of entries(configuration)) {
        const def = get(c, "default");
        if (def !== undefined && def !== null && isSecretConfigKey(name)) {
            out.push({
                message: `program.configuration.${name} looks like a secret and has a default in the Program; remove the default and set it as secret config of the Stack (spec.secretsRef).`,
                field: `program.configuration.${name}.default`,
            });
            continue;
        }
        if (def !== undefined) shapes(`program.configuration.${name}.default`, def, out);
    }
    for (const part of ["variables", "resources", "outputs"]) {
        const v = get(program, part);
        if (v !== undefined) shapes(`program.${part}`, v, out);
    }
    namedCredentialLiterals("program.variables", get(program, "variables"), out);
    for (const [name, r] of entries(get(program, "resources")))
        namedCredentialLiterals(`program.resources.${name}.properties`, get(r, "properties"), out);
    return out;
}

export const rule = resourceRule(
    {
        name: NAME,
        about: {
            what: "a PKO `Workspace` or `Program` declared directly carries no plaintext credential, and a Workspace's\npod template is hardened as a Stack's workspace template must be.",
            why: "a Workspace created directly bypasses every Stack rule, and a Program is a Pulumi YAML program\nstored in a custom resource that anyone who can read it (or its Git repository) reads in plaintext.",
            fix: "reference Kubernetes Secrets (`valueFrom.secretKeyRef` in env; `valueFrom.env` for Workspace config\nread from such a variable), keep credentials out of Program text (pass them as secret config of the Stack\nthat runs the Program, through `spec.secretsRef`), and remove the privileged settings.",
            notes: [
                "They are judged like a Stack's own fields:\n- a `Workspace` (auto.pulumi.com/v1alpha1) carries no credential in plaintext (env values of the\n  workspace and of its pod template's containers, literal secret config values of its stacks, credentials\n  by shape in any literal config value, credentials in its git or secrets-provider URL) and its pod template\n  is hardened as `pko-stack-workspace-hardening` requires of a Stack's (no privileged, escalating or\n  Windows host-process containers, no host network/PID/IPC, hostPath or hostPort, no added capabilities). Its service account is\n  judged by `pko-stack-no-cluster-admin` (the pod template's `serviceAccountName` wins, as for a Stack);\n- a `Program` (pulumi.com/v1) carries no credential by shape in its `variables`, `resources` properties,\n  `outputs` or `configuration` defaults, gives no secret-looking `configuration` entry a default, and holds no\n  literal in a variable or resource property named like a credential (the names a Stack's `config` keys are\n  judged by: `password`, `token`, `secret`, `apiKey`, ...; `fn::secret` of a literal included; a name ending in\n  `Name`, `Ref`, `Arn`, `Id`, `File`, `Path` or `Selector`, such as `secretName`, names a credential and is fine).",
                "Messages name the field and the credential's shape, never the value. Fails closed when the spec (or the\nprogram) is unknown during preview.",
            ],
            reads: ["auto.pulumi.com/Workspace", "pulumi.com/Program"],
            readsProduction: false,
            patternSettings: [],
            example: [workspace],
        },
        enforcementLevel: "mandatory",
        severity: "critical",
        url: "https://www.pulumi.com/docs/iac/guides/continuous-delivery/pulumi-kubernetes-operator/",
    },
    (resource, _config, ctx) => {
        const props = ctx.views.props(resource);
        const kind = pkoObjectKind(String(resource.type ?? ""), props);
        if (!kind) return [];
        if (props === UNKNOWN)
            return [
                {
                    message: `${kind} ${JSON.stringify(String(resource.name ?? ""))}: its inputs are unknown during preview, so it cannot be verified; the rule fails closed.`,
                },
            ];
        if (kind === "Program") return programProblems(get(props, "program"));
        const spec = get(props, "spec");
        const out: RuleFinding[] = [];
        workspaceSpecProblems(spec, "spec", [], out);
        if (spec !== UNKNOWN) out.push(...workspacePodProblems(spec, "spec"));
        return out;
    },
);
