/**
 * The installed command's start-up snapshot (cli/bundle/snapshot-build.ts, built by `npm run build`): a run started
 * from it gives what today's path (bin/cli/pko-guard.js) gives, byte for byte: exit code, standard output and error,
 * the SARIF report, and the JSON report but for its time fields, on every manifest fixture and on the public
 * repositories of the corpus; bin/cli/pko-guard.sh starts from it when it fits, and runs today's path when it does
 * not (another node, NODE_OPTIONS set, a bundle rebuilt since).
 */
import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { SNAPSHOT_BLOB, SNAPSHOT_LAUNCHER, SNAPSHOT_NODE, buildBlob } from "../../../../cli/bundle/snapshot-build";
import { CLI_BUNDLE, CLI_CHECK_BUNDLE, CLI_ENTRY, REPO_ROOT } from "../../../../support/paths";

const FIXTURES = path.join(REPO_ROOT, "fixtures");
const CORPUS = path.join(REPO_ROOT, "test", "data", "corpus");

interface Run {
    exit: number | null;
    stdout: string;
    stderr: string;
    json: string;
    sarif: string;
    /** Whether the run started from the snapshot (its phase marks say so). */
    fromSnapshot: boolean;
}

/** The JSON report without what differs between any two runs: when it was made and how long it took. */
function timeless(json: string): string {
    return json
        .replace(/"generatedAt": "[^"]*"/g, '"generatedAt": ""')
        .replace(/"durationMs": \d+/g, '"durationMs": 0');
}

