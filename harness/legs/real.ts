/**
 * The real leg: `pulumi preview --policy-pack` with the real CLI, engine, nodejs language host and
 * Kubernetes provider, offline. Each fixture gets its own PULUMI_HOME, a local file backend and a
 * passphrase secrets provider, in a temporary program folder whose files are symbolic links to the
 * fixture's (Node resolves them to their real paths, so the fixture's imports and the repository's
 * node_modules work; stack config files land in the temporary folder, never in the fixture). The
 * Kubernetes provider renders YAML to a temporary folder instead of talking to a cluster, so previews
 * are deterministic without one. Violations are read from the engine's structured event stream
 * (`--json` with PULUMI_ENABLE_STREAMING_JSON_PREVIEW), not from human output.
 */
import { spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { Fixture } from "../expect";
import { Level, LegResult, Row, normalizeMessage, row } from "../model";
import { REPO_ROOT } from "../paths";
import { Toolchain } from "../toolchain";
import { track, untrack } from "../cleanup";
import { autonamesFromEvents, maskAutonames } from "../autonames";

export interface RealOptions {
    toolchain: Toolchain;
    timeoutMs: number;
    /** The policy pack folder (default: this repository). */
    packDir?: string;
    /** Policy descriptions by name, to strip the SDK's description prefix from messages. */
    descriptions: Map<string, string>;
    /** Keep the temporary folder (for debugging). */
    keep?: boolean;
}

interface Exec {
    code: number | null;
    stdout: string;
    stderr: string;
    timedOut: boolean;
}

/** Runs a command with a deadline, killing its whole process group on timeout. */
export function exec(cmd: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; input?: string; timeoutMs: number }): Promise<Exec> {
    return new Promise((resolve) => {
        const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ["pipe", "pipe", "pipe"], detached: true });
        track(child);
        let stdout = "";
        let stderr = "";
        let timedOut = false;
        child.stdout!.on("data", (d) => (stdout = (stdout + d.toString()).slice(-200000)));
        child.stderr!.on("data", (d) => (stderr = (stderr + d.toString()).slice(-200000)));
        child.stdin!.on("error", () => undefined);
        child.stdin!.end(opts.input ?? "");
        const timer = setTimeout(() => {
            timedOut = true;
            try {
                process.kill(-child.pid!, "SIGKILL");
            } catch {
                child.kill("SIGKILL");
            }
        }, opts.timeoutMs);
        child.once("error", (e) => {
            clearTimeout(timer);
            untrack(child);
            resolve({ code: null, stdout, stderr: `${stderr}${e.message}`, timedOut });
        });
        child.once("close", (code) => {
            clearTimeout(timer);
            untrack(child);
            resolve({ code, stdout, stderr, timedOut });
        });
    });
}

/** The environment every pulumi invocation of a fixture runs with. */
export function pulumiEnv(toolchain: Toolchain, tmp: string): NodeJS.ProcessEnv {
    // No in-cluster configuration may leak in: the provider renders YAML and never talks to a cluster.
    const { KUBERNETES_SERVICE_HOST: _h, KUBERNETES_SERVICE_PORT: _p, ...inherited } = process.env;
    return {
        ...inherited,
        PATH: `${toolchain.binDir}${path.delimiter}${process.env.PATH ?? ""}`,
        PULUMI_HOME: path.join(tmp, "home"),
        PULUMI_BACKEND_URL: `file://${path.join(tmp, "state")}`,
        PULUMI_CONFIG_PASSPHRASE: "pko-guard-harness",
        PULUMI_SKIP_UPDATE_CHECK: "true",
        PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
        PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK: "true",
        PULUMI_SKIP_CONFIRMATIONS: "true",
        PULUMI_DIY_BACKEND_NO_LEGACY_WARNING: "true",
        PULUMI_ACCESS_TOKEN: "",
        KUBECONFIG: path.join(tmp, "no-kubeconfig"),
        TS_NODE_TRANSPILE_ONLY: "true",
    };
}

interface EngineEvent {
    policyEvent?: { resourceUrn?: string; message: string; policyName: string; enforcementLevel: Level };
    diagnosticEvent?: { message: string; severity: string; urn?: string };
}

/** Parses the engine's JSON event stream (one event per line). */
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
function failure(what: string, r: Exec, events: EngineEvent[] = []): string {
    if (r.timedOut) return `${what} timed out`;
    const diag = events.find((e) => e.diagnosticEvent?.severity === "error")?.diagnosticEvent?.message;
    const detail = firstLine(diag ?? "") || firstLine(r.stderr) || firstLine(r.stdout) || `exit code ${r.code}`;
    return `${what} failed: ${detail}`.slice(0, 400);
}

/**
 * A temporary program folder for a fixture: links to each of its files and to the repository's
 * node_modules, so `pulumi stack init`/`config set` write their files here and never into the fixture.
 */
export function linkProgram(fixtureDir: string, programDir: string): string {
    fs.mkdirSync(programDir, { recursive: true });
    for (const entry of fs.readdirSync(fixtureDir)) {
        if (/^Pulumi\.[^.]+\.yaml$/.test(entry)) continue;
        fs.symlinkSync(path.join(fixtureDir, entry), path.join(programDir, entry));
    }
    fs.symlinkSync(path.join(REPO_ROOT, "node_modules"), path.join(programDir, "node_modules"));
    return programDir;
}

