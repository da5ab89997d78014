/**
 * `pko-guard check` on several threads (gitops/manifests/parallel.ts) gives what the single-threaded run gives,
 * byte for byte: every report, the terminal output, the skipped-file lines and the exit code, run as users run
 * the command (the installed file, from a folder outside the repository) with PKO_GUARD_WORKERS=1 and 2, 3, 4.
 * The repository is built so that order shows: skipped files and objects in every part (reports list them in
 * read order), a stack-level finding on an object another thread read, findings that tie in the sort. The
 * timings file (support/timings.ts) proves the threads really ran, so the comparison cannot pass by falling back.
 * Bad input read by a worker thread is the single-threaded run's one line and exit 2.
 */
import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { CLI_ENTRY } from "../../../../support/paths";

const CLI = CLI_ENTRY;
const SHA = "2b0889718d3e63feeb6079ccd5e4488d8601e353";

interface Run {
    code: number | null;
    stdout: string;
    stderr: string;
    reports: Record<string, string>;
    /** The JSON report as written. */
    json: { projects: { findings: { policy: string; file: string; line: number }[] }[] };
    threads: number;
}

/** The repository: 40 files of Stacks with findings, RBAC across files, and files a folder read skips. */
function writeRepo(dir: string): void {
    for (let f = 0; f < 40; f++) {
        const ns = `team-${f % 4}`;
        const docs: string[] = [];
        for (let j = 0; j < 5; j++) {
            const name = `app-${f}-${j}`;
            const prod = j === 0;
            const lines = [
                "apiVersion: pulumi.com/v1",
                "kind: Stack",
                "metadata:",
                `  name: ${name}`,
                `  namespace: ${ns}`,
                "spec:",
                `  stack: acme/${name}/${prod ? "prod" : "dev"}`,
                "  projectRepo: https://github.com/acme/app",
                `  serviceAccountName: sa-${f}-${j}`,
                prod ? (f % 3 === 0 ? "  branch: main" : `  commit: ${SHA}`) : "  branch: main",
                `  destroyOnFinalize: ${!prod || f % 7 === 3}`,
                "  envRefs:",
                "    PULUMI_ACCESS_TOKEN:",
                ...(j === 2 && f % 5 === 1
                    ? ["      type: Literal", "      literal:", "        value: placeholder"]
                    : ["      type: Secret", "      secret:", "        name: token", "        key: accessToken"]),
            ];
            docs.push(lines.join("\n") + "\n");
        }
        // Cluster-admin for a Stack's account read at the other end of the repository (a stack-level finding
        // on an object another thread reads), and bindings of the same account twice (findings that tie).
        const other = 39 - f;
        for (const b of [0, 1]) {
            docs.push(
                [
                    "apiVersion: rbac.authorization.k8s.io/v1",
                    "kind: ClusterRoleBinding",
                    "metadata:",
                    `  name: crb-${f}-${b}`,
                    "roleRef:",
                    "  apiGroup: rbac.authorization.k8s.io",
                    "  kind: ClusterRole",
                    `  name: ${f % 4 === 2 ? "cluster-admin" : "view"}`,
                    "subjects:",
                    "  - kind: ServiceAccount",
                    `    name: sa-${other}-1`,
                    `    namespace: team-${other % 4}`,
                ].join("\n") + "\n",
            );
        }
        // A document a folder read skips (not a Kubernetes object), in every tenth file.
        if (f % 10 === 5) docs.push("just: a mapping\n");
        const folder = path.join(dir, "manifests", ns);
        fs.mkdirSync(folder, { recursive: true });
        fs.writeFileSync(path.join(folder, `group-${String(f).padStart(2, "0")}.yaml`), docs.join("---\n"));
    }
}