describe("the start-up snapshot", function () {
    this.timeout(600000);
    let tmp: string;
    let runs = 0;
    let OFFLINE: string[] = [];
    before(() => {
        tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-snapshot-"));
        OFFLINE = ["--offline", "--cache-dir", path.join(tmp, "cache")];
    });
    after(() => fs.rmSync(tmp, { recursive: true, force: true }));

    /** `check ARGS` in `cwd`: from the snapshot (node --snapshot-blob), through the launcher, or as bin/cli/pko-guard.js. */
    function check(
        how: "snapshot" | "launcher" | "today",
        args: string[],
        cwd: string,
        env: NodeJS.ProcessEnv = {},
    ): Run {
        const n = ++runs;
        const json = path.join(tmp, `${n}.json`);
        const sarif = path.join(tmp, `${n}.sarif`);
        const timings = path.join(tmp, `${n}.timings.json`);
        // Nothing fetched (a test reaches no server it did not start), and a cache of the test's own.
        const argv = ["check", ...args, ...OFFLINE, "--report", `json=${json}`, "--report", `sarif=${sarif}`];
        const [cmd, pre] =
            how === "snapshot"
                ? [process.execPath, ["--snapshot-blob", SNAPSHOT_BLOB, "--"]]
                : how === "launcher"
                  ? [SNAPSHOT_LAUNCHER, []]
                  : [process.execPath, [CLI_ENTRY]];
        const r = spawnSync(cmd, [...pre, ...argv], {
            cwd,
            encoding: "utf8",
            timeout: 240000,
            env: { ...process.env, GITHUB_ACTIONS: "", NO_COLOR: "1", PKO_GUARD_TIMINGS: timings, ...env },
        });
        const read = (f: string) => (fs.existsSync(f) ? fs.readFileSync(f, "utf8") : "");
        return {
            exit: r.status,
            stdout: r.stdout,
            stderr: r.stderr,
            json: timeless(read(json)),
            sarif: read(sarif),
            fromSnapshot: read(timings) !== "" && JSON.parse(read(timings)).snapshot === 1,
        };
    }

    function same(args: string[], cwd: string, what: string): void {
        const today = check("today", args, cwd);
        const snap = check("snapshot", args, cwd);
        assert.strictEqual(today.fromSnapshot, false, what);
        assert.strictEqual(snap.fromSnapshot, true, what);
        assert.ok(today.exit === 0 || today.exit === 1 || today.exit === 2, `${what}: exit ${today.exit}`);
        for (const k of ["exit", "stdout", "stderr", "json", "sarif"] as const)
            assert.strictEqual(snap[k], today[k], `${what}: ${k}`);
    }

    it("is built by npm run build, for the node that built it", () => {
        assert.ok(fs.existsSync(SNAPSHOT_BLOB), `npm run build writes ${path.basename(SNAPSHOT_BLOB)}`);
        assert.strictEqual(fs.readFileSync(SNAPSHOT_NODE, "utf8").trim(), fs.realpathSync(process.execPath));
    });

    it("gives today's bytes on every manifest fixture", () => {
        const folders = fs
            .readdirSync(FIXTURES)
            .sort()
            .map((f) => path.join(FIXTURES, f, "manifests"))
            .filter((d) => fs.existsSync(d));
        assert.ok(folders.length >= 10, `${folders.length} manifest fixtures`);
        for (const dir of folders) same([dir], REPO_ROOT, path.relative(REPO_ROOT, dir));
    });

    it("gives today's bytes on each public repository of the corpus, checked as its users run it", () => {
        const names = fs.readdirSync(CORPUS).filter((n) => fs.existsSync(path.join(CORPUS, n, "corpus.json")));
        assert.ok(names.length > 0);
        for (const name of names.sort()) {
            const entry = JSON.parse(fs.readFileSync(path.join(CORPUS, name, "corpus.json"), "utf8"));
            const clone = path.join(tmp, name);
            fs.cpSync(path.join(CORPUS, name, "repo"), clone, { recursive: true });
            const git = (...args: string[]) =>
                assert.strictEqual(spawnSync("git", args, { cwd: clone }).status, 0, `git ${args.join(" ")}`);
            git("init", "-q");
            git("remote", "add", "origin", `${entry.repository}.git`);
            git("add", "-A");
            git("-c", "user.email=t@example.invalid", "-c", "user.name=t", "commit", "-qm", "snapshot");
            same(entry.args as string[], clone, name);
        }
    });

    it("gives today's bytes with a policy config, and with one its schema refuses (what check loads on first use)", () => {
        const dir = path.join(FIXTURES, "gitops-guide-example", "manifests");
        const refused = path.join(tmp, "refused-config.json");
        fs.writeFileSync(refused, JSON.stringify({ "pko-guard-production": { productionNamespaces: "payments" } }));
        same(
            [dir, "--config", path.join(FIXTURES, "prod-by-namespace-config", "policy-config.json")],
            REPO_ROOT,
            "config",
        );
        same([dir, "--config", refused], REPO_ROOT, "refused config");
        const r = check("snapshot", [dir, "--config", refused], REPO_ROOT);
        assert.strictEqual(r.exit, 2);
        assert.match(r.stderr, /productionNamespaces must be array/);
    });

    it("gives today's bytes for usage errors and the other commands", () => {
        for (const args of [[], ["--version"], ["check"], ["check", "--no-such-option"], ["rules"], ["explain", "x"]]) {
            const run = (how: "snapshot" | "today") =>
                spawnSync(
                    process.execPath,
                    how === "snapshot" ? ["--snapshot-blob", SNAPSHOT_BLOB, "--", ...args] : [CLI_ENTRY, ...args],
                    {
                        cwd: tmp,
                        encoding: "utf8",
                        env: { ...process.env, NO_COLOR: "1" },
                    },
                );
            const a = run("today");
            const b = run("snapshot");
            assert.deepStrictEqual([b.status, b.stdout, b.stderr], [a.status, a.stdout, a.stderr], args.join(" "));
            // The launcher starts only `check` from the snapshot (which holds `check` alone).
            const c = spawnSync(SNAPSHOT_LAUNCHER, args, {
                cwd: tmp,
                encoding: "utf8",
                env: { ...process.env, NO_COLOR: "1" },
            });
            assert.deepStrictEqual(
                [c.status, c.stdout, c.stderr],
                [a.status, a.stdout, a.stderr],
                `launcher ${args.join(" ")}`,
            );
        }
    });

    it("is what the launcher starts from when it fits; today's path with NODE_OPTIONS, PKO_GUARD_SNAPSHOT=0 or another node", () => {
        const dir = path.join(FIXTURES, "gitops-guide-example", "manifests");
        const fits = check("launcher", [dir], REPO_ROOT);
        assert.strictEqual(fits.fromSnapshot, true);
        const today = check("today", [dir], REPO_ROOT);
        for (const k of ["exit", "stdout", "stderr", "json", "sarif"] as const)
            assert.strictEqual(fits[k], today[k], k);
        for (const env of [{ NODE_OPTIONS: "--max-old-space-size=512" }, { PKO_GUARD_SNAPSHOT: "0" }]) {
            const r = check("launcher", [dir], REPO_ROOT, env);
            assert.strictEqual(r.fromSnapshot, false, JSON.stringify(env));
            assert.strictEqual(r.stdout, today.stdout);
        }
        // Another node first on PATH (a link to this one under another name is another binary to the launcher).
        const bin = path.join(tmp, "other-node");
        fs.mkdirSync(bin);
        fs.copyFileSync(process.execPath, path.join(bin, "node"));
        fs.chmodSync(path.join(bin, "node"), 0o755);
        const other = check("launcher", [dir], REPO_ROOT, { PATH: `${bin}${path.delimiter}${process.env.PATH}` });
        assert.strictEqual(other.fromSnapshot, false);
        assert.strictEqual(other.stdout, today.stdout);
    });

    it("runs today's path when the bundle beside it is not the one it holds", () => {
        // A copy of the built command with a blob of its own; then its bundle is rebuilt (here: one more line).
        const pkg = path.join(tmp, "pkg");
        const bin = path.join(pkg, "bin", "cli");
        fs.mkdirSync(path.join(bin, "bundle"), { recursive: true });
        fs.copyFileSync(path.join(REPO_ROOT, "package.json"), path.join(pkg, "package.json"));
        for (const f of [CLI_ENTRY, CLI_BUNDLE, CLI_CHECK_BUNDLE]) fs.copyFileSync(f, path.join(bin, path.basename(f)));
        const builder = path.join(path.dirname(CLI_BUNDLE), "bundle", "snapshot-builder.js");
        fs.copyFileSync(builder, path.join(bin, "bundle", path.basename(builder)));
        const blob = path.join(bin, path.basename(SNAPSHOT_BLOB));
        assert.strictEqual(buildBlob(bin, blob), undefined);
        const dir = path.join(FIXTURES, "gitops-guide-example", "manifests");
        const today = check("today", [dir], REPO_ROOT);
        const fromCopy = () => {
            const timings = path.join(tmp, `copy-${++runs}.timings.json`);
            const r = spawnSync(process.execPath, ["--snapshot-blob", blob, "--", "check", dir, ...OFFLINE], {
                cwd: REPO_ROOT,
                encoding: "utf8",
                env: { ...process.env, NO_COLOR: "1", GITHUB_ACTIONS: "", PKO_GUARD_TIMINGS: timings },
            });
            return { stdout: r.stdout, snapshot: JSON.parse(fs.readFileSync(timings, "utf8")).snapshot === 1 };
        };
        assert.deepStrictEqual(fromCopy(), { stdout: today.stdout, snapshot: true });
        fs.appendFileSync(path.join(bin, path.basename(CLI_CHECK_BUNDLE)), "\n// rebuilt\n");
        assert.deepStrictEqual(fromCopy(), { stdout: today.stdout, snapshot: false });
    });
});
