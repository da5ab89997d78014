/**
 * `pko-guard check PATH...`: the gate over Kubernetes manifests (the Argo CD + PKO GitOps flow).
 * One run is one program, every object one resource of it, so stack-level rules judge the layout as a whole; the pack's
 * own policies run in-process (evaluation/evaluate.ts) and rows carry the file:line:column of the field named. Exit
 * codes as the gate: 0 no blocking violation, 1 blocking violations, 2 bad input or a tool error (a run that finds no
 * Kubernetes object is bad input).
 */
import { Argument, Command } from "commander";
import * as path from "path";
import { isatty } from "tty";
import { packConfig } from "../evaluation/pack-config";
// The rule whose findings carry what check could not render.
import { NAME as RENDERED_RULE } from "../policies/argocd-app-rendered";
import { Finding, Notice } from "../evaluation/rows";
import { escapeText } from "../support/escape";
import { BadInputError, BadInputsError } from "../support/errors";
import { STDIN_FILE } from "../reports/location";
import { ProjectSubject, ReportObject, ReportSource, errorProjectSubject } from "../reports/subject";
import { FetchFlags, FetchPolicy, defaultCacheDir, runFetchPolicy } from "../gitops/fetch/network-policy";
import type { FetchedSource } from "../gitops/fetch/fetch";
import { judgeRows, waiverNotices } from "../evaluation/judge";
import { ManifestObject, Skip } from "../gitops/manifests/manifest-objects";
import { runRepoRoot } from "../gitops/manifests/load";
import { isFluxApplier } from "../gitops/flux/flux-kinds";
import { checkedRepository, unknownRepositoryNotice } from "../gitops/manifests/repository";
import type { CheckedRepository } from "../gitops/render/repo-url";
import { CheckedManifests, checkManifests } from "../gitops/manifests/parallel";
import { progressLine } from "../support/progress";
import { clusterCapabilities } from "../gitops/render/capabilities";
import { mark } from "../support/timings";
import { extended } from "../support/shapes";
import { collect, timeoutSeconds } from "../support/options";
import { CheckSettings, checkFlags, checkSettings, printedConfig } from "../gitops/manifests/check-settings";
import type { Run } from "./guide";
import { runJudged } from "./verdict/judged-run";
import { ReportingOptions, reportingOptions } from "./verdict/reporting-options";
import { restoreExtraCaCerts } from "../support/extra-ca";

export interface CheckOptions {
    paths: string[];
    config?: string;
    failOnAdvisory: boolean;
    repoRoot?: string;
    cwd?: string;
    stdin?: () => string;
    /** Skip a folder's oversized, undecodable and non-regular files instead of failing (--skip-unreadable). */
    skipUnreadable?: boolean;
    /** Time allowed for rendering (kustomize, Helm, jsonnet), in milliseconds. */
    timeoutMs?: number;
    /** The destination cluster's version, and APIs it serves besides the defaults, as Helm is told (--kube-version, --api-versions). */
    kubeVersion?: string;
    apiVersions?: string[];
    /** Argo CD builds kustomizations with --enable-helm, whatever the repository's argocd-cm says (--kustomize-enable-helm). */
    kustomizeEnableHelm?: boolean;
    /** The script worker threads run (the installed command's file); without it the run stays in one thread. */
    workerEntry?: string;
    /** Threads to use (default: evaluation/threads.ts threadsFor). */
    threads?: number;
    /** Where progress goes on a terminal (default standard error; nothing when it is not a terminal). */
    progress?: NodeJS.WriteStream;
    /** Globs (repository-relative) of what walking folders leaves out (--exclude, the configuration file's `exclude`). */
    exclude?: string[];
    /**
     * URLs declared as this repository (--repository, `repositories`): with the origin remote, what an Application
     * source's repoURL must name to be read here. Unset: no repository check (every source path is read).
     */
    repositories?: { url: string; from: string }[];
    /**
     * The network policy for remote sources (charts, other repositories, remote bases: gitops/fetch/network-policy.ts).
     * Unset: nothing is fetched and such sources are not read (the fail-closed finding, or exit 2).
     */
    fetch?: FetchPolicy;
}

export interface CheckSummary {
    files: number;
    documents: number;
    objects: number;
    /** Of `objects`, those a render made (kustomize, Helm, jsonnet output); the rest are in `files`. */
    renderedObjects: number;
    /** Objects of kinds no rule reads (counted, never reported). */
    unread: number;
    skipped: Skip[];
    /** Folders rendered and .jsonnet files evaluated. */
    rendered: number;
    /** Sources and ApplicationSet generators not rendered or expanded here (one line each, on stderr). */
    notRendered: string[];
    /** Remote sources fetched or taken from the cache, in the order first used. */
    fetched: ReportSource[];
}

