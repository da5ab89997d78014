/**
 * The deploy leg (end to end): preview with the pack; a fixture with mandatory violations stops there
 * (skipped: the gate stops it). Otherwise `pulumi up` renders the manifests to a folder (no cluster),
 * and the leg checks: every rendered manifest against its schema, no secret config value in plaintext in
 * the state or the stack's config file, and an empty stack after `pulumi destroy`.
 */
import * as fs from "fs";
import * as path from "path";
import * as YAML from "yaml";
import { Row } from "../../core/rows";
import { StackRef, analyzeState, previewWithPack } from "../../core/pulumi";
import { destroy, stateResourceCount, up } from "../stacks";
import { withTempDir } from "../../core/process";
import { Toolchain } from "../../core/toolchain";
import { Fixture } from "../expect";
import { ManifestValidator, schemaVersions } from "../manifests";
import { LegCheck, LegResult, legResult } from "./result";
import { fixturePack, prepareFixtureStack } from "./real";

export interface DeployOptions {
    toolchain: Toolchain;
    validator: ManifestValidator;
    timeoutMs: number;
    descriptions: Map<string, string>;
}

/** Every rendered manifest against its schema; kinds without one are listed as not validated. */
export function manifestChecks(validator: ManifestValidator, renderedDir: string): LegCheck[] {
    const manifests = validator.validateDirectory(renderedDir);
    const checks: LegCheck[] = [];
    if (manifests.length === 0) {
        checks.push({ check: "manifests", target: "", outcome: "fail", expected: 1, got: 0, note: "pulumi up rendered no manifests" });
    }
    const unvalidated = [...new Set(manifests.filter((m) => m.status === "unvalidated").map((m) => m.kind))];
    if (unvalidated.length > 0) {
        checks.push({ check: "schema", target: unvalidated.join(", "), outcome: "skipped", expected: 0, got: 0, note: "no schema for these kinds: not validated" });
    }
    for (const m of manifests) {
        if (m.status === "unvalidated") continue;
        checks.push({
            check: `schema ${m.kind}`,
            target: m.name,
            outcome: m.status === "valid" ? "pass" : "fail",
            expected: 0,
            got: m.errors.length,
            note: m.status !== "valid" ? `${m.file}: ${m.errors.slice(0, 3).join("; ")}` : /^(auto\.)?pulumi\.com\//.test(m.kind) ? `against the PKO ${schemaVersions().pko} CRD schema` : undefined,
        });
    }
    return checks;
}

/**
 * Secret config values must be encrypted in the state and in the stack's config file: each value is
 * looked for as written and as JSON escapes it.
 */
export function plaintextSecretChecks(fixture: Fixture, stateDir: string, programDir: string): LegCheck[] {
    const secrets = Object.values(fixture.expect.config)
        .filter((c) => c.secret && c.value.length > 0)
        .flatMap((c) => [c.value, JSON.stringify(c.value).slice(1, -1)]);
    const files = [
        ...fs
            .readdirSync(stateDir, { recursive: true, withFileTypes: true })
            .filter((d) => d.isFile())
            .map((d) => path.join(d.parentPath, d.name)),
        ...fs
            .readdirSync(programDir)
            .filter((f) => /^Pulumi\..+\.ya?ml$/.test(f))
            .map((f) => path.join(programDir, f)),
    ];
    return files
        .filter((file) => {
            const text = fs.readFileSync(file, "latin1");
            return secrets.some((s) => text.includes(s));
        })
        .map((file) => ({ check: "plaintext secrets", target: path.basename(file), outcome: "fail" as const, expected: 0, got: 1, note: "a secret config value is stored in plaintext" }));
}

/**
 * Each expected remediation's `set` fields on the object `pulumi up` rendered for its resource (found by
 * `metadata.name`): the deploy leg proves the remediated object, not the program's, is what gets applied.
 */
