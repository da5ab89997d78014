/**
 * Running the Pulumi CLI: `preview --policy-pack` read from the engine's streaming JSON events (the gate's
 * preview of a user's stack, and the harness's previews), with the one-line failure reasons. The harness's
 * throw-away stacks (isolated environment, `up`, `destroy`, `stack export`) are in harness/stacks.ts.
 * Every command runs through core/process.ts: its own process group, a deadline, killed with everything it
 * started (language host, providers) on timeout, Ctrl-C or SIGTERM.
 *
 * Why not the Automation API (`@pulumi/pulumi/automation`, `LocalWorkspace` with `policyPacks` and
 * `onEvent`): it runs this same CLI underneath, but through execa without a process group, so a deadline
 * or an interrupt kills only the CLI and leaves the language host and providers behind (issue 10, item
 * 12); requiring it costs more than a second of start-up on these machines (measured 2026-11-23: 11-19 s
 * on a loaded 2-core machine, against ~0.05 s for child_process); and its event stream needs an event-log
 * file in a temporary folder, where `--json` with PULUMI_ENABLE_STREAMING_JSON_PREVIEW gives the same
 * engine events on stdout.
 */
import * as path from "path";
import { Level, Row, normalizeMessage, row } from "./rows";
import { ExecResult, exec } from "./process";

/** Where the CLI and the plugins it should use are. */
export interface PulumiCli {
    pulumi: string;
    /** Folder to put first on PATH (the engine finds language hosts and providers there); none = PATH as is. */
    binDir?: string;
}

/** The user's own environment, with our toolchain first on PATH when one is used. */
export function userEnv(cli: PulumiCli): NodeJS.ProcessEnv {
    return {
        ...process.env,
        ...(cli.binDir ? { PATH: `${cli.binDir}${path.delimiter}${process.env.PATH ?? ""}` } : {}),
        PULUMI_SKIP_UPDATE_CHECK: "true",
    };
}

interface EngineEvent {
    policyEvent?: { resourceUrn?: string; message: string; policyName: string; enforcementLevel: Level };
    diagnosticEvent?: { message: string; severity: string; urn?: string };
    policyRemediationEvent?: { resourceUrn?: string; policyName: string };
}

/** Parses the engine's JSON event stream (one event per line; other lines are ignored). */
export function parseEvents(text: string): EngineEvent[] {
    return text
        .split("\n")
        .filter((l) => l.trim() !== "")
        .map((l) => {
            try {
                return JSON.parse(l) as EngineEvent;
            } catch {
                return {};
            }
        });
}

/** The first line of a message, with the next one when the first only introduces it ("...exception:"). */
function firstLine(s: string): string {
    const [first = "", next] = normalizeMessage(s).split("\n").map((l) => l.trim()).filter(Boolean);
    return first.endsWith(":") && next ? `${first} ${next}` : first;
}

/** The most useful one-line reason a pulumi command failed. */
export function failure(what: string, r: ExecResult, events: EngineEvent[] = []): string {
    if (r.timedOut) return `${what} timed out`;
    const diag = events.find((e) => e.diagnosticEvent?.severity === "error")?.diagnosticEvent?.message;
    const detail = firstLine(diag ?? "") || firstLine(r.stderr) || firstLine(r.stdout) || `exit code ${r.code}`;
    return `${what} failed: ${detail}`.slice(0, 400);
}

export interface StackRef {
    cli: PulumiCli;
    /** The program folder the CLI runs in. */
    cwd: string;
    env: NodeJS.ProcessEnv;
    stack: string;
    timeoutMs: number;
}

export interface PolicyPackRef {
    dir: string;
    /** The `--policy-pack-config` file, if any. */
    config?: string;
    /** Policy descriptions by name, to strip the SDK's description prefix from messages. */
    descriptions: Map<string, string>;
}