/** A check run: a report subject (the manifests as one project) and what was read. */
export interface CheckResult {
    subject: ProjectSubject;
    summary: CheckSummary;
}

/** An object's reference as reports give it. */
function objectRef(obj: Record<string, unknown>): ReportObject {
    const meta = (obj.metadata ?? {}) as Record<string, unknown>;
    const ref: ReportObject = { kind: String(obj.kind), name: String(meta.name) };
    if (typeof meta.namespace === "string" && meta.namespace !== "") ref.namespace = meta.namespace;
    return typeof obj.apiVersion === "string" ? extended({ apiVersion: obj.apiVersion }, ref) : ref;
}

export async function runCheck(o: CheckOptions): Promise<CheckResult> {
    const started = Date.now();
    // The extra CA certificates the launcher deferred: back in the environment of the tools the run starts.
    restoreExtraCaCerts();
    const config = packConfig(o.config);
    // On a terminal, a long run says what it is doing (a large repository takes seconds).
    // Standard error's stream is made only when it is a terminal (making it costs start-up on every run).
    const shown = progressLine(o.progress ?? (isatty(2) ? process.stderr : undefined));
    shown.show(`pko-guard check: reading ${escapeText(o.paths.join(" "))}`);
    let load: CheckedManifests["load"];
    let findings: Finding[];
    const repository = o.repositories && checkedRepository(runRepoRoot(o.paths, o), o.repositories);
    try {
        const checked = await checkManifests(
            o.paths,
            {
                repoRoot: o.repoRoot,
                cwd: o.cwd,
                stdin: o.stdin,
                timeoutMs: o.timeoutMs,
                skipUnreadable: o.skipUnreadable,
                cluster: clusterCapabilities(o),
                kustomizeHelm: o.kustomizeEnableHelm,
                exclude: o.exclude,
                toolConfigs: o.config ? [path.resolve(o.cwd ?? process.cwd(), o.config)] : [],
                repository,
                fetch: o.fetch,
            },
            config,
            {
                entry: o.workerEntry,
                threads: o.threads,
                onLoaded: (loaded) => {
                    mark("parsed");
                    shown.show(
                        `pko-guard check: evaluating ${loaded.objects.length} object(s) from ${loaded.files} file(s)`,
                    );
                },
            },
        );
        load = checked.load;
        if (load.objects.length === 0) {
            // with the skipped files' lines that a run always prints first
            const skipped = load.skipped.map((x) => `skipped ${x.file}: ${x.reason}`);
            const line = nothingFound(o.paths, load);
            throw skipped.length > 0 ? new BadInputsError(skipped, line) : new BadInputError(line);
        }
        // Judged as the gate judges a preview: waived findings (marked by the pack) do not block.
        findings = judgeRows(checked.rows, o.failOnAdvisory);
        mark("judged");
    } finally {
        shown.done();
    }
    const named = load.objects.filter((x) => x.named);
    const summary: CheckSummary = {
        files: load.files,
        documents: load.documents,
        objects: load.objects.length,
        renderedObjects: load.objects.filter((x) => x.rendered === true).length,
        unread: load.objects.filter((x) => !x.read).length,
        skipped: load.skipped,
        rendered: load.rendered,
        notRendered: load.notRendered,
        fetched: (load.fetched ?? []).map(reportSource),
    };
    const subject: ProjectSubject = {
        kind: "project",
        name: "manifests",
        stack: "",
        description: `pko-guard check of ${o.paths.join(" ")} (${objectsOrigin(summary)})`,
        programFile: named[0]?.abs ?? (named[0] ? STDIN_FILE : path.join(load.repoRoot, "manifests")),
        root: load.repoRoot,
        findings,
        notices: [...waiverNotices(config, findings), ...repositoryNotices(repository, load.objects)],
        outcome: findings.some((f) => f.status === "blocking") ? "fail" : "pass",
        durationMs: Date.now() - started,
        objects: named.filter((x) => x.read).map((x) => objectRef(x.object)),
        ...(summary.fetched.length > 0 ? { sources: summary.fetched } : {}),
    };
    return { subject, summary };
}

/** A fetched source as reports list it: everything but where it is on this machine. */
function reportSource(s: FetchedSource): ReportSource {
    return {
        kind: s.kind,
        url: s.url,
        ref: s.ref,
        resolved: s.resolved,
        digest: s.digest,
        floating: s.floating,
        fromCache: s.fromCache,
    };
}

