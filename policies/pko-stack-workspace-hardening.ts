/**
 * pko-stack-workspace-hardening (mandatory)
 *
 * What it checks, why, the fix and what it reads: the `about` of its metadata below (`pko-guard explain`).
 */
import { stack } from "./model/examples";
import { RuleFinding, stackRule } from "./model/policy";
import { describeStack } from "./model/stack";
import { podContainers, workspacePodSpec } from "./model/workspace";
import { Plain, UNKNOWN, bool, get, isObject, list } from "./model/values";

export const NAME = "pko-stack-workspace-hardening";

function flag(field: string, v: Plain, what: string, out: RuleFinding[]): void {
    const b = bool(v);
    if (b === true) out.push({ message: `${field} is true: ${what}; remove it.`, field });
    else if (b === UNKNOWN)
        out.push({
            message: `${field} is unknown during preview (${what} if true); the rule fails closed: make it known and false.`,
            field,
        });
}

/**
 * Added capabilities beyond what the restricted Pod Security profile allows: it requires `drop: [ALL]` and allows
 * adding back `NET_BIND_SERVICE` alone (kubernetes.io/docs/concepts/security/pod-security-standards, "Capabilities
 * (v1.22+)"; pod-security-admission's `capabilities_restricted` check).
 */
function capabilityProblem(field: string, capabilities: Plain): RuleFinding | undefined {
    const message = capabilityMessage(field, capabilities);
    if (message === undefined) return undefined;
    // The field the message starts with: `add`, or `drop` when that is what is unknown.
    return { message, field: message.startsWith(`${field}.drop `) ? `${field}.drop` : `${field}.add` };
}

function capabilityMessage(field: string, capabilities: Plain): string | undefined {
    const add = get(capabilities, "add");
    if (add === UNKNOWN)
        return `${field}.add is unknown during preview (it may add Linux capabilities); the rule fails closed: make it known.`;
    const added = list(add);
    if (added.length === 0) return undefined;
    if (!added.every((c) => c === "NET_BIND_SERVICE"))
        return `${field}.add adds Linux capabilities beyond NET_BIND_SERVICE (the only one the restricted Pod Security profile allows); remove them, keep drop: [ALL].`;
    const drop = get(capabilities, "drop");
    if (drop === UNKNOWN)
        return `${field}.drop is unknown during preview, so NET_BIND_SERVICE may be added to the default capabilities; the rule fails closed: make it known, with ALL.`;
    if (list(drop).some((c) => c === "ALL")) return undefined;
    return `${field}.add adds NET_BIND_SERVICE without ${field.split(".").pop()}.drop: [ALL]; the restricted Pod Security profile allows it only when every other capability is dropped: add drop: [ALL].`;
}

/** The hardening problems of one container of a workspace pod, found at `field`. */
function containerProblems(field: string, container: Plain, out: RuleFinding[]): void {
    const sc = get(container, "securityContext");
    if (sc === UNKNOWN) {
        out.push({
            message: `${field}.securityContext is unknown during preview; the rule fails closed.`,
            field: `${field}.securityContext`,
        });
        return;
    }
    flag(`${field}.securityContext.privileged`, get(sc, "privileged"), "the container is privileged", out);
    flag(
        `${field}.securityContext.allowPrivilegeEscalation`,
        get(sc, "allowPrivilegeEscalation"),
        "the container may escalate privileges",
        out,
    );
    flag(
        `${field}.securityContext.windowsOptions.hostProcess`,
        get(sc, "windowsOptions", "hostProcess"),
        "the container runs as a Windows host process, with the node's privileges",
        out,
    );
    const p = capabilityProblem(`${field}.securityContext.capabilities`, get(sc, "capabilities"));
    if (p) out.push(p);
    const ports = get(container, "ports");
    if (
        ports === UNKNOWN ||
        list(ports).some(
            (p) =>
                p === UNKNOWN ||
                get(p, "hostPort") === UNKNOWN ||
                (get(p, "hostPort") !== undefined && get(p, "hostPort") !== null && get(p, "hostPort") !== 0),
        )
    ) {
        out.push({
            message: `${field}.ports ${ports === UNKNOWN ? "are unknown during preview" : "bind a hostPort on the node"}; remove hostPort (the workspace needs no node port).`,
            field: `${field}.ports`,
        });
    }
}

/**
 * The hardening problems of a workspace's pod template, for a Workspace spec found at `at` (a Stack's
 * `spec.workspaceTemplate.spec`, or a Workspace's `spec`). Shared with the rule for Workspace objects.
 */
