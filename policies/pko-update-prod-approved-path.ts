/**
 * pko-update-prod-approved-path (mandatory)
 *
 * What it checks, why, the fix and what it reads: the `about` of its metadata below (`pko-guard explain`).
 * Why: PKO v2's Update controller runs the operation on `stackName` with nothing checking who asked, while
 * the Stack controller creates its own Updates (`<stack>-<millis>`) and destroys only from its finalizer.
 */
import { ExampleResource } from "./model/examples";
import { RuleContext, RuleFinding, classify, resourceRule } from "./model/policy";
import { productionFindings } from "./model/production";
import { StackView, describeStack, stackView } from "./model/stack";
import { Plain, UNKNOWN, get, quote } from "./model/values";

export const NAME = "pko-update-prod-approved-path";

/** A preview of a production stack: it changes nothing, so it passes. */
const previewUpdate: ExampleResource = {
    type: "kubernetes:auto.pulumi.com/v1alpha1:Update",
    name: "webapp-preview",
    props: {
        apiVersion: "auto.pulumi.com/v1alpha1",
        kind: "Update",
        metadata: { name: "webapp-preview", namespace: "pulumi" },
        spec: { workspaceName: "webapp-production", stackName: "myorg/webapp/production", type: "preview" },
    },
};

export const UPDATE_TYPES: readonly string[] = ["kubernetes:auto.pulumi.com/v1alpha1:Update"];

/** Whether a resource is a PKO Update: by type token, or (a typed wrapper) by the object's own GVK. */
function isUpdate(type: string, props: Plain): boolean {
    if (UPDATE_TYPES.includes(type)) return true;
    if (!type.startsWith("kubernetes:") || type.endsWith("Patch")) return false;
    return get(props, "apiVersion") === "auto.pulumi.com/v1alpha1" && get(props, "kind") === "Update";
}

/** What an operation does to the stack, as a message says it; undefined for the ones that change nothing. */
function operation(type: Plain, remove: Plain, target: string): string | undefined {
    const removes = remove === true || remove === UNKNOWN ? " and removes the stack and its configuration" : "";
    if (type === "destroy") return `runs \`pulumi destroy\` on ${target}${removes}`;
    if (type === "up") return `runs \`pulumi up\` on ${target}`;
    if (type === UNKNOWN) return `may change ${target} (spec.type is unknown during preview)`;
    // preview and refresh change no resource; any other type PKO refuses to run ("unsupported update type").
    return undefined;
}

/** The stack an Update targets, as the pack's one production classification reads a Stack. */
function targetView(props: Plain, stackName: Plain) {
    const metadata = get(props, "metadata");
    return stackView({
        type: "kubernetes:pulumi.com/v1:Stack",
        name: "update",
        props: { apiVersion: "pulumi.com/v1", kind: "Stack", metadata, spec: { stack: stackName } },
    });
}

/** A classification's reason worded for an Update (its stack is `spec.stackName`). */
function forUpdate(reason: string): string {
    return reason.replace(/spec\.stack\b(?!Name)/g, "spec.stackName").replace(/the Stack may/g, "the stack may");
}

/**
 * A Stack's `spec.updateTemplate` is a strategic merge patch over every Update its controller creates
 * (stack_controller.go `applyUpdateTemplate`): a `type`, `stackName` or `workspaceName` there replaces the
 * operation PKO chose (a destroy on every sync, a preview Stack that deploys) or the stack it runs on.
 */
function templateProblems(view: StackView, ctx: RuleContext): RuleFinding[] {
    const who = describeStack(view);
    const template = get(view.spec, "updateTemplate", "spec");
    if (template === UNKNOWN)
        return [
            {
                message: `${who}: spec.updateTemplate is unknown during preview, so the operation its Updates run cannot be told; the rule fails closed: make it known.`,
                field: "spec.updateTemplate",
            },
        ];
    const set = ["type", "stackName", "workspaceName"].filter((f) => {
        const v = get(template, f);
        return v !== undefined && v !== null && v !== "";
    });
    if (set.length === 0) return [];
    const fields = set.map((f) => `spec.updateTemplate.spec.${f}`).join(", ");
    const field = `spec.updateTemplate.spec.${set[0]}`;
    const fix =
        "remove it: PKO chooses the operation (a preview for spec.preview, a destroy only from the finalizer) and the stack (spec.stack)";
    if (view.preview === true || view.preview === UNKNOWN)
        return [
            {
                message: `${who} is a preview Stack but sets ${fields}, which replaces the operation or stack of every Update it creates; ${fix}.`,
                field,
            },
        ];
    return productionFindings(
        who,
        classify(view, ctx),
        {
            production: (reason) =>
                `${who} is ${reason} and sets ${fields}, which replaces the operation or stack of every Update it creates; ${fix}.`,
            unknown: (reason) => `${who} sets ${fields}, and ${reason}; the rule fails closed: ${fix}.`,
        },
        field,
    );
}