function run(args: string[], cwd: string, threads: number): Run {
    const out = fs.mkdtempSync(path.join(cwd, "out-"));
    const reports = ["json", "sarif", "junit", "policyreport"];
    const timings = path.join(out, "timings.json");
    const r = spawnSync(
        process.execPath,
        [CLI, "check", ...args, ...reports.map((f) => ["--report", `${f}=${path.join(out, f)}`]).flat()],
        {
            cwd,
            encoding: "utf8",
            timeout: 120000,
            env: { ...process.env, PKO_GUARD_WORKERS: String(threads), PKO_GUARD_TIMINGS: timings, GITHUB_ACTIONS: "" },
        },
    );
    const json = JSON.parse(fs.readFileSync(path.join(out, "json"), "utf8"));
    const read: Record<string, string> = {};
    for (const f of reports) {
        // Times of the run are not the run's verdict.
        read[f] = fs
            .readFileSync(path.join(out, f), "utf8")
            .replace(/"generatedAt": "[^"]*"/g, "")
            .replace(/"durationMs": \d+/g, "")
            .replace(/(seconds|nanos): \d+/g, "")
            .replace(/time="[^"]*"|timestamp="[^"]*"/g, "");
    }
    const threadsRan = JSON.parse(fs.readFileSync(timings, "utf8")).threads;
    return { code: r.status, stdout: r.stdout, stderr: r.stderr, reports: read, json, threads: threadsRan };
}

describe("check on several threads", function () {
    this.timeout(300000);
    let tmp: string;
    before(() => {
        tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-parallel-"));
        writeRepo(path.join(tmp, "repo"));
    });
    after(() => fs.rmSync(tmp, { recursive: true, force: true }));

    it("gives the single-threaded run's reports, output and exit code, byte for byte, on 2, 3 and 4 threads", () => {
        const one = run(["repo"], tmp, 1);
        assert.strictEqual(one.threads, 1);
        assert.strictEqual(one.code, 1, one.stderr);
        // What makes order show: findings of the four kinds, a stack-level one on a Stack read at the far end,
        // ties (one account bound twice), skipped documents in files of different parts, in read order.
        const findings = one.json.projects[0].findings;
        for (const p of [
            "pko-stack-credentials-from-secrets",
            "pko-stack-destroy-on-finalize-nonprod",
            "pko-stack-prod-pinned-commit",
            "pko-stack-no-cluster-admin",
        ]) {
            assert.ok(
                findings.some((f) => f.policy === p),
                p,
            );
        }
        assert.ok(
            findings.some(
                (f) => f.policy === "pko-stack-no-cluster-admin" && /group-3\d\.yaml$/.test(f.file) && f.line > 1,
            ),
        );
        const skipped = one.stderr.split("\n").filter((l) => l.includes("skipped"));
        assert.deepStrictEqual(
            skipped.map((l) => /group-(\d+)/.exec(l)?.[1]),
            ["05", "25", "15", "35"],
            one.stderr,
        );
        for (const threads of [2, 3, 4]) {
            const many = run(["repo"], tmp, threads);
            assert.strictEqual(many.threads, threads, "the run did not use its threads");
            assert.strictEqual(many.code, one.code);
            assert.strictEqual(many.stderr, one.stderr);
            assert.strictEqual(many.stdout, one.stdout);
            for (const f of Object.keys(one.reports))
                assert.strictEqual(many.reports[f], one.reports[f], `${f} report on ${threads} threads`);
        }
    });

    it("reports bad input read by a worker thread as the single-threaded run does: one line, exit 2; duplicates as findings", () => {
        const bad = path.join(tmp, "bad");
        writeRepo(bad);
        fs.writeFileSync(
            path.join(bad, "manifests", "team-3", "group-39.yaml"),
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  namespace: [oops\n",
        );
        const dup = path.join(tmp, "dup");
        writeRepo(dup);
        fs.copyFileSync(
            path.join(dup, "manifests", "team-0", "group-00.yaml"),
            path.join(dup, "manifests", "team-3", "group-99.yaml"),
        );
        const one = run(["bad"], tmp, 1);
        const many = run(["bad"], tmp, 3);
        assert.strictEqual(one.code, 2, one.stderr);
        assert.strictEqual(one.stderr.trim().split("\n").length, 1, one.stderr);
        assert.strictEqual(many.code, 2);
        assert.strictEqual(many.stderr, one.stderr);
        assert.strictEqual(many.reports.json, one.reports.json);
        // One identity twice is no bad input (a finding on each definition): the same run on any number of threads.
        const dupOne = run(["dup"], tmp, 1);
        const dupMany = run(["dup"], tmp, 3);
        assert.notStrictEqual(dupOne.code, 2, dupOne.stderr);
        assert.deepStrictEqual(
            [dupMany.code, dupMany.stdout, dupMany.stderr],
            [dupOne.code, dupOne.stdout, dupOne.stderr],
        );
        assert.strictEqual(dupMany.reports.json, dupOne.reports.json);
        assert.match(dupOne.reports.json, /"pko-guard-duplicate-object"/);
    });
});