export interface PreviewResult {
    rows: Row[];
    /** The pack's remediations (the engine's policyRemediationEvents): policy and resource URN. */
    remediations: { policy: string; urn: string }[];
    exitCode: number | null;
    /** Set when the preview failed for another reason than a mandatory violation. */
    error?: string;
    /** Everything the CLI printed (event stream and stderr), for leak checks. */
    output: string;
}

/** The `--policy-pack` (and `--policy-pack-config`) arguments of a pulumi command. */
export function policyArgs(pack: PolicyPackRef): string[] {
    return ["--policy-pack", pack.dir, ...(pack.config ? ["--policy-pack-config", pack.config] : [])];
}

/**
 * `pulumi preview --policy-pack` with the engine's JSON event stream, turned into rows. A non-zero exit
 * without a mandatory violation (program error, missing stack, bad config), or with an error the policies
 * do not explain, is an error, never a result.
 */
export async function previewWithPack(s: StackRef, pack: PolicyPackRef): Promise<PreviewResult> {
    const args = ["preview", "-s", s.stack, ...policyArgs(pack), "--json", "--non-interactive"];
    const r = await exec(s.cli.pulumi, args, {
        cwd: s.cwd,
        env: { ...s.env, PULUMI_ENABLE_STREAMING_JSON_PREVIEW: "1", NO_COLOR: "1" },
        timeoutMs: s.timeoutMs,
    });
    const log = parseEvents(r.stdout);
    const output = `${r.stdout}\n${r.stderr}`;
    const rows: Row[] = log
        .filter((e) => e.policyEvent)
        .map((e) => {
            const p = e.policyEvent!;
            return row(p.policyName, p.resourceUrn ?? "", p.enforcementLevel, normalizeMessage(p.message, pack.descriptions.get(p.policyName)));
        });
    const remediations = log
        .filter((e) => e.policyRemediationEvent)
        .map((e) => ({ policy: e.policyRemediationEvent!.policyName, urn: e.policyRemediationEvent!.resourceUrn ?? "" }));
    if (r.timedOut) return { rows, remediations, exitCode: r.code, error: failure("pulumi preview", r, log), output };
    // Mandatory violations alone end with one error diagnostic, "preview failed"; any other error
    // diagnostic (a program that throws after registering a violating resource, say) is a failed run.
    const otherErrors = log.filter((e) => e.diagnosticEvent?.severity === "error" && normalizeMessage(e.diagnosticEvent.message).trim() !== "preview failed");
    if (r.code !== 0 && (otherErrors.length > 0 || !rows.some((x) => x.level === "mandatory"))) {
        return { rows, remediations, exitCode: r.code, error: failure("pulumi preview", r, otherErrors.length > 0 ? otherErrors : log), output };
    }
    return { rows, remediations, exitCode: r.code, output };
}

/**
 * `pulumi policy analyze --json`: the pack against the stack's state, without the program (the audit of a
 * deployed stack). Rows from the engine's policy events; exit code as the CLI gives it (non-zero on a mandatory
 * violation).
 */
export async function analyzeState(s: StackRef, pack: PolicyPackRef): Promise<{ rows: Row[]; exitCode: number | null; error?: string }> {
    const r = await exec(s.cli.pulumi, ["policy", "analyze", "-s", s.stack, ...policyArgs(pack), "--json", "--non-interactive"], {
        cwd: s.cwd,
        env: { ...s.env, NO_COLOR: "1" },
        timeoutMs: s.timeoutMs,
    });
    const log = parseEvents(r.stdout);
    const rows = log
        .filter((e) => e.policyEvent)
        .map((e) => row(e.policyEvent!.policyName, e.policyEvent!.resourceUrn ?? "", e.policyEvent!.enforcementLevel, normalizeMessage(e.policyEvent!.message, pack.descriptions.get(e.policyEvent!.policyName))));
    const mandatory = rows.some((x) => x.level === "mandatory");
    if (r.timedOut || (r.code !== 0 && !mandatory)) return { rows, exitCode: r.code, error: failure("pulumi policy analyze", r, log) };
    return { rows, exitCode: r.code };
}