const FIX =
    "change production through its Stack, or create the Update in a namespace listed in approvedUpdateNamespaces";

export const rule = resourceRule(
    {
        name: NAME,
        about: {
            what: "a PKO `Update` (auto.pulumi.com) that deploys or destroys (`spec.type: up` or `destroy`) is not aimed\nat a production stack, unless it is created in an approved namespace; and a Stack's `spec.updateTemplate`\ndoes not replace the operation or the stack of the Updates PKO creates for it.",
            why: "PKO runs an Update as soon as it exists, with the workspace's credentials: a `destroy` Update deletes\nevery resource of the stack with no finalizer, Stack or review in between (`spec.remove` also deletes the\nstack's state and config), and an `up` Update deploys outside the Stack that governs it.",
            fix: "change production through its Stack (the Stack controller creates its Updates), destroy it by deleting a\nStack whose `spec.destroyOnFinalize` is set through review, or create the Update in a namespace listed in\n`approvedUpdateNamespaces` (a break-glass namespace only a few may write to).",
            notes: [
                "The stack is production by the pack's one classification (pko-guard-production), read from the\nUpdate: `spec.stackName` against `productionStackPatterns`, its namespace against `productionNamespaces`,\nits labels against `productionLabels`. A deploying Update whose `spec.stackName` is not set or unknown\nduring preview fails closed, as does a `spec.type` unknown during preview.",
                "`preview` and `refresh` Updates change no resource and pass; PKO refuses to run any other type.",
                "A Stack's `spec.updateTemplate` is merged over every Update its controller creates: a `type` there (a\n`destroy` on every sync, an `up` from a preview Stack), a `stackName` or a `workspaceName` is refused on a\npreview Stack and on a production one (fails closed when production is unknown); the other options\n(`ttlAfterCompleted`, labels) pass.",
                "The Updates a Stack's controller creates are not in Git or a program; the webhook and audit do not\nwatch Updates.",
            ],
            reads: ["auto.pulumi.com/Update", "pulumi.com/Stack"],
            readsProduction: true,
            patternSettings: [],
            example: [previewUpdate],
        },
        enforcementLevel: "mandatory",
        severity: "critical",
        url: "https://www.pulumi.com/docs/iac/guides/continuous-delivery/pulumi-kubernetes-operator/",
        config: {
            approvedUpdateNamespaces: {
                type: "array",
                items: { type: "string", minLength: 1 },
                description:
                    "Namespaces where Updates that deploy or destroy production stacks are an approved path (break-glass).",
                default: [],
            },
        },
    },
    (resource, config, ctx) => {
        const stack = ctx.views.view(resource, "Stack");
        if (stack !== undefined) return stack.spec === UNKNOWN ? [] : templateProblems(stack, ctx);
        const props = ctx.views.props(resource);
        if (!isUpdate(String(resource.type ?? ""), props)) return [];
        const who = `Update ${JSON.stringify(String(resource.name ?? ""))}`;
        const spec = get(props, "spec");
        if (props === UNKNOWN || spec === UNKNOWN)
            return [
                {
                    message: `${who}: its spec is unknown during preview, so what it runs cannot be told; the rule fails closed.`,
                    field: "spec",
                },
            ];
        const stackName = get(spec, "stackName");
        const target = typeof stackName === "string" && stackName !== "" ? `stack ${quote(stackName)}` : "its stack";
        const does = operation(get(spec, "type"), get(spec, "remove"), target);
        if (does === undefined) return [];
        const namespace = get(props, "metadata", "namespace");
        const approved = Array.isArray(config.approvedUpdateNamespaces) ? config.approvedUpdateNamespaces : [];
        if (typeof namespace === "string" && approved.includes(namespace)) return [];
        if (stackName === undefined || stackName === null || stackName === "")
            return [
                {
                    message: `${who} ${does} but names no stack (spec.stackName), so whether it targets production cannot be told; the rule fails closed: set spec.stackName.`,
                    field: "spec.stackName",
                },
            ];
        const view = targetView(props, stackName);
        if (view === undefined) return [];
        return productionFindings(
            who,
            classify(view, ctx),
            {
                production: (reason) => `${who} ${does}, ${forUpdate(reason)}; ${FIX}.`,
                unknown: (reason) => `${who} ${does}, and ${forUpdate(reason)}; the rule fails closed: ${FIX}.`,
            },
            "spec.type",
        );
    },
);