export function remediatedObjectChecks(fixture: Fixture, renderedDir: string): LegCheck[] {
    const wanted = (fixture.expect.remediations ?? []).filter((r) => r.set);
    if (wanted.length === 0) return [];
    const objects: Record<string, unknown>[] = [];
    const files = fs.existsSync(renderedDir) ? fs.readdirSync(renderedDir, { recursive: true, withFileTypes: true }).filter((d) => d.isFile() && /\.ya?ml$/.test(d.name)) : [];
    for (const d of files) {
        for (const doc of YAML.parseAllDocuments(fs.readFileSync(path.join(d.parentPath, d.name), "utf8"))) {
            const o = doc.toJS() as unknown;
            if (o !== null && typeof o === "object") objects.push(o as Record<string, unknown>);
        }
    }
    const at = (o: unknown, dotted: string) => dotted.split(".").reduce<unknown>((v, k) => (v !== null && typeof v === "object" ? (v as Record<string, unknown>)[k] : undefined), o);
    return wanted.flatMap((r) => {
        const o = objects.find((x) => at(x, "metadata.name") === r.resource);
        return Object.entries(r.set!).map(([field, value]): LegCheck => {
            const ok = o !== undefined && JSON.stringify(at(o, field)) === JSON.stringify(value);
            return {
                check: `remediated ${field}`,
                target: r.resource,
                outcome: ok ? "pass" : "fail",
                expected: 1,
                got: ok ? 1 : 0,
                ...(ok ? {} : { note: o ? `rendered ${JSON.stringify(at(o, field))}, expected ${JSON.stringify(value)}` : "no rendered object of that name" }),
            };
        });
    });
}

/**
 * `pulumi policy analyze` after `up` (the audit of a deployed stack) finds the same findings as the preview
 * (policy, resource, level, message), and exits non-zero exactly when one is mandatory.
 */
export function auditCheck(previewRows: Row[], auditRows: Row[], exitCode: number | null): LegCheck {
    const key = (r: Row) => [r.policy, r.resource, r.level, r.message].join("\u0000");
    const a = previewRows.map(key).sort();
    const b = auditRows.map(key).sort();
    const same = a.length === b.length && a.every((k, i) => k === b[i]);
    const exitOk = auditRows.some((r) => r.level === "mandatory") === (exitCode !== 0);
    const onlyPreview = a.filter((k) => !b.includes(k)).map((k) => k.split("\u0000").slice(0, 2).join(" on "));
    const onlyAudit = b.filter((k) => !a.includes(k)).map((k) => k.split("\u0000").slice(0, 2).join(" on "));
    return {
        check: "audit (pulumi policy analyze)",
        target: "",
        outcome: same && exitOk ? "pass" : "fail",
        expected: previewRows.length,
        got: auditRows.length,
        ...(same && exitOk ? {} : { note: !exitOk ? `exit ${exitCode} does not match the findings' levels` : `preview only: ${onlyPreview.join(", ") || "-"}; audit only: ${onlyAudit.join(", ") || "-"}` }),
    };
}

/** `pulumi destroy`, then the stack must hold nothing. */
async function destroyCheck(stack: StackRef): Promise<LegCheck | { error: string }> {
    const destroyed = await destroy(stack);
    if (destroyed.error) return { error: destroyed.error };
    const left = await stateResourceCount(stack);
    return {
        check: "destroy",
        target: "",
        outcome: left === 0 ? "pass" : "fail",
        expected: 0,
        got: left ?? 0,
        note: left === 0 ? undefined : left === undefined ? "cannot read the stack after destroy" : `${left} resource(s) left after destroy`,
    };
}

export async function runDeployLeg(fixture: Fixture, options: DeployOptions): Promise<LegResult> {
    const result = legResult("deploy", Date.now());
    if (fixture.expect.mockOnly) return result.skipped(`mock-only: ${fixture.expect.mockOnly}`);
    return withTempDir("deploy", async (tmp) => {
        const stack = await prepareFixtureStack(fixture, options.toolchain, tmp, options.timeoutMs);
        if ("error" in stack) return result.error(stack.error);
        const pack = fixturePack(fixture, options.descriptions);
        const preview = await previewWithPack(stack, pack);
        if (preview.error) return result.error(preview.error);
        if (preview.rows.some((r) => r.level === "mandatory")) {
            return result.skipped("not deployed: the preview has mandatory violations (the gate stops here)");
        }
        const deployed = await up(stack, pack);
        if (deployed.error) return result.error(deployed.error);
        // The audit path: the pack against the deployed stack's state must find what the preview found.
        const audit = await analyzeState(stack, pack);
        if (audit.error) return result.error(audit.error);
        const checks = [
            auditCheck(preview.rows, audit.rows, audit.exitCode),
            ...manifestChecks(options.validator, path.join(tmp, "rendered")),
            ...remediatedObjectChecks(fixture, path.join(tmp, "rendered")),
            ...plaintextSecretChecks(fixture, path.join(tmp, "state"), stack.cwd),
        ];
        const destroyed = await destroyCheck(stack);
        if ("error" in destroyed) return result.error(destroyed.error);
        return result.ran(preview.rows, [...checks, destroyed]);
    });
}
