/**
 * The deploy leg (end to end): preview with the pack; a fixture with mandatory violations stops there
 * (skipped: the gate stops it). Otherwise `pulumi up` renders the manifests to a folder (no cluster),
 * and the leg checks: every rendered manifest against its schema, no secret config value in plaintext in
 * the state or the stack's config file, and an empty stack after `pulumi destroy`.
 */
import * as fs from "fs";
import * as path from "path";
import { StackRef, previewWithPack } from "../../core/pulumi";
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
        ...fs.readdirSync(stateDir, { recursive: true, withFileTypes: true }).filter((d) => d.isFile()).map((d) => path.join(d.parentPath, d.name)),
        ...fs.readdirSync(programDir).filter((f) => /^Pulumi\..+\.ya?ml$/.test(f)).map((f) => path.join(programDir, f)),
    ];
    return files
        .filter((file) => {
            const text = fs.readFileSync(file, "latin1");
            return secrets.some((s) => text.includes(s));
        })
        .map((file) => ({ check: "plaintext secrets", target: path.basename(file), outcome: "fail" as const, expected: 0, got: 1, note: "a secret config value is stored in plaintext" }));
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
        const checks = [...manifestChecks(options.validator, path.join(tmp, "rendered")), ...plaintextSecretChecks(fixture, path.join(tmp, "state"), stack.cwd)];
        const destroyed = await destroyCheck(stack);
        if ("error" in destroyed) return result.error(destroyed.error);
        return result.ran(preview.rows, [...checks, destroyed]);
    });
}