export interface PreviewRequest {
    cwd: string;
    env: NodeJS.ProcessEnv;
    stack: string;
    pulumi: string;
    packDir: string;
    policyConfig?: string;
    timeoutMs: number;
    descriptions: Map<string, string>;
}

export interface PreviewResult {
    rows: Row[];
    exitCode: number | null;
    /** Set when the preview failed for another reason than a mandatory violation. */
    error?: string;
    /** Everything the CLI printed (event stream and stderr), for leak checks. */
    output: string;
}

/**
 * `pulumi preview --policy-pack` with the engine's JSON event stream, turned into rows. A non-zero exit
 * without a mandatory violation (program error, missing stack, bad config), or with an error the policies
 * do not explain, is an error, never a result.
 */
export async function previewWithPack(req: PreviewRequest): Promise<PreviewResult> {
    const args = ["preview", "-s", req.stack, "--policy-pack", req.packDir, "--json", "--non-interactive"];
    if (req.policyConfig) args.push("--policy-pack-config", req.policyConfig);
    const r = await exec(req.pulumi, args, {
        cwd: req.cwd,
        env: { ...req.env, PULUMI_ENABLE_STREAMING_JSON_PREVIEW: "1", NO_COLOR: "1" },
        timeoutMs: req.timeoutMs,
    });
    const log = parseEvents(r.stdout);
    const output = `${r.stdout}\n${r.stderr}`;
    const rows: Row[] = log
        .filter((e) => e.policyEvent)
        .map((e) => {
            const p = e.policyEvent!;
            return row(p.policyName, p.resourceUrn ?? "", p.enforcementLevel, normalizeMessage(p.message, req.descriptions.get(p.policyName)));
        });
    if (r.timedOut) return { rows, exitCode: r.code, error: failure("pulumi preview", r, log), output };
    // Mandatory violations alone end with one error diagnostic, "preview failed"; any other error
    // diagnostic (a program that throws after registering a violating resource, say) is a failed run.
    const otherErrors = log.filter((e) => e.diagnosticEvent?.severity === "error" && normalizeMessage(e.diagnosticEvent.message).trim() !== "preview failed");
    if (r.code !== 0 && (otherErrors.length > 0 || !rows.some((x) => x.level === "mandatory"))) {
        return { rows, exitCode: r.code, error: failure("pulumi preview", r, otherErrors.length > 0 ? otherErrors : log), output };
    }
    return { rows, exitCode: r.code, output };
}

export interface PreparedStack {
    /** The temporary program folder (links to the fixture's files). */
    program: string;
    env: NodeJS.ProcessEnv;
    stack: string;
}

/**
 * A fixture's stack, ready to preview or deploy: temporary program folder, PULUMI_HOME, file backend,
 * passphrase secrets, the fixture's config (values through stdin, so secrets never appear in process
 * arguments), and the Kubernetes provider rendering YAML into <tmp>/rendered.
 */
export async function prepareFixtureStack(fixture: Fixture, toolchain: Toolchain, tmp: string, timeoutMs: number): Promise<PreparedStack | { error: string }> {
    const env = pulumiEnv(toolchain, tmp);
    fs.mkdirSync(path.join(tmp, "state"), { recursive: true });
    const program = linkProgram(fixture.dir, path.join(tmp, "program"));
    const stack = fixture.expect.stack;
    const pulumi = (args: string[], input?: string) => exec(toolchain.pulumi, [...args, "--non-interactive"], { cwd: program, env, timeoutMs, input });
    let r = await pulumi(["stack", "init", stack, "--secrets-provider", "passphrase"]);
    if (r.code !== 0) return { error: failure("pulumi stack init", r) };
    const settings: [string, string, boolean][] = [
        ["kubernetes:renderYamlToDirectory", path.join(tmp, "rendered"), false],
        ...Object.entries(fixture.expect.config).map(([k, v]): [string, string, boolean] => [k, v.value, v.secret === true]),
    ];
    for (const [key, value, secret] of settings) {
        r = await pulumi(["config", "set", key, ...(secret ? ["--secret"] : ["--plaintext"]), "-s", stack], value);
        if (r.code !== 0) return { error: failure(`pulumi config set ${key}`, r) };
    }
    return { program, env, stack };
}

export async function runRealLeg(fixture: Fixture, options: RealOptions): Promise<LegResult> {
    const started = Date.now();
    const done = (rest: Partial<LegResult>): LegResult => ({ leg: "real", rows: [], durationMs: Date.now() - started, ...rest });
    if (fixture.expect.mockOnly) {
        return done({ skipped: `mock-only: ${fixture.expect.mockOnly}` });
    }
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-real-"));
    track(tmp);
    try {
        const prepared = await prepareFixtureStack(fixture, options.toolchain, tmp, options.timeoutMs);
        if ("error" in prepared) return done({ error: prepared.error });
        const { program, env, stack } = prepared;
        const preview = await previewWithPack({
            cwd: program,
            env,
            stack,
            pulumi: options.toolchain.pulumi,
            packDir: options.packDir ?? REPO_ROOT,
            policyConfig: fixture.policyConfig,
            timeoutMs: options.timeoutMs,
            descriptions: options.descriptions,
        });
        if (preview.error) return done({ error: preview.error });
        // Generated names are random: masked as the mock leg masks its own (autonames.ts).
        return done({ rows: maskAutonames(preview.rows, autonamesFromEvents(preview.output)), details: { exitCode: preview.exitCode } });
    } finally {
        if (!options.keep) fs.rmSync(tmp, { recursive: true, force: true });
        untrack(tmp);
    }
}
