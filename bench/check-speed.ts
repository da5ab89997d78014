/**
 * `pko-guard check` figures for npm run bench (not a test; nothing asserts a timing): the command on generated
 * repositories of 1k, 10k and 100k objects (objects/s, and time at 10k / at 1k, linear is 10), the same
 * in-process, and a 10-file repository's start to verdict with its phase marks (PKO_GUARD_TIMINGS) beside
 * `node -e 0`. Targets: docs/contributing/benchmarks.md.
 */
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { performance } from "perf_hooks";
import { CLI_ENTRY } from "../support/paths";
import { UNMARKED, median } from "./figures";
import { Figure, PartOutput } from "./types";

const CLI = CLI_ENTRY;
const SHA = "2b0889718d3e63feeb6079ccd5e4488d8601e353";

/**
 * Five objects of one team. Governed (what a repository that passes looks like): service account, its
 * system:auth-delegator binding, a least-privilege binding, a production Stack, an Application. With findings:
 * a dev Stack instead of the delegator binding, so each of the team's two Stacks has an advisory finding (the
 * cost of locating findings at their lines).
 */
/** Unit `i` (five objects) written in `teams/<folder>/`, whose Application syncs that folder. */
function unit(i: number, governed: boolean, folder: number = i): string {
    const ns = `team-${i}`;
    return (
        serviceAccount(ns) +
        (governed ? delegatorBinding(ns) : "") +
        editBinding(ns) +
        prodStack(i, ns) +
        (governed ? "" : devStack(i, ns)) +
        application(i, ns, folder)
    );
}

function serviceAccount(ns: string): string {
    return `---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: deployer
  namespace: ${ns}
`;
}

function delegatorBinding(ns: string): string {
    return `---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: ${ns}:deployer:auth-delegator
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: system:auth-delegator
subjects:
  - kind: ServiceAccount
    name: deployer
    namespace: ${ns}
`;
}

function editBinding(ns: string): string {
    return `---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: deployer
  namespace: ${ns}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: edit
subjects:
  - kind: ServiceAccount
    name: deployer
    namespace: ${ns}
`;
}

function prodStack(i: number, ns: string): string {
    return `---
apiVersion: pulumi.com/v1
kind: Stack
metadata:
  name: app-prod
  namespace: ${ns}
  annotations:
    argocd.argoproj.io/sync-wave: "2"
spec:
  serviceAccountName: deployer
  stack: acme/app-${i}/prod
  projectRepo: https://github.com/acme/app-${i}.git
  commit: ${SHA}
  refresh: true
  environment: [aws-credentials]
`;
}

function devStack(i: number, ns: string): string {
    return `---
apiVersion: pulumi.com/v1
kind: Stack
metadata:
  name: app-dev
  namespace: ${ns}
spec:
  serviceAccountName: deployer
  stack: acme/app-${i}/dev
  projectRepo: https://github.com/acme/app-${i}.git
  branch: main
  destroyOnFinalize: true
  environment: [aws-credentials]
`;
}

function application(i: number, ns: string, folder: number): string {
    return `---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: app-${i}
  namespace: argocd
spec:
  source:
    repoURL: https://github.com/acme/manifests.git
    path: teams/${folder}
  destination:
    namespace: ${ns}
  syncPolicy:
    automated:
      prune: true
`;
}

/** A repository of `objects` objects (a multiple of 5) in `files` files, governed (passes) or with findings. */
export function generate(root: string, objects: number, files: number, governed = true): string {
    const dir = path.join(root, `repo-${objects}-${files}${governed ? "" : "-findings"}`);
    const units = Math.ceil(objects / 5);
    const perFile = Math.ceil(units / files);
    for (let f = 0; f * perFile < units; f++) {
        const parts: string[] = [];
        for (let u = f * perFile; u < Math.min(units, (f + 1) * perFile); u++) parts.push(unit(u, governed, f));
        const file = path.join(dir, "teams", String(f), "manifests.yaml");
        fs.mkdirSync(path.dirname(file), { recursive: true });
        fs.writeFileSync(file, parts.join(""));
    }
    return dir;
}

/**
 * An Argo CD repository of `apps` Applications, half kustomize (a base and a production overlay that patches
 * the Stack), half Helm (a chart per team and a production values file), each team's Stack, ServiceAccount and
 * bindings rendered: what `check .` renders with kustomize and helm before judging.
 */
