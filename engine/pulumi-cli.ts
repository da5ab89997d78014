/**
 * Running the Pulumi CLI: `preview --policy-pack` read from the engine's streaming JSON events (the gate's
 * preview of a user's stack, and the harness's previews), with the one-line failure reasons. Every command runs
 * in its own process group (support/process.ts), so a deadline or interrupt kills the language host and providers
 * too. Not the Automation API: it runs this CLI through execa without a process group (leaving those behind),
 * costs seconds of start-up (docs/contributing/benchmarks.md), and needs an event-log file where `--json` with
 * PULUMI_ENABLE_STREAMING_JSON_PREVIEW gives the same events on stdout.
 */
import * as path from "path";
import { StringDecoder } from "string_decoder";
import { Level, Row, normalizeMessage, row } from "../evaluation/rows";
import { ExecResult, exec } from "../support/process";
import { extended } from "../support/shapes";

/** Where the CLI and the plugins it should use are. */
export interface PulumiCli {
    pulumi: string;
    /** Folder to put first on PATH (the engine finds language hosts and providers there); none = PATH as is. */
    binDir?: string;
}

/** The user's own environment, with our toolchain first on PATH when one is used. */
export function userEnv(cli: PulumiCli): NodeJS.ProcessEnv {
    const own: NodeJS.ProcessEnv = cli.binDir
        ? { PATH: `${cli.binDir}${path.delimiter}${process.env.PATH ?? ""}` }
        : {};
    own.PULUMI_SKIP_UPDATE_CHECK = "true";
    return extended(process.env, own);
}

export interface EngineEvent {
    policyEvent?: { resourceUrn?: string; message: string; policyName: string; enforcementLevel: Level };
    diagnosticEvent?: { message: string; severity: string; urn?: string };
    policyRemediationEvent?: { resourceUrn?: string; policyName: string };
    /** A step the engine is about to take on a resource (op: create, update, delete, replace, same, read, ...). */
    resourcePreEvent?: { metadata?: { op?: string; urn?: string; type?: string } };
    /** The end of the run: how many resources each operation touches (the plan's summary). */
    summaryEvent?: { resourceChanges?: Record<string, number> };
}

/** The events that tell how a preview progresses (handed to a watcher as they come). */
const PROGRESS_KEYS = ['"resourcePreEvent"', '"summaryEvent"'];

/** Parses the engine's JSON event stream (one event per line; other lines are ignored). */
export function parseEvents(text: string): EngineEvent[] {
    const reader = new EventReader(true);
    reader.push(Buffer.from(text));
    return reader.end();
}

/** The most error diagnostics kept (they only explain a failure; policy events are all kept). */
const MAX_KEPT_DIAGNOSTICS = 100;

/**
 * Reads the engine's event stream incrementally, one line (one JSON event) at a time, and keeps every
 * policy event (findings and remediations) and the first error diagnostics; every other event (a resource's inputs and outputs, the
 * bulk of a large preview) is dropped as soon as it is read. However large the preview, no policy event
 * is lost and memory holds only what is kept. `all` keeps every event (small streams, tests).
 */
export class EventReader {
    private readonly decoder = new StringDecoder("utf8");
    /** The current line's text so far, in pieces (a long line is joined once, not once a chunk). */
    private partial: string[] = [];
    private readonly kept: EngineEvent[] = [];
    private diagnostics = 0;

    /** `watch` sees every progress event (resourcePreEvent, summaryEvent) as soon as its line is read. */
    constructor(
        private readonly all = false,
        private readonly watch?: (e: EngineEvent) => void,
    ) {}

    push(chunk: Buffer): void {
        const text = this.decoder.write(chunk);
        let start = 0;
        for (let nl = text.indexOf("\n"); nl >= 0; nl = text.indexOf("\n", start)) {
            this.partial.push(text.slice(start, nl));
            this.line(this.partial.join(""));
            this.partial = [];
            start = nl + 1;
        }
        if (start < text.length) this.partial.push(text.slice(start));
    }

    /** The kept events, once the stream has ended. */
    end(): EngineEvent[] {
        this.partial.push(this.decoder.end());
        this.line(this.partial.join(""));
        this.partial = [];
        return this.kept;
    }

    private line(l: string): void {
        if (l.trim() === "") return;
        if (this.watch && PROGRESS_KEYS.some((k) => l.includes(k))) {
            try {
                this.watch(JSON.parse(l) as EngineEvent);
            } catch {
                // not an event line
            }
        }
        // Cheap test first: most lines are resource events, parsed only when they might matter.
        if (
            !this.all &&
            !l.includes('"policyEvent"') &&
            !l.includes('"policyRemediationEvent"') &&
            !l.includes('"diagnosticEvent"')
        )
            return;
        let e: EngineEvent;
        try {
            e = JSON.parse(l) as EngineEvent;
        } catch {
            if (this.all) this.kept.push({});
            return;
        }
        if (this.all || e.policyEvent || e.policyRemediationEvent) {
            this.kept.push(e);
        } else if (e.diagnosticEvent?.severity === "error" && this.diagnostics < MAX_KEPT_DIAGNOSTICS) {
            this.diagnostics++;
            this.kept.push({ diagnosticEvent: e.diagnosticEvent });
        }
    }
}