/** The lines `--verbose` prints for the fetched sources: URL, reference, what it resolved to, digest. */
export function fetchedLines(r: CheckResult): string[] {
    return r.summary.fetched.map(
        (s) =>
            `fetched ${s.kind} ${s.url} ${s.ref === "" ? "(default)" : s.ref} -> ${s.resolved} (${s.digest}${s.floating ? ", floating" : ""}${s.fromCache ? ", from the cache" : ""})`,
    );
}

/**
 * The one notice of a run with Applications or Flux Kustomizations and HelmReleases whose repository's URL is not
 * known (gitops/manifests/repository.ts).
 */
function repositoryNotices(repository: CheckedRepository | undefined, objects: ManifestObject[]): Notice[] {
    // Only a run with appliers asks git for the origin remote (a process).
    if (
        !repository ||
        !objects.some((x) => x.kind === "Application" || x.kind === "ApplicationSet" || isFluxApplier(x.object))
    )
        return [];
    const notice = unknownRepositoryNotice(repository);
    return notice ? [{ level: "advisory", message: notice }] : [];
}

/**
 * Why a run that read no Kubernetes object is bad input (a mistyped path in CI would otherwise pass): what it was
 * given, what it read, and the repository root it used.
 */
function nothingFound(paths: string[], load: CheckedManifests["load"]): string {
    const skipped = load.skipped.length > 0 ? `, ${load.skipped.length} skipped` : "";
    const jsonnet = load.jsonnetWalked
        ? `; ${load.jsonnetWalked} .jsonnet file(s) not evaluated: only an Application's source or a .jsonnet file named here is`
        : "";
    return `no Kubernetes object found in ${paths.join(" ")} (${load.files} file(s) read${skipped}${jsonnet}; repository root ${load.repoRoot})`;
}

/** The subject of a check that could not judge (bad input, an error, an interrupt): every report still renders it. */
export function checkErrorSubject(
    paths: string[],
    message: string,
    durationMs: number,
    repoRoot?: string,
): ProjectSubject {
    const first = paths.find((p) => p !== "-");
    return errorProjectSubject(
        {
            name: "manifests",
            stack: "",
            description: `pko-guard check of ${paths.join(" ")}`,
            programFile: first ? path.resolve(first) : "manifests",
            ...(repoRoot !== undefined ? { root: path.resolve(repoRoot) } : {}),
        },
        message,
        durationMs,
    );
}

/** What the objects come from, so the counts add up: files as written, and the output of rendered sources. */
function objectsOrigin(s: CheckSummary): string {
    return s.rendered > 0
        ? `${s.objects} object(s): ${s.objects - s.renderedObjects} from ${s.files} file(s) as written, ` +
              `${s.renderedObjects} rendered from ${s.rendered} source(s)`
        : `${s.objects} object(s) in ${s.files} file(s)`;
}

export function checkSummaryLine(r: CheckResult): string {
    const s = r.summary;
    const skipped =
        (s.skipped.length > 0 ? `, ${s.skipped.length} skipped` : "") +
        (s.notRendered.length > 0 ? `, ${s.notRendered.length} not rendered` : "");
    const blocking = r.subject.findings.filter((f) => f.status === "blocking").length;
    return (
        `${objectsOrigin(s)} (${s.unread} of kinds no rule reads${skipped}); ` +
        `${r.subject.findings.length} violation(s), ${blocking} blocking: ${r.subject.outcome === "pass" ? "PASS" : "FAIL"}`
    );
}

/** A check run's options from its settings (`workerEntry`: the script worker threads run). */
function settingsOptions(paths: string[], s: CheckSettings, workerEntry?: string): CheckOptions {
    return {
        paths,
        workerEntry,
        config: s.config?.value,
        failOnAdvisory: s.failOnAdvisory.value,
        repoRoot: s.repoRoot,
        skipUnreadable: s.skipUnreadable.value,
        timeoutMs: s.timeout.value * 1000,
        kubeVersion: s.kubeVersion?.value,
        apiVersions: s.apiVersions.map((a) => a.value),
        kustomizeEnableHelm: s.kustomizeEnableHelm.value || undefined,
        exclude: s.exclude.map((x) => x.value),
        repositories: s.repositories.map((r) => ({ url: r.value, from: r.from })),
        fetch: runFetchPolicy(
            s.fetch,
            s.allowHosts.map((h) => h.value),
            s.repoRoot,
        ),
    };
}

interface CheckCliOptions extends ReportingOptions {
    repoRoot?: string;
    skipUnreadable?: boolean;
    timeout?: number;
    kubeVersion?: string;
    apiVersions: string[];
    kustomizeEnableHelm?: boolean;
    exclude: string[];
    repository: string[];
    printConfig: boolean;
    offline?: boolean;
    allowHost: string[];
    cacheDir?: string;
    refresh?: boolean;
}

