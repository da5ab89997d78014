/**
 * check's repository configuration (gitops/manifests/check-settings.ts, gitops/manifests/exclude.ts): `.pko-guard.yaml` at the
 * repository root, one line per invalid field (never quoting a value), options over the file over defaults,
 * `--print-config` naming where each value comes from, exclusion globs, and the file never read as a manifest.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { CheckFlags, checkSettings, printedConfig, readCheckConfig } from "../../../../gitops/manifests/check-settings";
import { globRegExp, walkFilter } from "../../../../gitops/manifests/exclude";
import { loadManifests } from "../../../../gitops/manifests/load";
import { BadInputError, errorLines } from "../../../../support/errors";

const NO_FLAGS: CheckFlags = { exclude: [], repository: [], apiVersions: [] };

describe("check's repository configuration", () => {
    let root: string;
    const write = (rel: string, text: string) => {
        const f = path.join(root, rel);
        fs.mkdirSync(path.dirname(f), { recursive: true });
        fs.writeFileSync(f, text);
        return f;
    };
    const problems = (text: string): string[] => {
        const f = write(".pko-guard.yaml", text);
        try {
            readCheckConfig(f, ".pko-guard.yaml");
        } catch (e) {
            assert.ok(e instanceof BadInputError);
            return errorLines(e);
        }
        return [];
    };
    beforeEach(() => {
        root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-check-config-")));
    });
    afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

    it("reads every field; an empty file is no setting", () => {
        const f = write(
            ".pko-guard.yaml",
            "config: policy.json\nexclude: [examples/**, '*.sample.yaml']\nrepositories: [git@github.com:acme/m.git]\nkube-version: '1.31'\napi-versions: [monitoring.coreos.com/v1]\nskip-unreadable: true\nfail-on-advisory: false\ntimeout: 60\nkustomize-enable-helm: true\n",
        );
        assert.deepStrictEqual(readCheckConfig(f, ".pko-guard.yaml"), {
            config: "policy.json",
            exclude: ["examples/**", "*.sample.yaml"],
            repositories: ["git@github.com:acme/m.git"],
            "kube-version": "1.31",
            "api-versions": ["monitoring.coreos.com/v1"],
            "skip-unreadable": true,
            "fail-on-advisory": false,
            timeout: 60,
            "kustomize-enable-helm": true,
        });
        assert.deepStrictEqual(readCheckConfig(write("e.yaml", "# nothing\n"), "e.yaml"), {});
    });

    it("one line per invalid field, none quoting a value", () => {
        assert.deepStrictEqual(
            problems(
                "exclud: [x]\nexclude: s3cret\nrepositories: [https://github.com/a/b, 's3cret token']\nkube-version: 1.30\napi-versions: ['s3cret!']\nskip-unreadable: 'yes'\ntimeout: 0\nconfig: ''\n",
            ),
            [
                '.pko-guard.yaml: "exclud": unknown field (did you mean exclude?)',
                '.pko-guard.yaml: "exclude": must be a list of strings',
                '.pko-guard.yaml: "repositories": item 2 is not a git repository URL (https://, ssh://, git@host:path)',
                '.pko-guard.yaml: "kube-version": must be a string (quote it: 1.30 unquoted is the number 1.3)',
                '.pko-guard.yaml: "api-versions": not an API version (expected group/version or group/version/Kind, e.g. example.com/v1/Widget)',
                '.pko-guard.yaml: "skip-unreadable": must be true or false',
                '.pko-guard.yaml: "timeout": must be a number of seconds from 1 to 86400',
                '.pko-guard.yaml: "config": must be the path of a policy pack config file',
                ".pko-guard.yaml: 8 invalid fields",
            ],
        );
        assert.deepStrictEqual(problems("- a\n- b\n"), [
            ".pko-guard.yaml: must be a mapping of settings (config, exclude, repositories, kube-version, api-versions, skip-unreadable, fail-on-advisory, timeout, allow-hosts, kustomize-enable-helm)",
        ]);
        assert.deepStrictEqual(problems("kustomize-enable-helm: --enable-helm\n"), [
            '.pko-guard.yaml: "kustomize-enable-helm": must be true or false',
        ]);
        assert.deepStrictEqual(problems("exclude: [a\n"), [".pko-guard.yaml:2:1: invalid YAML"]);
        assert.deepStrictEqual(problems("timeout: 1\ntimeout: 2\n"), [".pko-guard.yaml:2:1: invalid YAML"]);
        for (const line of problems("exclude: s3cret\nbogus: s3cret\n")) assert.ok(!line.includes("s3cret"), line);
    });

    it("options override the file, the file the defaults; --print-config says where each value came from", () => {
        write(
            ".pko-guard.yaml",
            "exclude: [examples/**]\nrepositories: ['https://tok:s3cret@github.com/acme/m']\nkube-version: '1.31'\nskip-unreadable: true\ntimeout: 60\n",
        );
        const file = checkSettings(["."], NO_FLAGS, root);
        assert.deepStrictEqual(
            [file.exclude, file.kubeVersion, file.skipUnreadable, file.timeout, file.failOnAdvisory],
            [
                [{ value: "examples/**", from: ".pko-guard.yaml" }],
                { value: "1.31", from: ".pko-guard.yaml" },
                { value: true, from: ".pko-guard.yaml" },
                { value: 60, from: ".pko-guard.yaml" },
                { value: false, from: "default" },
            ],
        );
        const flags = checkSettings(
            ["."],
            { ...NO_FLAGS, exclude: ["tmp/**"], kubeVersion: "1.29", timeout: 5, failOnAdvisory: true },
            root,
        );
        assert.deepStrictEqual(
            [flags.exclude, flags.kubeVersion, flags.timeout, flags.failOnAdvisory],
            [
                [{ value: "tmp/**", from: "--exclude" }],
                { value: "1.29", from: "--kube-version" },
                { value: 5, from: "--timeout" },
                { value: true, from: "--fail-on-advisory" },
            ],
        );
        const printed = printedConfig(flags);
        assert.match(printed, /^exclude {13}tmp\/\*\* \(--exclude\)$/m);
        assert.match(printed, /^repository {10}https:\/\/github\.com\/acme\/m \(\.pko-guard\.yaml\)$/m);
        assert.match(printed, /^timeout {13}5 s \(--timeout\)$/m);
        assert.ok(!printed.includes("s3cret"), printed);
        fs.rmSync(path.join(root, ".pko-guard.yaml"));
        const none = printedConfig(checkSettings(["."], NO_FLAGS, root));
        assert.match(none, /^configuration file {2}none \(\.pko-guard\.yaml at the repository root\)$/m);
        assert.match(none, /^repository {10}unknown: this repository's URL is not known/m);
        assert.match(none, /^timeout {13}300 s \(default\)$/m);
        assert.match(none, /^kustomize-enable-helm as the repository's argocd-cm says \(default\)$/m);
        write(".pko-guard.yaml", "kustomize-enable-helm: true\n");
        assert.deepStrictEqual(checkSettings(["."], NO_FLAGS, root).kustomizeEnableHelm, {
            value: true,
            from: ".pko-guard.yaml",
        });
        const told = checkSettings(["."], { ...NO_FLAGS, kustomizeEnableHelm: true }, root);
        assert.match(printedConfig(told), /^kustomize-enable-helm true \(--kustomize-enable-helm\)$/m);
    });

    it("globs: * within a name, ** across folders, a name alone at any depth", () => {
        const m = (glob: string, p: string) => globRegExp(glob)!.test(p);
        assert.ok(m("examples/**", "examples/a/b.yaml"));
        assert.ok(m("examples", "examples") && m("examples", "deep/examples"));
        assert.ok(!m("examples/*", "examples/a/b.yaml") && m("examples/*", "examples/a"));
        assert.ok(m("**/crds/**", "charts/x/crds/c.yaml") && m("**/crds/**", "crds/c.yaml"));
        assert.ok(m("*.sample.yaml", "a/b/c.sample.yaml") && !m("*.sample.yaml", "a/b/c.yaml"));
        assert.ok(m("clusters/?/x.yaml", "clusters/a/x.yaml") && !m("clusters/?/x.yaml", "clusters/ab/x.yaml"));
        assert.ok(m("./a.yaml", "a.yaml") && m("a.(yaml)", "a.(yaml)") && !m("a.(yaml)", "a.yaml"));
        assert.strictEqual(globRegExp("  "), undefined);
        const skip = walkFilter(root, ["examples/**"]);
        assert.ok(skip(path.join(root, ".pko-guard.yaml")) && skip(path.join(root, "examples", "a.yaml")));
        assert.ok(!skip(path.join(root, "apps", "a.yaml")) && !skip(path.join(root, "examples")));
    });

    it("walking leaves out what is excluded and the configuration file (risky: a copy judged; corrected: excluded)", () => {
        const sa = "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: sa, namespace: x}\n";
        write("base/sa.yaml", sa);
        write("examples/sa.yaml", sa);
        write(".pko-guard.yaml", "exclude: [examples]\n");
        const all = loadManifests(["."], { repoRoot: root, cwd: root });
        assert.deepStrictEqual(
            [all.objects.map((o) => o.file), all.skipped, all.duplicates?.length],
            [["base/sa.yaml", "examples/sa.yaml"], [], 1],
        );
        const some = loadManifests(["."], { repoRoot: root, cwd: root, exclude: ["examples"] });
        assert.deepStrictEqual([some.objects.map((o) => o.file), some.duplicates], [["base/sa.yaml"], []]);
        // A path named on the command line is read, excluded or not; the configuration file never.
        const named = loadManifests(["examples/sa.yaml", ".pko-guard.yaml"], {
            repoRoot: root,
            cwd: root,
            exclude: ["examples"],
        });
        assert.deepStrictEqual(
            named.objects.map((o) => o.file),
            ["examples/sa.yaml"],
        );
    });

    it("never takes a tool's configuration for a manifest: no object, no skipped line", () => {
        const sa = "apiVersion: v1\nkind: ServiceAccount\nmetadata: { name: a, namespace: apps }\n";
        write("apps/sa.yaml", sa);
        write(".pko-guard.yaml", "config: policy/pko-guard.json\n");
        write("policy/pko-guard.json", '{"all": "mandatory"}\n');
        write(".pre-commit-config.yaml", "repos:\n  - repo: local\n    hooks: []\n");
        write(".github/workflows/ci.yml", "on: push\njobs: {}\n");
        write(".github/dependabot.yml", "version: 2\n");
        write(".gitlab-ci.yml", "stages: [test]\n");
        write("tools/package.json", '{"name": "x"}\n');
        write("infra/Pulumi.yaml", "name: infra\nruntime: nodejs\n");
        write("infra/Pulumi.prod.yaml", "config: {}\n");
        // A pack config kept elsewhere, named by --config (or .pko-guard.yaml's config:), is the run's own.
        write("settings/guard.json", '{"all": "advisory"}\n');
        write("other/values.yaml", "replicas: 1\n");
        // The config in force comes from .pko-guard.yaml here; check hands it to the load as its own.
        const inForce = checkSettings(["."], NO_FLAGS, root).config?.value;
        assert.strictEqual(inForce, path.join(root, "policy", "pko-guard.json"));
        const load = loadManifests(["."], {
            repoRoot: root,
            cwd: root,
            toolConfigs: [inForce!, path.join(root, "settings", "guard.json")],
        });
        assert.deepStrictEqual(
            load.objects.map((o) => o.file),
            ["apps/sa.yaml"],
        );
        // A YAML file that is no tool's configuration and no object is still reported, once.
        assert.deepStrictEqual(
            load.skipped.map((x) => x.file),
            ["other/values.yaml:1"],
        );
        const filter = walkFilter(root, [], []);
        assert.deepStrictEqual(
            [".github", "tools/package.json", "apps/sa.yaml", "apps/.github"].map((r) => filter(path.join(root, r))),
            [true, true, false, false],
        );
    });

    it("skips an unreadable file of a folder an Application syncs once, named and counted once", () => {
        write(
            "apps/web.yaml",
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: { name: web, namespace: argocd }\n" +
                "spec:\n  source: { repoURL: https://example.com/r.git, path: web }\n" +
                "  destination: { server: https://kubernetes.default.svc, namespace: web }\n",
        );
        write("web/sa.yaml", "apiVersion: v1\nkind: ServiceAccount\nmetadata: { name: a }\n");
        fs.writeFileSync(path.join(root, "web", "bin.yaml"), Buffer.from([0xff, 0xfe, 0x00, 0x01, 0xc3, 0x28]));
        const load = loadManifests(["."], { repoRoot: root, cwd: root, skipUnreadable: true });
        assert.deepStrictEqual(
            load.skipped.map((x) => x.file),
            ["web/bin.yaml:1"],
        );
        assert.deepStrictEqual(load.objects.map((o) => o.identity).sort(), [
            "Application/argocd/web",
            "ServiceAccount/web/a",
        ]);
    });
});