export function generateRendered(root: string, apps: number): string {
    const dir = path.join(root, `argocd-${apps}`);
    const write = (rel: string, text: string) => {
        fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
        fs.writeFileSync(path.join(dir, rel), text);
    };
    for (let i = 0; i < apps; i++) {
        const team = `team-${i}`;
        const helm = i % 2 === 1;
        const source = helm
            ? `    path: charts/${team}\n    helm:\n      valueFiles: [values-production.yaml]\n`
            : `    path: kustomize/${team}/overlays/production\n`;
        write(
            `applications/${team}.yaml`,
            `apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: ${team}\n  namespace: argocd\nspec:\n  project: default\n  source:\n    repoURL: https://github.com/acme/manifests.git\n${source}  destination:\n    server: https://kubernetes.default.svc\n    namespace: ${team}\n`,
        );
        // The team's objects without the unit's own Application (the repository's Application is written above).
        const objects = unit(i, true)
            .replace(/---\napiVersion: argoproj\.io\/v1alpha1\nkind: Application\n[\s\S]*$/, "")
            .replace(/^  namespace: team-\d+\n/gm, "");
        if (helm) {
            write(`charts/${team}/Chart.yaml`, `apiVersion: v2\nname: ${team}\nversion: 0.1.0\n`);
            write(`charts/${team}/values.yaml`, "refresh: false\n");
            write(`charts/${team}/values-production.yaml`, "refresh: true\n");
            write(
                `charts/${team}/templates/objects.yaml`,
                objects.replace(/refresh: true/g, "refresh: {{ .Values.refresh }}"),
            );
        } else {
            write(`kustomize/${team}/base/objects.yaml`, objects);
            write(`kustomize/${team}/base/kustomization.yaml`, "resources: [objects.yaml]\n");
            write(
                `kustomize/${team}/overlays/production/kustomization.yaml`,
                `resources: [../../base]\npatches:\n  - target: {kind: Stack}\n    patch: |-\n      - op: add\n        path: /metadata/labels\n        value: {env: production}\n`,
            );
        }
    }
    return dir;
}

/** The installed command over `dir`, start to verdict (ms). */
function runCommand(dir: string, env: NodeJS.ProcessEnv = UNMARKED): number {
    const t = performance.now();
    // The generated Applications name this repository (it has no origin remote): their sources are read.
    const repo = ["--repository", "https://github.com/acme/manifests.git"];
    const r = spawnSync(process.execPath, [CLI, "check", dir, "--repo-root", dir, ...repo], {
        encoding: "utf8",
        maxBuffer: 1 << 30,
        env,
    });
    const ms = performance.now() - t;
    if (r.status !== 0 && r.status !== 1)
        throw new Error(`pko-guard check exited ${r.status}: ${r.stderr.split("\n")[0]}`);
    return ms;
}

/** `runCheck` in this process, in one thread (no worker entry): the single-threaded path's own speed. */
async function inProcess(dir: string): Promise<number> {
    const { runCheck } = require("../cli/check") as typeof import("../cli/check");
    const t = performance.now();
    await runCheck({ paths: [dir], failOnAdvisory: false, repoRoot: dir });
    return performance.now() - t;
}

export interface StartupBreakdown {
    /** `node -e 0`, start to exit (Node's own floor). */
    nodeMs: number;
    /** From Node's bootstrap to the check command ready: the launcher, the bundle (code cache), argument parsing. */
    modulesMs: number;
    /** The pack config and reading, decoding and placing the manifests. */
    parseMs: number;
    /** The pack's rules over every object, findings located and judged. */
    rulesMs: number;
    /** The terminal table and the requested reports. */
    reportsMs: number;
    /** The command's time not in the above: process start-up beyond node -e 0's, exit. */
    restMs: number;
    objects: number;
}

/**
 * The start-up breakdown of a command run, from the command's own phase marks (support/timings.ts:
 * PKO_GUARD_TIMINGS=FILE), medians of 5 runs next to `node -e 0`'s median of 5, run alternately. `commandMs`, the
 * figure, is timed in runs of their own without the marks (keeping them loads perf_hooks and writes a file at
 * exit, which users' runs do not); the breakdown's rest is what the marked runs spent outside their phases.
 */
function startupBreakdown(dir: string, objects: number): StartupBreakdown & { commandMs: number } {
    const file = path.join(path.dirname(dir), "timings.json");
    const node: number[] = [];
    const plain: number[] = [];
    const runs: { wall: number; marks: Record<string, number> }[] = [];
    for (let i = 0; i < 6; i++) {
        const t = performance.now();
        spawnSync(process.execPath, ["-e", "0"]);
        const n = performance.now() - t;
        const p = runCommand(dir);
        const wall = runCommand(dir, { ...UNMARKED, PKO_GUARD_TIMINGS: file });
        if (i === 0) continue; // warm the file cache
        node.push(n);
        plain.push(p);
        runs.push({ wall, marks: JSON.parse(fs.readFileSync(file, "utf8")) });
    }
    const m = (f: (x: { wall: number; marks: Record<string, number> }) => number) => median(runs.map(f));
    const nodeMs = median(node);
    const modulesMs = m((x) => x.marks.command - x.marks.bootstrapComplete);
    const parseMs = m((x) => x.marks.parsed - x.marks.command);
    const rulesMs = m((x) => x.marks.judged - x.marks.parsed);
    const reportsMs = m((x) => x.marks.reported - x.marks.judged);
    return {
        nodeMs,
        modulesMs,
        parseMs,
        rulesMs,
        reportsMs,
        restMs: m((x) => x.wall) - nodeMs - modulesMs - parseMs - rulesMs - reportsMs,
        objects,
        commandMs: median(plain),
    };
}