/** The first line of a message, with the next one when the first only introduces it ("...exception:"). */
function firstLine(s: string): string {
    const [first = "", next] = normalizeMessage(s)
        .split("\n")
        .map((l) => l.trim())
        .filter(Boolean);
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
    /** More packs for the same run (the harness's `--policy-pack`), after this one, each with its config. */
    more?: { dir: string; config?: string }[];
}

export interface PreviewResult {
    rows: Row[];
    /** The pack's remediations (the engine's policyRemediationEvents): policy and resource URN. */
    remediations: { policy: string; urn: string }[];
    exitCode: number | null;
    /** Set when the preview failed for another reason than a mandatory violation. */
    error?: string;
    /**
     * What the CLI printed (event stream and stderr), for leak checks and the harness's autonames: all of it
     * with `keepOutput`, else only the tail kept for error messages.
     */
    output: string;
}

/** The `--policy-pack` (and `--policy-pack-config`) arguments of a pulumi command. */
export function policyArgs(pack: PolicyPackRef): string[] {
    return [pack, ...(pack.more ?? [])].flatMap((p) => [
        "--policy-pack",
        p.dir,
        ...(p.config ? ["--policy-pack-config", p.config] : []),
    ]);
}

/**
 * `pulumi preview --policy-pack` with the engine's JSON event stream, turned into rows. A non-zero exit
 * without a mandatory violation (program error, missing stack, bad config), or with an error the policies
 * do not explain, is an error, never a result.
 */
export async function previewWithPack(
    s: StackRef,
    pack: PolicyPackRef,
    o: { keepOutput?: boolean; onProgress?: (e: EngineEvent) => void } = { keepOutput: true },
): Promise<PreviewResult> {
    const args = ["preview", "-s", s.stack, ...policyArgs(pack), "--json", "--non-interactive"];
    const events = new EventReader(false, o.onProgress);
    const whole: Buffer[] = [];
    const r = await exec(s.cli.pulumi, args, {
        cwd: s.cwd,
        env: extended(s.env, { PULUMI_ENABLE_STREAMING_JSON_PREVIEW: "1", NO_COLOR: "1" }),
        timeoutMs: s.timeoutMs,
        onStdout: (chunk) => {
            events.push(chunk);
            if (o.keepOutput) whole.push(chunk);
        },
    });
    const log = events.end();
    const output = `${o.keepOutput ? Buffer.concat(whole).toString("utf8") : r.stdout}\n${r.stderr}`;
    const rows: Row[] = log
        .filter((e) => e.policyEvent)
        .map((e) => {
            const p = e.policyEvent!;
            return row(
                p.policyName,
                p.resourceUrn ?? "",
                p.enforcementLevel,
                normalizeMessage(p.message, pack.descriptions.get(p.policyName)),
            );
        });
    const remediations = log
        .filter((e) => e.policyRemediationEvent)
        .map((e) => ({
            policy: e.policyRemediationEvent!.policyName,
            urn: e.policyRemediationEvent!.resourceUrn ?? "",
        }));
    if (r.timedOut) return { rows, remediations, exitCode: r.code, error: failure("pulumi preview", r, log), output };
    // Mandatory violations alone end with one error diagnostic, "preview failed"; any other error
    // diagnostic (a program that throws after registering a violating resource, say) is a failed run.
    const otherErrors = log.filter(
        (e) =>
            e.diagnosticEvent?.severity === "error" &&
            normalizeMessage(e.diagnosticEvent.message).trim() !== "preview failed",
    );
    if (r.code !== 0 && (otherErrors.length > 0 || !rows.some((x) => x.level === "mandatory"))) {
        return {
            rows,
            remediations,
            exitCode: r.code,
            error: failure("pulumi preview", r, otherErrors.length > 0 ? otherErrors : log),
            output,
        };
    }
    return { rows, remediations, exitCode: r.code, output };
}

/**
 * `pulumi policy analyze --json`: the pack against the stack's state, without the program (the audit of a
 * deployed stack). Rows from the engine's policy events; exit code as the CLI gives it (non-zero on a mandatory
 * violation).
 */
export async function analyzeState(
    s: StackRef,
    pack: PolicyPackRef,
): Promise<{ rows: Row[]; exitCode: number | null; error?: string }> {
    const r = await exec(
        s.cli.pulumi,
        ["policy", "analyze", "-s", s.stack, ...policyArgs(pack), "--json", "--non-interactive"],
        {
            cwd: s.cwd,
            env: extended(s.env, { NO_COLOR: "1" }),
            timeoutMs: s.timeoutMs,
        },
    );
    const log = parseEvents(r.stdout);
    const rows = log
        .filter((e) => e.policyEvent)
        .map((e) =>
            row(
                e.policyEvent!.policyName,
                e.policyEvent!.resourceUrn ?? "",
                e.policyEvent!.enforcementLevel,
                normalizeMessage(e.policyEvent!.message, pack.descriptions.get(e.policyEvent!.policyName)),
            ),
        );
    const mandatory = rows.some((x) => x.level === "mandatory");
    if (r.timedOut || (r.code !== 0 && !mandatory))
        return { rows, exitCode: r.code, error: failure("pulumi policy analyze", r, log) };
    return { rows, exitCode: r.code };
}
