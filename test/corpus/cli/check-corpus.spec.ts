/**
 * `pko-guard check` on public repositories as their users run it: each snapshot under test/data/corpus/<name>/repo
 * is copied into a temporary clone (a git repository whose `origin` is the upstream URL), checked with the
 * arguments its corpus.json gives, and must give exactly the exit code, findings and error lines written there.
 *
 * After a change that moves a verdict on purpose, `PKO_GUARD_CORPUS_UPDATE=1 npm run test:corpus` rewrites the
 * expectations; review the diff of corpus.json like code: every finding in it is one a person agreed with.
 */
import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { CLI_ENTRY, REPO_ROOT } from "../../../support/paths";

const CORPUS = path.join(REPO_ROOT, "test", "data", "corpus");
const UPDATE = process.env.PKO_GUARD_CORPUS_UPDATE === "1";

interface Finding {
    status: string;
    rule: string;
    object: string;
    location: string;
}

interface Entry {
    repository: string;
    commit: string;
    args: string[];
    exit: number | null;
    stderr?: string[];
    findings: Finding[];
}

function git(cwd: string, ...args: string[]): void {
    const r = spawnSync("git", args, { cwd, encoding: "utf8" });
    assert.strictEqual(r.status, 0, `git ${args.join(" ")}: ${r.stderr}`);
}

/** A clone as a user has it: the snapshot committed, `origin` the upstream repository. */
function cloneOf(name: string, root: string, entry: Entry): string {
    const clone = path.join(root, name);
    fs.cpSync(path.join(CORPUS, name, "repo"), clone, { recursive: true });
    git(clone, "init", "-q");
    git(clone, "remote", "add", "origin", `${entry.repository}.git`);
    git(clone, "add", "-A");
    git(clone, "-c", "user.email=corpus@example.invalid", "-c", "user.name=corpus", "commit", "-qm", entry.commit);
    return clone;
}

function objectName(o: { kind?: string; namespace?: string; name?: string } | undefined, resource: string): string {
    if (!o) return resource;
    return [o.kind, o.namespace, o.name].filter((p) => p !== undefined && p !== "").join("/");
}

/** The findings of a JSON report, in a stable order. */
function findingsOf(report: any): Finding[] {
    const found: Finding[] = [];
    for (const project of report.projects ?? [])
        for (const f of project.findings ?? [])
            found.push({
                status: f.status,
                rule: f.rule,
                object: objectName(f.object, f.resource),
                location: f.location ?? "",
            });
    const key = (f: Finding) => `${f.rule}\u0000${f.object}\u0000${f.location}\u0000${f.status}`;
    return found.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

describe("check on public repositories (test/data/corpus)", function () {
    this.timeout(300000);
    let root: string;
    before(() => {
        root = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-corpus-"));
    });
    after(() => fs.rmSync(root, { recursive: true, force: true }));

    const names = fs
        .readdirSync(CORPUS, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name)
        .sort();

    it("holds at least one repository, each with its licence", () => {
        assert.ok(names.length > 0);
        for (const name of names) assert.ok(fs.existsSync(path.join(CORPUS, name, "repo", "LICENSE")), name);
    });

    for (const name of names) {
        it(`${name}: the exit code, findings and error lines its corpus.json expects`, () => {
            const file = path.join(CORPUS, name, "corpus.json");
            const entry: Entry = JSON.parse(fs.readFileSync(file, "utf8"));
            const clone = cloneOf(name, root, entry);
            const report = path.join(root, `${name}.json`);
            const r = spawnSync(process.execPath, [CLI_ENTRY, "check", ...entry.args, "--report", `json=${report}`], {
                cwd: clone,
                encoding: "utf8",
                env: { ...process.env, GITHUB_ACTIONS: "", NO_COLOR: "1" },
                timeout: 240000,
            });
            const got = {
                exit: r.status,
                stderr: r.status === 2 ? r.stderr.split("\n").filter((l) => l.trim() !== "") : [],
                findings: fs.existsSync(report) ? findingsOf(JSON.parse(fs.readFileSync(report, "utf8"))) : [],
            };
            if (UPDATE) {
                fs.writeFileSync(file, JSON.stringify({ ...entry, ...got }, null, 4) + "\n");
                return;
            }
            assert.notStrictEqual(
                entry.exit,
                null,
                `${name}: no expectation yet (PKO_GUARD_CORPUS_UPDATE=1, then review)`,
            );
            assert.deepStrictEqual(got, { exit: entry.exit, stderr: entry.stderr ?? [], findings: entry.findings });
        });
    }
});