export function workspacePodProblems(wsSpec: Plain, at: string): RuleFinding[] {
    const podTemplate = get(wsSpec, "podTemplate");
    const pod = get(podTemplate, "spec");
    const POD = `${at}.podTemplate.spec`;
    if (wsSpec === UNKNOWN || podTemplate === UNKNOWN || pod === UNKNOWN) {
        return [
            {
                message: `${at} is unknown during preview, so the workspace pod cannot be verified to be unprivileged; the rule fails closed.`,
                field: at,
            },
        ];
    }
    const out: RuleFinding[] = [];
    flag(`${POD}.hostNetwork`, get(pod, "hostNetwork"), "the workspace shares the node's network", out);
    flag(`${POD}.hostPID`, get(pod, "hostPID"), "the workspace sees the node's processes", out);
    flag(`${POD}.hostIPC`, get(pod, "hostIPC"), "the workspace shares the node's IPC", out);
    // Pod Security's baseline profile forbids a Windows host process at either level, as it does privileged.
    flag(
        `${POD}.securityContext.windowsOptions.hostProcess`,
        get(pod, "securityContext", "windowsOptions", "hostProcess"),
        "the workspace runs as a Windows host process, with the node's privileges",
        out,
    );
    const volumes = get(pod, "volumes");
    if (volumes === UNKNOWN)
        out.push({
            message: `${POD}.volumes is unknown during preview, so host-path volumes cannot be ruled out; the rule fails closed.`,
            field: `${POD}.volumes`,
        });
    list(volumes).forEach((v, i) => {
        const hp = get(v, "hostPath");
        if (v === UNKNOWN || (hp !== undefined && hp !== null))
            out.push({
                message: `${POD}.volumes[${i}] ${v === UNKNOWN ? "is unknown during preview" : "mounts a hostPath"}; use an emptyDir or a PersistentVolumeClaim.`,
                field: `${POD}.volumes[${i}]`,
            });
    });
    for (const { field, container } of podContainers(pod, POD)) containerProblems(field, container, out);
    // Containers given as a non-list or items that are not objects are reported, not skipped.
    for (const kind of ["containers", "initContainers"]) {
        const cs = get(pod, kind);
        // Unknown only in a preview; an item that is not an object is malformed in any run.
        const unknown = cs === UNKNOWN || list(cs).some((c) => c === UNKNOWN);
        if (unknown || list(cs).some((c) => c !== null && !isObject(c))) {
            const what = unknown ? "is unknown during preview" : "holds an item that is not an object";
            out.push({ message: `${POD}.${kind} ${what}; the rule fails closed.`, field: `${POD}.${kind}` });
        }
    }
    return out;
}

export const rule = stackRule(
    {
        name: NAME,
        about: {
            what: "a Stack's workspace template never asks for privileged containers, privilege escalation, Windows host\nprocesses, host network/PID/IPC, host-path volumes, host ports or added capabilities (adding back `NET_BIND_SERVICE` with\n`drop: [ALL]`, as the restricted Pod Security profile allows, is fine). A Stack without a workspace template is fine\n(PKO's default workspace runs with the restricted profile).",
            why: "the workspace pod runs program code from Git with the Stack's credentials; a privileged or\nhost-sharing pod turns a compromised program into a compromised node.",
            fix: "remove `privileged`, `allowPrivilegeEscalation`, `windowsOptions.hostProcess`, `hostNetwork`/`hostPID`/`hostIPC`, `hostPath` volumes,\n`hostPort` and `capabilities.add` (but `NET_BIND_SERVICE` with `drop: [ALL]`) from `spec.workspaceTemplate`.",
            notes: ["Fails closed when any of those settings is unknown during preview."],
            reads: ["pulumi.com/Stack"],
            readsProduction: false,
            patternSettings: [],
            example: [stack],
        },
        enforcementLevel: "mandatory",
        severity: "critical",
        url: "https://kubernetes.io/docs/concepts/security/pod-security-standards/",
    },
    (view) => {
        const wt = view.workspaceTemplate;
        if (wt === undefined || wt === null) return [];
        if (
            wt === UNKNOWN ||
            get(wt, "spec") === UNKNOWN ||
            get(wt, "spec", "podTemplate") === UNKNOWN ||
            workspacePodSpec(view) === UNKNOWN
        ) {
            return [
                {
                    message: `${describeStack(view)}: spec.workspaceTemplate is unknown during preview, so the workspace pod cannot be verified to be unprivileged; the rule fails closed.`,
                    field: "spec.workspaceTemplate",
                },
            ];
        }
        return workspacePodProblems(get(wt, "spec"), "spec.workspaceTemplate.spec");
    },
);
