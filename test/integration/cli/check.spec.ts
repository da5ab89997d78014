/**
 * `pko-guard check` as a user runs it: from a temporary folder outside the repository, over manifests in
 * files, folders and standard input. Exit codes 0/1/2, findings at file:line of the field, valid
 * JSON/JUnit/SARIF reports carrying the location, one clear line for each kind of bad input, and a
 * Secret's values never in any output.
 */
import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { CLI_ENTRY, REPO_ROOT } from "../../../support/paths";
import { aliasBombConfigMap } from "../../../harness/hostile-yaml";
import { assertOneLine } from "../../support/inert";
import { jsonReportErrors, junitErrors, sarifErrors } from "../../support/validators";

const CLI = CLI_ENTRY;
const GUIDE = path.join(REPO_ROOT, "fixtures", "gitops-guide-example", "manifests");
const GOVERNED = path.join(REPO_ROOT, "fixtures", "gitops-guide-governed", "manifests");
const CANARY = "canary-7f3a9c1e5b";

function check(args: string[], cwd: string, input?: string) {
    const r = spawnSync(process.execPath, [CLI, "check", ...args], { encoding: "utf8", cwd, input, timeout: 60000 });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The line (1-based) of the first line of a file matching a pattern. */
function lineOf(file: string, re: RegExp): number {
    return (
        fs
            .readFileSync(file, "utf8")
            .split("\n")
            .findIndex((l) => re.test(l)) + 1
    );
}

describe("pko-guard check", function () {
    this.timeout(120000);
    let tmp: string;
    const write = (rel: string, text: string | Buffer) => {
        const f = path.join(tmp, rel);
        fs.mkdirSync(path.dirname(f), { recursive: true });
        fs.writeFileSync(f, text);
        return f;
    };
    beforeEach(() => {
        tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-check-"));
    });
    afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

    it("fails the guide's layout for the webapp cluster-admin binding and the release branch, at the fields' lines, with valid reports", async () => {
        const repo = path.join(tmp, "webapp-manifests");
        fs.cpSync(GUIDE, repo, { recursive: true });
        const r = check(
            [
                "manifests",
                "applications",
                "--repo-root",
                ".",
                "--repository",
                "https://github.com/myorg/webapp-manifests.git",
                "--report",
                "json=out/r.json",
                "--report",
                "junit=out/r.xml",
                "--report",
                "sarif=out/r.sarif",
            ],
            repo,
        );
        assert.strictEqual(r.code, 1, r.stderr);
        const prod = path.join(repo, "manifests", "production", "stack.yaml");
        const branchLine = lineOf(prod, /^\s+branch: release/);
        const subjectLine = lineOf(prod, /name: webapp:cluster-admin/) + 8; // the subject's "- kind: ServiceAccount"
        assert.strictEqual(fs.readFileSync(prod, "utf8").split("\n")[subjectLine - 1].trim(), "- kind: ServiceAccount");
        const json = JSON.parse(fs.readFileSync(path.join(repo, "out", "r.json"), "utf8"));
        assert.deepStrictEqual(jsonReportErrors(json), []);
        const rows = json.projects[0].findings as {
            policy: string;
            resource: string;
            file: string;
            line: number;
            column: number;
            field?: string;
            level: string;
        }[];
        const pinned = rows.filter((x) => x.policy === "pko-stack-prod-pinned-commit");
        assert.deepStrictEqual(
            pinned.map((x) => [x.resource, x.file, x.line, x.field, x.level]),
            [
                [
                    "Stack/pulumi/webapp-production",
                    "manifests/production/stack.yaml",
                    branchLine,
                    "spec.branch",
                    "mandatory",
                ],
            ],
        );
        const admin = rows.filter((x) => x.policy === "pko-stack-no-cluster-admin");
        assert.strictEqual(admin.length, 3);
        for (const x of admin) {
            assert.deepStrictEqual(
                [x.resource, x.file, x.line, x.column, x.field],
                [
                    "ClusterRoleBinding/webapp:cluster-admin",
                    "manifests/production/stack.yaml",
                    subjectLine,
                    5,
                    "subjects[0]",
                ],
            );
        }
        assert.deepStrictEqual(
            rows
                .filter((x) => x.level === "mandatory")
                .map((x) => x.policy)
                .sort(),
            [
                "pko-stack-no-cluster-admin",
                "pko-stack-no-cluster-admin",
                "pko-stack-no-cluster-admin",
                "pko-stack-prod-pinned-commit",
            ],
        );
        assert.match(r.stdout, new RegExp(`manifests/production/stack.yaml:${branchLine}:3`));
        assert.match(
            r.stdout,
            /9 object\(s\) in 6 file\(s\) \(0 of kinds no rule reads\); 4 violation\(s\), 4 blocking: FAIL/,
        );

        const sarif = JSON.parse(fs.readFileSync(path.join(repo, "out", "r.sarif"), "utf8"));
        assert.deepStrictEqual(sarifErrors(sarif), []);
        const result = sarif.runs[0].results.find(
            (x: { ruleId: string }) => x.ruleId === "pko-stack-prod-pinned-commit",
        );
        assert.deepStrictEqual(
            result.locations[0].physicalLocation.artifactLocation.uri,
            "manifests/production/stack.yaml",
        );
        assert.deepStrictEqual(result.locations[0].physicalLocation.region, { startLine: branchLine, startColumn: 3 });
        assert.strictEqual(result.level, "error");

        const xml = fs.readFileSync(path.join(repo, "out", "r.xml"), "utf8");
        assert.deepStrictEqual(await junitErrors(xml), []);
        assert.ok(xml.includes(`manifests/production/stack.yaml:${branchLine}:3: Stack/pulumi/webapp-production`), xml);
    });

    it("passes the corrected layout (exit 0)", () => {
        // The fixture's manifests folder is the repository its Applications' paths are relative to (inside this
        // repository's checkout, naming it is what a user does); read from elsewhere, their folders are not this
        // repository's and argocd-app-rendered fails closed.
        const r = check(
            [GOVERNED, "--repo-root", GOVERNED, "--repository", "https://github.com/myorg/webapp-manifests.git"],
            tmp,
        );
        assert.strictEqual(r.code, 0, r.stderr + r.stdout);
        assert.match(r.stdout, /0 violation\(s\), 0 blocking: PASS/);
    });

    it("reads standard input (kustomize build | pko-guard check -) and List objects", () => {
        const prod = fs.readFileSync(path.join(GUIDE, "manifests", "production", "stack.yaml"), "utf8");
        const r = check(["-"], tmp, prod);
        assert.strictEqual(r.code, 1, r.stderr);
        assert.match(r.stdout, /pko-stack-prod-pinned-commit.*\(<stdin>:\d+:3\)/s);
        const list = JSON.stringify(
            {
                apiVersion: "v1",
                kind: "List",
                items: [
                    {
                        apiVersion: "pulumi.com/v1",
                        kind: "Stack",
                        metadata: { name: "app", namespace: "pulumi" },
                        spec: { stack: "acme/app/prod", projectRepo: "https://github.com/acme/app", branch: "main" },
                    },
                ],
            },
            null,
            2,
        );
        const l = check(["-"], tmp, list);
        assert.strictEqual(l.code, 1, l.stderr);
        assert.match(l.stdout, /Stack\/pulumi\/app/);
    });

    it("applies --config (levels, disabled policies, properties) and --fail-on-advisory as the gate does", () => {
        const f = write(
            "stack.yaml",
            "apiVersion: pulumi.com/v1\nkind: Stack\nmetadata:\n  name: app\n  namespace: payments\nspec:\n  stack: acme/app/main\n  projectRepo: https://github.com/acme/app\n  branch: main\n",
        );
        assert.strictEqual(check([f], tmp).code, 0);
        // Production is one setting of the pack (pko-guard-production), read by every production-aware rule.
        write("cfg.json", JSON.stringify({ "pko-guard-production": { productionNamespaces: ["payments"] } }));
        const r = check([f, "--config", "cfg.json"], tmp);
        assert.strictEqual(r.code, 1);
        assert.match(r.stdout, /pko-stack-prod-pinned-commit/);
        write(
            "off.json",
            JSON.stringify({
                "pko-guard-production": { productionNamespaces: ["payments"] },
                "pko-stack-prod-pinned-commit": "disabled",
            }),
        );
        assert.doesNotMatch(check([f, "--config", "off.json"], tmp).stdout, /pko-stack-prod-pinned-commit/);
        write(
            "adv.json",
            JSON.stringify({
                "pko-guard-production": { productionNamespaces: ["payments"] },
                "pko-stack-prod-pinned-commit": "advisory",
                "pko-stack-prod-refresh": "disabled",
            }),
        );
        assert.strictEqual(check([f, "--config", "adv.json"], tmp).code, 0);
        assert.strictEqual(check([f, "--config", "adv.json", "--fail-on-advisory"], tmp).code, 1);
        write("bad.json", JSON.stringify({ "no-such-policy": "mandatory" }));
        const bad = check([f, "--config", "bad.json"], tmp);
        assert.strictEqual(bad.code, 2);
        assert.match(bad.stderr, /^pko-guard: bad\.json: "?no-such-policy"? is not a policy of this pack\n$/);
    });

    it("links Argo CD Applications to the Stacks they sync by spec.source.path", () => {
        const stack = (env: string, prod: boolean) =>
            `apiVersion: pulumi.com/v1\nkind: Stack\nmetadata:\n  name: webapp-${env}\n  namespace: pulumi\nspec:\n  stack: myorg/webapp/${env}\n  projectRepo: https://github.com/myorg/webapp\n  ${prod ? "commit: 2b0889718d3e63feeb6079ccd5e4488d8601e353" : "branch: main"}\n  destroyOnFinalize: true\n`;
        const app = (env: string) =>
            `apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: webapp-${env}\n  namespace: argocd\nspec:\n  source:\n    repoURL: https://github.com/myorg/webapp\n    path: manifests/${env}\n  destination:\n    namespace: pulumi\n  syncPolicy:\n    automated:\n      prune: true\n`;
        write("repo/manifests/production/stack.yaml", stack("production", true));
        write("repo/manifests/staging/stack.yaml", stack("staging", false));
        write("repo/applications/production.yaml", app("production"));
        write("repo/applications/staging.yaml", app("staging"));
        const r = check(
            [".", "--repo-root", ".", "--repository", "https://github.com/myorg/webapp", "--report", "json=r.json"],
            path.join(tmp, "repo"),
        );
        const rows = JSON.parse(fs.readFileSync(path.join(tmp, "repo", "r.json"), "utf8")).projects[0].findings.filter(
            (x: { policy: string }) => x.policy === "argocd-app-pko-sync-order",
        );
        // By namespace alone both Applications would manage the production Stack; by path only its own does.
        assert.strictEqual(rows.length, 1, r.stdout);
        assert.match(rows[0].message, /Application "Application\/argocd\/webapp-production" auto-prunes/);
        assert.strictEqual(rows[0].resource, "Application/argocd/webapp-production");
    });

    describe("bad input: one line on stderr, exit 2 (or a counted skip)", () => {
        it("invalid YAML names the file and line, and never quotes it", () => {
            const f = write(
                "m/bad.yaml",
                `apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\nstringData:\n  token: [${CANARY}\n`,
            );
            const r = check(["m"], tmp);
            assertOneLine(r, /^pko-guard: m\/bad\.yaml:\d+:\d+: invalid YAML: /);
            assert.ok(!(r.stdout + r.stderr).includes(CANARY));
            assert.ok(fs.existsSync(f));
        });

        it("aliases that expand without bound, or contain themselves: one line, exit 2", () => {
            write("m/laughs.yaml", aliasBombConfigMap("lol", 9));
            const r = check(["m/laughs.yaml"], tmp);
            assertOneLine(
                r,
                /^pko-guard: m\/laughs\.yaml:1:1: invalid YAML: aliases expand to more than 1,000,000 nodes$/,
            );
            write("m/loop.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: loop}\ndata: &d {self: *d}\n");
            assertOneLine(
                check(["m/loop.yaml"], tmp),
                /^pko-guard: m\/loop\.yaml:4:17: invalid YAML: an alias refers to a node that contains it$/,
            );
        });

        it("a document that is not a mapping: exit 2 for a named file, a counted skip inside a folder", () => {
            write("m/list.yaml", "- a\n- b\n");
            const named = check(["m/list.yaml"], tmp);
            assertOneLine(named, /^pko-guard: m\/list\.yaml:1:1: the document is a list, not a Kubernetes object/);
            write("m/ci.yml", "name: ci\non: push\n");
            write("m/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n");
            const folder = check(["m"], tmp);
            assert.strictEqual(folder.code, 0, folder.stderr);
            assert.match(
                folder.stderr,
                /^pko-guard: skipped m\/ci\.yml:1: not a Kubernetes object \(no apiVersion and kind\)$/m,
            );
            assert.match(folder.stderr, /^pko-guard: skipped m\/list\.yaml:1: not a Kubernetes object \(a list\)$/m);
            assert.match(folder.stdout, /1 object\(s\) in 3 file\(s\) \(1 of kinds no rule reads, 2 skipped\)/);
            // Nothing but those: no Kubernetes object at all is bad input, said after the skipped files.
            fs.rmSync(path.join(tmp, "m", "cm.yaml"));
            const none = check(["m"], tmp);
            assert.deepStrictEqual(
                [none.code, none.stdout, none.stderr.split("\n").slice(-2)],
                [
                    2,
                    "",
                    [
                        `pko-guard: no Kubernetes object found in m (2 file(s) read, 2 skipped; repository root ${fs.realpathSync(tmp)})`,
                        "",
                    ],
                ],
            );
        });

        it("an unreadable path", () => {
            assertOneLine(check(["nowhere"], tmp), /^pko-guard: nowhere: no such file or folder$/);
            fs.mkdirSync(path.join(tmp, "m"));
            fs.symlinkSync(path.join(tmp, "gone.yaml"), path.join(tmp, "m", "link.yaml"));
            const r = check(["m"], tmp);
            assertOneLine(r, /^pko-guard: .*link\.yaml: broken symbolic link$/);
        });

        it("a binary file: exit 2 when named and inside a folder; a counted skip with --skip-unreadable", () => {
            write("m/blob.yaml", Buffer.from([0x61, 0x00, 0x62, 0x0a]));
            write("m/ok.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n");
            const named = check(["m/blob.yaml"], tmp);
            assertOneLine(named, /^pko-guard: m\/blob\.yaml: binary file, not a manifest$/);
            const folder = check(["m"], tmp);
            assertOneLine(folder, /^pko-guard: m\/blob\.yaml: binary file, not a manifest$/);
            const skipped = check(["m", "--skip-unreadable"], tmp);
            assertOneLine(skipped, /^pko-guard: skipped m\/blob\.yaml: binary file, not a manifest$/, 0);
            assert.match(skipped.stdout, /1 skipped/);
        });

        it("an oversized file: exit 2 when named and inside a folder; a counted skip with --skip-unreadable", () => {
            const f = write("m/huge.yaml", "");
            write("m/ok.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n");
            fs.truncateSync(f, 17 * 1024 * 1024); // sparse: cheap to create; read only up to the limit
            const named = check(["m/huge.yaml"], tmp);
            assertOneLine(named, /^pko-guard: m\/huge\.yaml: larger than 16 MiB; not read$/);
            const folder = check(["m"], tmp);
            assertOneLine(folder, /^pko-guard: m\/huge\.yaml: larger than 16 MiB; not read$/);
            const skipped = check(["m", "--skip-unreadable"], tmp);
            assertOneLine(skipped, /^pko-guard: skipped m\/huge\.yaml: larger than 16 MiB; not read$/, 0);
        });

        it("two objects with one identity are no bad input: both judged, an advisory finding on each naming both files", () => {
            const sa = "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: webapp\n  namespace: pulumi\n";
            write("m/a.yaml", sa);
            write("m/b/c.yaml", `---\n${sa}`);
            const r = check(["m", "--format", "json"], tmp);
            assert.strictEqual(r.code, 0, r.stderr);
            const rows = JSON.parse(r.stdout).projects[0].findings as Record<string, unknown>[];
            assert.deepStrictEqual(
                rows.map((x) => [x.policy, x.resource, x.file, x.line, x.level, x.status]),
                [
                    [
                        "pko-guard-duplicate-object",
                        "ServiceAccount/pulumi/webapp",
                        "m/a.yaml",
                        1,
                        "advisory",
                        "advisory",
                    ],
                    [
                        "pko-guard-duplicate-object",
                        "ServiceAccount/pulumi/webapp",
                        "m/b/c.yaml",
                        2,
                        "advisory",
                        "advisory",
                    ],
                ],
            );
            assert.match(
                String(rows[0].message),
                /defined 2 times in the files no Application syncs: "m\/a\.yaml:1", "m\/b\/c\.yaml:2"; /,
            );
            assert.strictEqual(check(["m", "--fail-on-advisory"], tmp).code, 1);
        });

        it("a governed kind without metadata.name", () => {
            write("m/s.yaml", "apiVersion: pulumi.com/v1\nkind: Stack\nspec: {}\n");
            const r = check(["m"], tmp);
            assertOneLine(r, /^pko-guard: m\/s\.yaml:1:1: Stack has no metadata\.name$/);
        });

        it("a name or namespace that YAML 1.1 decodes as a boolean or number says so, without quoting the value", () => {
            write("m/y.yaml", "apiVersion: pulumi.com/v1\nkind: Stack\nmetadata:\n  name: y\nspec: {}\n");
            assertOneLine(
                check(["m/y.yaml"], tmp),
                /^pko-guard: m\/y\.yaml:1:1: Stack: metadata\.name is a boolean, not a string \(Kubernetes reads YAML 1\.1: .*quote the value\)$/,
            );
            write(
                "m/y.yaml",
                "apiVersion: pulumi.com/v1\nkind: Stack\nmetadata:\n  name: a\n  namespace: 0755\nspec: {}\n",
            );
            assertOneLine(
                check(["m/y.yaml"], tmp),
                /^pko-guard: m\/y\.yaml:1:1: Stack "a": metadata\.namespace is a number, not a string \(Kubernetes reads YAML 1\.1: /,
            );
            write("m/y.yaml", "apiVersion: pulumi.com/v1\nkind: Stack\nmetadata:\n  name: [a]\nspec: {}\n");
            assertOneLine(
                check(["m/y.yaml"], tmp),
                /^pko-guard: m\/y\.yaml:1:1: Stack: metadata\.name is a list, not a string$/,
            );
        });

        it("no path at all is a usage error", () => {
            assert.strictEqual(check([], tmp).code, 2);
        });
    });

    it("finds lines in any document layout: comments, empty documents, flow and indented roots, CRLF, a BOM, unknown tags", () => {
        const stack = (name: string, indent = "") =>
            [
                "apiVersion: pulumi.com/v1",
                "kind: Stack",
                "metadata:",
                `  name: ${name}`,
                "  namespace: pulumi",
                "spec:",
                "  stack: acme/app/prod",
                "  projectRepo: https://github.com/acme/app",
                "  branch: release",
            ].map((l) => indent + l);
        const lines = [
            "\ufeff# a comment before the first document",
            "---",
            "# and one inside it",
            ...stack("first"),
            "---",
            "---",
            // Kubernetes' reader allows only a comment after `---` on its line: a flow root goes on the next one.
            "--- # flow",
            "{apiVersion: v1, kind: ConfigMap, metadata: {name: flow}, data: {k: !Ref v}}",
            "---",
            ...stack("indented", "  "),
            "...",
            "---",
            ...stack("last"),
        ];
        write("m/all.yaml", lines.join("\r\n") + "\r\n");
        const r = check(["m", "--report", "json=r.json"], tmp);
        assert.strictEqual(r.code, 1, r.stderr);
        const rows = JSON.parse(fs.readFileSync(path.join(tmp, "r.json"), "utf8")).projects[0].findings as {
            policy: string;
            resource: string;
            line: number;
            column: number;
        }[];
        const branchLines = lines.map((l, i) => (/branch: release/.test(l) ? i + 1 : 0)).filter((n) => n > 0);
        const pinned = rows
            .filter((x) => x.policy === "pko-stack-prod-pinned-commit")
            .map((x) => [x.resource, x.line, x.column]);
        assert.deepStrictEqual(pinned, [
            ["Stack/pulumi/first", branchLines[0], 3],
            ["Stack/pulumi/indented", branchLines[1], 5],
            ["Stack/pulumi/last", branchLines[2], 3],
        ]);
        assert.match(r.stdout, /4 object\(s\) in 1 file\(s\) \(1 of kinds no rule reads\)/);
    });

    it("locates a finding on a repeated key at its last occurrence, the value Kubernetes decodes", () => {
        const lines = [
            "apiVersion: v1",
            "kind: List",
            "items: []",
            "items:",
            "- apiVersion: pulumi.com/v1",
            "  kind: Stack",
            "  metadata: {name: app, namespace: pulumi}",
            "  spec:",
            "    stack: acme/app/prod",
            "    projectRepo: https://github.com/acme/app",
            "    commit: 0123456789abcdef0123456789abcdef01234567",
            "    refresh: true",
            "    destroyOnFinalize: false",
            "    destroyOnFinalize: true",
        ];
        write("m/dup.yaml", lines.join("\n") + "\n");
        const r = check(["m", "--report", "json=r.json"], tmp);
        assert.strictEqual(r.code, 1, r.stderr);
        const rows = JSON.parse(fs.readFileSync(path.join(tmp, "r.json"), "utf8")).projects[0].findings as {
            policy: string;
            resource: string;
            line: number;
            column: number;
        }[];
        const at = (policy: string) =>
            rows.filter((x) => x.policy === policy).map((x) => [x.resource, x.line, x.column]);
        assert.deepStrictEqual(at("pko-stack-destroy-on-finalize-nonprod"), [["Stack/pulumi/app", 14, 5]]);
        assert.deepStrictEqual(at("pko-stack-auth-delegator"), [["Stack/pulumi/app", 5, 3]]);
    });

    it("writes its whole output into a pipe before it exits, and a reader that goes away does not hold it", () => {
        // 400 Stacks with advisory findings: a terminal table over twice a pipe's 64 KiB (the command used to exit
        // with the pipe's first 64 KiB written and the rest dropped).
        const stacks = Array.from(
            { length: 400 },
            (_, i) =>
                `apiVersion: pulumi.com/v1\nkind: Stack\nmetadata:\n  name: app-${i}\n  namespace: team\nspec:\n  stack: acme/app-${i}/dev\n  projectRepo: https://github.com/acme/app\n  branch: main\n`,
        );
        write("m/stacks.yaml", stacks.join("---\n"));
        // Through a shell's pipe (64 KiB of buffer; the socket pairs spawnSync reads from hold more), and into a file.
        const run = (redirect: string) =>
            spawnSync(
                "bash",
                ["-c", `"${process.execPath}" "${CLI}" check m ${redirect}; echo "exit \${PIPESTATUS[0]}"`],
                { cwd: tmp, encoding: "utf8", timeout: 60000 },
            );
        const toFile = run("> out.txt");
        const piped = run("| cat > piped.txt");
        for (const r of [toFile, piped]) assert.deepStrictEqual([r.status, r.stderr, r.stdout], [0, "", "exit 0\n"]);
        const whole = fs.readFileSync(path.join(tmp, "out.txt"), "utf8");
        assert.ok(Buffer.byteLength(whole) > 2 * 64 * 1024, `${Buffer.byteLength(whole)} bytes`);
        assert.match(whole, /400 object\(s\) in 1 file\(s\).*400 violation\(s\), 0 blocking: PASS\n$/);
        assert.strictEqual(
            Buffer.byteLength(fs.readFileSync(path.join(tmp, "piped.txt"), "utf8")),
            Buffer.byteLength(whole),
        );
        assert.strictEqual(fs.readFileSync(path.join(tmp, "piped.txt"), "utf8"), whole);
        // `| head -1`: the reader closes the pipe after one line; the command ends with nothing on stderr.
        const head = run("| head -1");
        assert.strictEqual(head.status, 0, head.stderr);
        assert.strictEqual(head.stderr, "");
        assert.deepStrictEqual(head.stdout.split("\n"), [whole.split("\n")[0], "exit 0", ""]);
    });

    it("orders findings the same whatever the user's locale (LANG=lt_LT sorts y before j)", () => {
        const stack = (name: string) =>
            `apiVersion: pulumi.com/v1\nkind: Stack\nmetadata:\n  name: ${name}\n  namespace: team\n  labels:\n    env: production\nspec:\n  stack: acme/${name}/production\n  projectRepo: https://github.com/acme/app\n  branch: main\n`;
        write("m/stacks.yaml", ["app-y", "app-j", "app-i"].map(stack).join("---\n"));
        const orders = ["C.UTF-8", "lt_LT.UTF-8"].map((lang) => {
            const report = path.join(tmp, `${lang}.json`);
            const r = spawnSync(process.execPath, [CLI, "check", "m", "--report", `json=${report}`], {
                encoding: "utf8",
                cwd: tmp,
                timeout: 60000,
                env: { ...process.env, LANG: lang, LC_ALL: lang },
            });
            assert.strictEqual(r.status, 1, r.stderr);
            const findings: { policy: string; resource: string }[] = JSON.parse(fs.readFileSync(report, "utf8"))
                .projects[0].findings;
            return { table: r.stdout, resources: findings.map((f) => `${f.policy} ${f.resource}`) };
        });
        // Under lt_LT the collation puts y between i and j: the same run must still list i, j, y.
        assert.ok(orders[0].resources.length >= 3, JSON.stringify(orders[0].resources));
        const policy = orders[0].resources[0].split(" ")[0];
        assert.deepStrictEqual(
            orders[0].resources.filter((r) => r.startsWith(`${policy} `)),
            ["i", "j", "y"].map((c) => `${policy} Stack/team/app-${c}`),
        );
        assert.deepStrictEqual(orders[1], orders[0]);
    });

    it("counts objects of kinds no rule reads without reporting them", () => {
        write(
            "m/deploy.yaml",
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n---\napiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [deploy.yaml]\n",
        );
        const r = check(["m"], tmp);
        assert.strictEqual(r.code, 0, r.stderr);
        assert.match(r.stdout, /2 object\(s\) in 1 file\(s\) \(2 of kinds no rule reads\); 0 violation\(s\)/);
    });

    it("never shows a Secret's data or stringData, in any output", () => {
        const b64 = Buffer.from(CANARY).toString("base64");
        write(
            "m/secret.yaml",
            `apiVersion: v1\nkind: Secret\nmetadata:\n  name: pulumi-access-token\n  namespace: pulumi\ndata:\n  token: ${b64}\nstringData:\n  other: ${CANARY}\n`,
        );
        write(
            "m/stack.yaml",
            `apiVersion: pulumi.com/v1\nkind: Stack\nmetadata:\n  name: app\n  namespace: pulumi\nspec:\n  stack: acme/app/prod\n  projectRepo: https://user:${CANARY}@github.com/acme/app\n  branch: main\n  envRefs:\n    PULUMI_ACCESS_TOKEN:\n      type: Literal\n      literal:\n        value: ${CANARY}\n`,
        );
        const r = check(["m", "--report", "json=r.json", "--report", "junit=r.xml", "--report", "sarif=r.sarif"], tmp);
        assert.strictEqual(r.code, 1, r.stderr);
        for (const text of [
            r.stdout,
            r.stderr,
            ...["r.json", "r.xml", "r.sarif"].map((f) => fs.readFileSync(path.join(tmp, f), "utf8")),
        ]) {
            assert.ok(!text.includes(CANARY) && !text.includes(b64), text);
        }
    });

    describe("nothing silent, nothing lost (issue 37)", () => {
        const STACK = (name: string) =>
            `apiVersion: pulumi.com/v1\nkind: Stack\nmetadata:\n  name: ${name}\n  namespace: pulumi\nspec:\n  stack: org/${name}/production\n  projectRepo: https://github.com/org/app\n  branch: main\n`;

        it("--format json through a pipe: standard output is the report alone, never a file named -", () => {
            write("m/a.yaml", STACK("a"));
            for (const args of [
                ["--format", "json"],
                ["--report", "json=-"],
            ]) {
                const r = check(["m", ...args], tmp);
                assert.strictEqual(r.code, 1, r.stderr);
                const json = JSON.parse(r.stdout);
                assert.deepStrictEqual(jsonReportErrors(json), []);
                assert.strictEqual(json.schemaVersion, 2);
                assert.ok(!("fixtures" in json) && !("stack" in json.projects[0]), "no harness leftovers");
                assert.match(r.stderr, /blocking: FAIL\n$/);
                assert.ok(!fs.existsSync(path.join(tmp, "-")));
            }
        });

        it("every unreadable file is said, on the parallel path as on one thread", () => {
            for (let i = 0; i < 4; i++) write(`m/ok-${i}.yaml`, STACK(`s${i}`));
            write("m/b1.yaml", Buffer.from([0x61, 0x00]));
            write("m/b2.yaml", Buffer.from([0x62, 0x00]));
            for (const workers of ["1", "2"]) {
                const r = spawnSync(process.execPath, [CLI, "check", "m"], {
                    cwd: tmp,
                    encoding: "utf8",
                    env: { ...process.env, PKO_GUARD_WORKERS: workers },
                });
                assert.deepStrictEqual(
                    [r.status, r.stdout, r.stderr],
                    [
                        2,
                        "",
                        "pko-guard: m/b1.yaml: binary file, not a manifest\n" +
                            "pko-guard: m/b2.yaml: binary file, not a manifest\n" +
                            "pko-guard: 2 files cannot be read as manifests\n",
                    ],
                    `PKO_GUARD_WORKERS=${workers}`,
                );
            }
        });

        it("a manifests folder inside another repository fails closed naming the root in use and --repo-root", () => {
            const outer = fs.realpathSync(tmp);
            spawnSync("git", ["init", "-q", outer]);
            write(
                "manifests-repo/apps/web/stack.yaml",
                STACK("web").replace("branch: main", `commit: ${"a".repeat(40)}`),
            );
            write(
                "manifests-repo/applications/web.yaml",
                "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: web\n  namespace: argocd\nspec:\n  project: default\n  source:\n    repoURL: https://github.com/org/manifests\n    path: apps/web\n  destination:\n    server: https://kubernetes.default.svc\n    namespace: pulumi\n",
            );
            const repo = path.join(outer, "manifests-repo");
            const nested = check([".", "--repository", "https://github.com/org/manifests"], repo);
            assert.strictEqual(nested.code, 1, nested.stderr);
            // The reason is said once, in the argocd-app-rendered finding, never repeated on stderr.
            const reason = `spec.source.path "apps/web" is not a folder of this repository (another repository's path is not read; the repository root in use is ${outer}; --repo-root sets another)`;
            assert.match(nested.stdout, /argocd-app-rendered/);
            assert.ok(nested.stdout.replace(/\s+/g, " ").includes(reason), nested.stdout);
            assert.ok(!nested.stderr.includes("is not a folder of this repository"), nested.stderr);
            const rooted = check([".", "--repo-root", ".", "--repository", "https://github.com/org/manifests"], repo);
            assert.ok(!rooted.stderr.includes("not a folder of this repository"), rooted.stderr);
            assert.doesNotMatch(rooted.stdout, /argocd-app-rendered/);
        });
    });
});