/** check's own options (besides the reporting ones): each can also be set in .pko-guard.yaml. */
function checkOptions(command: Command): Command {
    return command
        .option(
            "--repo-root <dir>",
            "repository root that Argo CD Application source paths are relative to (default: the git top level)",
        )
        .option(
            "--skip-unreadable",
            "skip a folder's oversized, undecodable (not UTF-8/UTF-16) and non-regular files with a line each, instead of failing",
        )
        .option(
            "--timeout <seconds>",
            "time allowed for rendering kustomizations, charts and jsonnet (default: 300)",
            timeoutSeconds,
        )
        .option(
            "--kube-version <version>",
            "the destination cluster's Kubernetes version, as Argo CD tells Helm (default: Helm's own)",
        )
        .option(
            "--api-versions <group/version[/Kind]>",
            "an API the destination cluster serves besides Kubernetes', PKO's and Argo CD's, as Argo CD tells Helm (repeatable)",
            collect,
            [] as string[],
        )
        .option(
            "--kustomize-enable-helm",
            "Argo CD builds kustomizations with --enable-helm (its argocd-cm's kustomize.buildOptions), when the repository does not hold that argocd-cm",
        )
        .option(
            "--exclude <glob>",
            "leave paths matching GLOB out of the folders read (repeatable)",
            collect,
            [] as string[],
        )
        .option(
            "--repository <url>",
            "a URL of this repository besides its origin remote: Application sources naming it are read here (repeatable)",
            collect,
            [] as string[],
        )
        .option("--offline", "fetch nothing: remote charts, repositories and bases come from the cache only")
        .option(
            "--allow-host <host[:port]>",
            "let fetches reach this host (a private, loopback or plain-http one) (repeatable)",
            collect,
            [] as string[],
        )
        .option("--cache-dir <dir>", `where fetched sources are kept (default: ${defaultCacheDir()})`)
        .option("--refresh", "resolve and fetch every remote source again, whatever the cache holds")
        .option(
            "--print-config",
            "print the settings in force (.pko-guard.yaml, options, defaults) and where each comes from; without paths, the working folder's",
            false,
        );
}

export function command(run: Run): Command {
    // Required, but for --print-config, which reads the working folder's settings without them.
    const pathsArgument = new Argument(
        "<paths...>",
        "manifest files or folders (.yaml, .yml, .json, recursive), or - for standard input",
    );
    return checkOptions(
        reportingOptions(
            new Command("check")
                .summary("check Kubernetes manifests (a GitOps repository)")
                .description(
                    "check Kubernetes manifests (files, folders, - for standard input) with the pko-guard policies",
                )
                .addArgument(pathsArgument),
        ),
    )
        .on("option:print-config", () => {
            pathsArgument.required = false;
        })
        .action(async (paths: string[], o: CheckCliOptions) => {
            const fetch: FetchFlags = {
                offline: o.offline,
                allowHost: o.allowHost,
                cacheDir: o.cacheDir,
                refresh: o.refresh,
            };
            const flags = checkFlags(extended(o, { fetch }));
            if (o.printConfig) {
                run.term.out.write(printedConfig(checkSettings(paths.length > 0 ? paths : ["."], flags)));
                return;
            }
            mark("command");
            run.code = await runJudged(
                run.term,
                o,
                [...paths, ...(o.config ? [o.config] : [])],
                (message, durationMs) => checkErrorSubject(paths, message, durationMs, o.repoRoot),
                async () => {
                    // Large repositories are judged on several threads, each running this command's file.
                    const settings = checkSettings(paths, flags);
                    const result = await runCheck(settingsOptions(paths, settings, process.argv[1]));
                    for (const x of result.summary.skipped)
                        run.term.err.write(`pko-guard: skipped ${escapeText(x.file)}: ${escapeText(x.reason)}\n`);
                    // Each source check could not render is a finding of argocd-app-rendered, which says why (once);
                    // only with that rule disabled does the reason go to stderr, so it is never lost nor repeated.
                    if (!result.subject.findings.some((f) => f.policy === RENDERED_RULE))
                        for (const n of result.summary.notRendered) run.term.err.write(`pko-guard: ${escapeText(n)}\n`);
                    if (o.verbose)
                        for (const l of fetchedLines(result)) run.term.err.write(`pko-guard: ${escapeText(l)}\n`);
                    return { subject: result.subject, summaryText: checkSummaryLine(result) };
                },
            );
        });
}
