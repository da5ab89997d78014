/**
 * The deploy leg (end to end): preview with the pack, then - for a fixture without mandatory
 * violations - `pulumi up` with the Kubernetes provider rendering YAML to a folder (no cluster), validate
 * every rendered manifest (PKO Stack CRD schema; Kubernetes OpenAPI for Secrets, service accounts and
 * RBAC), `pulumi destroy`, and check that the stack is empty. The state is also checked for the
 * fixture's secret config values in plaintext.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { track, untrack } from "../cleanup";
import { Fixture } from "../expect";
import { ManifestValidator, schemaVersions } from "../manifests";
import { LegResult } from "../model";
import { PACK_DIR } from "../paths";
import { Toolchain } from "../toolchain";
import { Check } from "../verdict";
import { exec, prepareFixtureStack, previewWithPack } from "./real";

export interface DeployOptions {
    toolchain: Toolchain;
    validator: ManifestValidator;
    timeoutMs: number;
    descriptions: Map<string, string>;
}

function oneLine(s: string): string {
    return s.replace(/<\{%[^%]*%\}>/g, "").split("\n").map((l) => l.trim()).filter(Boolean).find((l) => /error/i.test(l)) ?? s.trim().split("\n")[0] ?? "";
}

export async function runDeployLeg(fixture: Fixture, options: DeployOptions): Promise<LegResult> {
    const started = Date.now();
    const done = (rest: Partial<LegResult>): LegResult => ({ leg: "deploy", rows: [], durationMs: Date.now() - started, ...rest });
    if (fixture.expect.mockOnly) return done({ skipped: `mock-only: ${fixture.expect.mockOnly}` });
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-deploy-"));
    track(tmp);
    try {
        const prepared = await prepareFixtureStack(fixture, options.toolchain, tmp, options.timeoutMs);
        if ("error" in prepared) return done({ error: prepared.error });
        const { program, env, stack } = prepared;
        const preview = await previewWithPack({ cwd: program, env, stack, pulumi: options.toolchain.pulumi, packDir: PACK_DIR, policyConfig: fixture.policyConfig, timeoutMs: options.timeoutMs, descriptions: options.descriptions });
        if (preview.error) return done({ error: preview.error });
        if (preview.rows.some((r) => r.level === "mandatory")) {
            return done({ skipped: "not deployed: the preview has mandatory violations (the gate stops here)" });
        }
        const pulumi = (args: string[]) => exec(options.toolchain.pulumi, [...args, "-s", stack, "--non-interactive"], { cwd: program, env, timeoutMs: options.timeoutMs });
        const policyArgs = ["--policy-pack", PACK_DIR, ...(fixture.policyConfig ? ["--policy-pack-config", fixture.policyConfig] : [])];
        let r = await pulumi(["up", "--yes", "--skip-preview", ...policyArgs]);
        if (r.code !== 0) return done({ error: `pulumi up failed: ${oneLine(r.stdout + "\n" + r.stderr)}`.slice(0, 400) });

        const checks: Check[] = [];
        const base = { fixture: fixture.name, leg: "deploy" as const };
        const manifests = options.validator.validateDirectory(path.join(tmp, "rendered"));
        if (manifests.length === 0) {
            checks.push({ ...base, policy: "(manifests)", resource: "", expected: 1, got: 0, outcome: "mismatch", note: "pulumi up rendered no manifests" });
        }
        const unvalidated = [...new Set(manifests.filter((m) => m.status === "unvalidated").map((m) => m.kind))];
        if (unvalidated.length > 0) {
            checks.push({ ...base, policy: "schema (none)", resource: unvalidated.join(", "), expected: 0, got: 0, outcome: "skipped", note: "no schema for these kinds: not validated" });
        }
        const pinned = schemaVersions().pko;
        for (const m of manifests) {
            if (m.status === "unvalidated") continue;
            checks.push({
                ...base,
                policy: `schema ${m.kind}`,
                resource: m.name,
                expected: 0,
                got: m.errors.length,
                outcome: m.status === "valid" ? "match" : "mismatch",
                note:
                    m.status !== "valid"
                        ? `${m.file}: ${m.errors.slice(0, 3).join("; ")}`
                        : m.unverified.length > 0
                          ? `not in the pinned PKO ${pinned} schema, so not checked: ${m.unverified.join(", ")}`
                          : undefined,
            });
        }
        // Secret config values must be encrypted in the state and in the stack's config file: look for
        // each value as written and as JSON escapes it.
        const secrets = Object.values(fixture.expect.config)
            .filter((c) => c.secret && c.value.length > 0)
            .flatMap((c) => [c.value, JSON.stringify(c.value).slice(1, -1)]);
        const files = [
            ...fs.readdirSync(path.join(tmp, "state"), { recursive: true, withFileTypes: true }).filter((d) => d.isFile()).map((d) => path.join(d.parentPath ?? (d as unknown as { path: string }).path, d.name)),
            ...fs.readdirSync(program).filter((f) => /^Pulumi\..+\.ya?ml$/.test(f)).map((f) => path.join(program, f)),
        ];
        for (const file of files) {
            const text = fs.readFileSync(file, "latin1");
            if (secrets.some((s) => text.includes(s))) {
                checks.push({ ...base, policy: "(state)", resource: path.basename(file), expected: 0, got: 1, outcome: "mismatch", note: "a secret config value is stored in plaintext" });
            }
        }

        r = await pulumi(["destroy", "--yes", "--skip-preview"]);
        if (r.code !== 0) return done({ error: `pulumi destroy failed: ${oneLine(r.stdout + "\n" + r.stderr)}`.slice(0, 400) });
        r = await pulumi(["stack", "export"]);
        let left = -1;
        try {
            left = (JSON.parse(r.stdout).deployment?.resources ?? []).length;
        } catch {
            left = -1;
        }
        checks.push({
            ...base,
            policy: "(destroy)",
            resource: "",
            expected: 0,
            got: Math.max(left, 0),
            outcome: left === 0 ? "match" : "mismatch",
            note: left === 0 ? undefined : left < 0 ? "cannot read the stack after destroy" : `${left} resource(s) left after destroy`,
        });
        const counts = {
            valid: manifests.filter((m) => m.status === "valid").length,
            unvalidated: manifests.filter((m) => m.status === "unvalidated").length,
            unverifiedFields: manifests.reduce((n, m) => n + m.unverified.length, 0),
        };
        return done({ checks, details: { manifests: manifests.length, ...counts } });
    } finally {
        fs.rmSync(tmp, { recursive: true, force: true });
        untrack(tmp);
    }
}
