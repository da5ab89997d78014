/**
 * Harness faults and leaks: an interrupted run cleans up and exits 130 (SIGINT) or 143 (SIGTERM); a broken toolchain is a
 * per-fixture error (never a match) and a missing one a one-line exit 2; no planted secret appears in
 * the CLI's event stream, its logs, or any file of the temporary PULUMI_HOME, backend or program folder
 * outside encrypted values.
 */
import * as assert from "assert";
import { requireToolchain } from "../../support/helpers";
import { spawn, spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { loadFixture } from "../../../harness/expect";
import { fixturePack, prepareFixtureStack } from "../../../harness/legs/real";
import { previewWithPack } from "../../../engine/pulumi-cli";
import { HARNESS_ENTRY, REPO_ROOT } from "../../../support/paths";
import { REQUIRED } from "../../../support/toolchain";
import { policies } from "../../../policies";
import { fixtureSecrets } from "../../support/secrets";
import { alive, descendants, waitFor } from "../../support/processes";

const CLI = HARNESS_ENTRY;

function filesUnder(dir: string): string[] {
    return fs
        .readdirSync(dir, { withFileTypes: true, recursive: true })
        .filter((d) => d.isFile())
        .map((d) => path.join(d.parentPath ?? (d as unknown as { path: string }).path, d.name));
}

describe("harness faults and leaks", function () {
    this.timeout(600000);

    for (const [signal, exitCode] of [
        ["SIGINT", 130],
        ["SIGTERM", 143],
    ] as const) {
        it(`an interrupted run (${signal}) kills its children and the pack's analyzer, removes its temporary folders and exits ${exitCode}`, async () => {
            // The run's own temporary root: nothing another run does on this machine can change what we count.
            const root = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-interrupt-"));
            const fixture = path.join(REPO_ROOT, "test", "data", "bad-fixtures", "hangs");
            try {
                const child = spawn(process.execPath, [CLI, "--timeout", "120", fixture], {
                    stdio: ["ignore", "pipe", "pipe"],
                    env: { ...process.env, PKO_GUARD_TMPDIR: root },
                });
                let stderr = "";
                child.stderr.on("data", (d) => (stderr += d));
                // A mock-leg worker runs a program in the program's folder (harness/legs/mock-program.ts).
                const inFixture = (pid: number) => {
                    try {
                        return fs.readlinkSync(`/proc/${pid}/cwd`) === fixture;
                    } catch {
                        return false; // gone between the listing and the read
                    }
                };
                // Started: a worker runs the fixture's program, and the analyzer runs.
                await waitFor("the run to start its fixture", () => descendants(child.pid!).some(inFixture));
                await waitFor("the analyzer and the program runner", () => descendants(child.pid!).length >= 2);
                const started = descendants(child.pid!);
                child.kill(signal);
                const code = await new Promise<number | null>((r) => child.once("exit", (c) => r(c)));
                assert.strictEqual(code, exitCode, stderr);
                assert.match(stderr, new RegExp(`interrupted \\(${signal}\\); cleaned up`));
                assert.deepStrictEqual(fs.readdirSync(root), [], "temporary folders left behind");
                await waitFor("every process of the run to end", () => started.every((p) => !alive(p)), 10000).catch(
                    () => undefined,
                );
                assert.deepStrictEqual(
                    started.filter(alive),
                    [],
                    "processes of the run survived it (the analyzer or the program runner)",
                );
            } finally {
                fs.rmSync(root, { recursive: true, force: true });
            }
        });
    }

    it("a missing toolchain is a one-line error, exit 2; a broken one is a per-fixture error, exit 1", () => {
        const fixture = path.join(REPO_ROOT, "fixtures", "creds-literal-token");
        let r = spawnSync(process.execPath, [CLI, "--leg", "real", fixture], {
            encoding: "utf8",
            env: { ...process.env, PATH: "/usr/bin:/bin", PKO_GUARD_TOOLCHAIN_BIN: "/nonexistent" },
        });
        assert.strictEqual(r.status, 2);
        assert.match(
            r.stderr.trim(),
            /^pko-guard harness: Pulumi toolchain not found .*run: bash \S*toolchain\/install\.sh gate$/,
        );
        const broken = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-broken-"));
        try {
            for (const b of REQUIRED) {
                fs.writeFileSync(
                    path.join(broken, b),
                    "#!/bin/sh\necho 'segmentation fault (simulated)' >&2\nexit 139\n",
                    { mode: 0o755 },
                );
            }
            const json = path.join(broken, "report.json");
            r = spawnSync(process.execPath, [CLI, "--leg", "both", "--json", json, fixture], {
                encoding: "utf8",
                env: { ...process.env, PKO_GUARD_TOOLCHAIN_BIN: broken },
            });
            assert.strictEqual(r.status, 1, r.stderr);
            assert.match(r.stdout, /0 match, 0 mismatch, 1 error/);
            const legs = JSON.parse(fs.readFileSync(json, "utf8")).fixtures[0].legs;
            assert.strictEqual(
                legs.find((l: { leg: string }) => l.leg === "real").error,
                "pulumi stack init failed: segmentation fault (simulated)",
            );
        } finally {
            fs.rmSync(broken, { recursive: true, force: true });
        }
    });

    it("a program that throws after registering a violating Stack is an error in both legs, never a result", function () {
        requireToolchain(this);
        const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-faults-"));
        try {
            const json = path.join(tmp, "report.json");
            const r = spawnSync(
                process.execPath,
                [
                    CLI,
                    "--leg",
                    "both",
                    "--json",
                    json,
                    path.join(REPO_ROOT, "test", "data", "bad-fixtures", "violates-then-throws"),
                ],
                { encoding: "utf8", timeout: 300000 },
            );
            assert.strictEqual(r.status, 1, r.stderr);
            const [fixture] = JSON.parse(fs.readFileSync(json, "utf8")).fixtures;
            assert.strictEqual(fixture.outcome, "error");
            for (const leg of ["mock", "real"]) {
                const l = fixture.legs.find((x: { leg: string }) => x.leg === leg);
                assert.match(l.error ?? "", /boom after registering a Stack/, `${leg} leg: ${JSON.stringify(l)}`);
            }
        } finally {
            fs.rmSync(tmp, { recursive: true, force: true });
        }
    });

    it("no planted secret leaks into the event stream, logs or plaintext files of a real preview", async function () {
        const toolchain = requireToolchain(this);
        const secrets = fixtureSecrets();
        const descriptions = new Map(policies.map((p) => [p.name, p.description]));
        for (const name of [
            "creds-secret-wrapped-literal",
            "creds-plaintext-secrets-and-config",
            "creds-workspace-env",
            "creds-git-auth",
            "creds-repo-url-credentials",
        ]) {
            const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-leak-"));
            try {
                const fixture = loadFixture(path.join(REPO_ROOT, "fixtures", name));
                const prepared = await prepareFixtureStack(fixture, toolchain, tmp, 120000);
                if ("error" in prepared) throw new Error(prepared.error);
                const result = await previewWithPack(
                    { ...prepared, timeoutMs: 300000 },
                    fixturePack(fixture, descriptions),
                );
                assert.ok(
                    result.rows.some((r) => r.policy === "pko-stack-credentials-from-secrets"),
                    `${name}: no violation`,
                );
                // Policy messages never carry a secret; the secret config value never appears in plaintext.
                for (const row of result.rows)
                    for (const s of secrets)
                        assert.ok(!row.message.includes(s), `${name}: message leaks ${s.slice(0, 6)}`);
                const config = Object.values(fixture.expect.config)
                    .filter((c) => c.secret)
                    .map((c) => c.value);
                for (const s of config)
                    assert.ok(!result.output.includes(s), `${name}: the event stream leaks a secret config value`);
                for (const file of filesUnder(tmp).filter(
                    (f) =>
                        !f.includes(`${path.sep}node_modules${path.sep}`) &&
                        !f.includes(`${path.sep}plugins${path.sep}`),
                )) {
                    const text = fs.readFileSync(file, "latin1");
                    for (const s of config)
                        assert.ok(
                            !text.includes(s),
                            `${name}: ${path.relative(tmp, file)} holds a secret in plaintext`,
                        );
                }
            } finally {
                fs.rmSync(tmp, { recursive: true, force: true });
            }
        }
    });
});