export async function checkBenchmarks(line: (s: string) => void): Promise<PartOutput> {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-bench-check-"));
    try {
        line("pko-guard check (generated manifest repositories that pass; command = child process, start to verdict):");
        const { sizes, command } = await timeSizes(root, line);
        const withFindings = generate(root, 10000, 100, false);
        const findingsMs = runCommand(withFindings);
        sizes.findings10k = { commandMs: findingsMs, objectsPerSecond: (10000 / findingsMs) * 1000, findings: 4000 };
        line(
            `  10000 objects with 4000 findings (every Stack advisory, each located at its line): command ${findingsMs.toFixed(0)} ms (${((10000 / findingsMs) * 1000).toFixed(0)} objects/s)`,
        );
        const ratio = command[10000] / command[1000];
        line(`  command time at 10k / at 1k: ${ratio.toFixed(2)} (linear is 10; start-up is part of both)`);
        const small = generate(root, 50, 10);
        runCommand(small); // warm the file cache
        const runs = [0, 1, 2, 3, 4].map(() => runCommand(small));
        const smallMs = median(runs);
        line(
            `  10-file repository (50 objects), start to verdict: median ${smallMs.toFixed(0)} ms of 5 (${runs.map((x) => x.toFixed(0)).join(", ")})`,
        );
        const breakdown = startupBreakdown(small, 50);
        const rendered = generateRendered(root, 50);
        runCommand(rendered);
        const renderedRuns = [0, 1, 2].map(() => runCommand(rendered));
        const renderedMs = median(renderedRuns);
        line(
            `  Argo CD repository, 50 Applications (25 kustomize overlays, 25 Helm charts) rendered, start to verdict: median ${renderedMs.toFixed(0)} ms of 3 (${renderedRuns.map((x) => x.toFixed(0)).join(", ")})`,
        );
        const tenFileRatio = breakdown.commandMs / breakdown.nodeMs;
        line(
            `  start-up breakdown, 10-file repository (the command's own phase marks, medians of 5, each run next to node -e 0): node -e 0 ${breakdown.nodeMs.toFixed(0)} ms; ` +
                `the command ${breakdown.commandMs.toFixed(0)} ms = modules ${breakdown.modulesMs.toFixed(0)} ms (launcher, bundle, arguments), parse ${breakdown.parseMs.toFixed(0)} ms, ` +
                `rules ${breakdown.rulesMs.toFixed(0)} ms, reports ${breakdown.reportsMs.toFixed(0)} ms, and ${breakdown.restMs.toFixed(0)} ms of process start and exit beyond node's; ` +
                `command / node -e 0: ${tenFileRatio.toFixed(2)} (target <= 2)`,
        );
        const perSecond10k = (sizes[10000] as { objectsPerSecond: number }).objectsPerSecond;
        return {
            data: {
                sizes,
                ratio10kTo1k: ratio,
                tenFileRepositoryMs: smallMs,
                tenFileRuns: runs,
                startupBreakdown: breakdown,
                renderedRepository50AppsMs: renderedMs,
                renderedRuns,
            },
            figures: checkFigures(perSecond10k, ratio, smallMs, tenFileRatio),
        };
    } finally {
        fs.rmSync(root, { recursive: true, force: true });
    }
}

/** The command and in-process times at 1k, 10k and 100k objects (in 10, 100 and 1000 files). */
async function timeSizes(
    root: string,
    line: (s: string) => void,
): Promise<{ sizes: Record<string, unknown>; command: Record<number, number> }> {
    const sizes: Record<string, unknown> = {};
    const command: Record<number, number> = {};
    for (const n of [1000, 10000, 100000]) {
        const dir = generate(root, n, Math.max(10, n / 100));
        const ms = runCommand(dir);
        const inMs = await inProcess(dir);
        command[n] = ms;
        sizes[n] = {
            commandMs: ms,
            objectsPerSecond: (n / ms) * 1000,
            inProcessMs: inMs,
            inProcessObjectsPerSecond: (n / inMs) * 1000,
        };
        line(
            `  ${n} objects: command ${ms.toFixed(0)} ms (${((n / ms) * 1000).toFixed(0)} objects/s), in-process ${inMs.toFixed(0)} ms (${((n / inMs) * 1000).toFixed(0)} objects/s)`,
        );
    }
    return { sizes, command };
}

/** The part's figures and the targets the issues set. */
function checkFigures(perSecond10k: number, ratio: number, smallMs: number, tenFileRatio: number): Figure[] {
    return [
        {
            name: "check, 10k objects, command",
            value: perSecond10k,
            unit: "objects/s",
            target: { op: ">=", value: 20000, source: "issue 13" },
        },
        {
            name: "check command time at 10k / at 1k",
            value: ratio,
            unit: "",
            target: { op: "<=", value: 12, source: "issue 13" },
        },
        {
            name: "check, 10-file repository, start to verdict",
            value: smallMs,
            unit: "ms",
            target: { op: "<", value: 1000, source: "issue 13" },
        },
        {
            name: "check, 10-file repository / node -e 0 (side by side)",
            value: tenFileRatio,
            unit: "",
            target: { op: "<=", value: 2, source: "issue 23" },
        },
    ];
}
