/**
 * The real leg: `pulumi preview --policy-pack` with the real CLI, engine, nodejs language host and
 * Kubernetes provider, offline. Each fixture gets a throw-away stack in a temporary folder of symbolic links to
 * its files (Node resolves them, so imports work; stack config never lands in the fixture). The leg checks that
 * `pulumi preview` exits non-zero exactly when there is a mandatory violation (a zero exit would pass a CI gate).
 */
import * as fs from "fs";
import * as path from "path";
import { PolicyPackRef, StackRef, previewWithPack } from "../../engine/pulumi-cli";
import { initIsolatedStack } from "../throwaway-stacks";
import { PACK_DIR } from "../../support/paths";
import { withTempDir } from "../../support/process";
import { Toolchain } from "../../support/toolchain";
import { Row } from "../../evaluation/rows";
import { Fixture } from "../expect";
import { PackSpec } from "../packs";
import { LegCheck, LegResult, legResult, remediationChecks } from "./result";
import { autonamesFromEvents, maskAutonames } from "../autonames";

export interface RealOptions {
    toolchain: Toolchain;
    timeoutMs: number;
    /** The policy pack folder (default: this repository). */
    packDir?: string;
    /** The run's packs (default: pko-guard's alone); pko-guard's takes the fixture's config. */
    packs?: PackSpec[];
    /** Policy descriptions by name, to strip the SDK's description prefix from messages. */
    descriptions: Map<string, string>;
}

/**
 * The node_modules a fixture's program runs with: the nearest one up from the fixture that holds the Pulumi SDK
 * (the user's project's), else the one this package's SDK is installed in.
 */
export function programModules(fixtureDir: string): string {
    for (let dir = fixtureDir; ; dir = path.dirname(dir)) {
        if (fs.existsSync(path.join(dir, "node_modules", "@pulumi", "pulumi", "package.json")))
            return path.join(dir, "node_modules");
        if (path.dirname(dir) === dir) break;
    }
    return path.dirname(path.dirname(path.dirname(require.resolve("@pulumi/pulumi/package.json"))));
}

/**
 * A temporary program folder for a fixture: links to each of its files and to the node_modules it runs with
 * (programModules), so `pulumi stack init`/`config set` write their files here and never into the fixture.
 */
export function linkProgram(fixtureDir: string, programDir: string): string {
    fs.mkdirSync(programDir, { recursive: true });
    for (const entry of fs.readdirSync(fixtureDir)) {
        if (/^Pulumi\.[^.]+\.yaml$/.test(entry) || entry === "node_modules") continue;
        fs.symlinkSync(path.join(fixtureDir, entry), path.join(programDir, entry));
    }
    fs.symlinkSync(programModules(fixtureDir), path.join(programDir, "node_modules"));
    return programDir;
}

/**
 * A fixture's stack, ready to preview or deploy: a linked program folder in `tmp`, a throw-away stack
 * with the fixture's config, the Kubernetes provider rendering YAML into <tmp>/rendered, or using the
 * cluster of `kubeconfig`.
 */
export async function prepareFixtureStack(
    fixture: Fixture,
    toolchain: Toolchain,
    tmp: string,
    timeoutMs: number,
    kubeconfig?: string,
): Promise<StackRef | { error: string }> {
    const program = linkProgram(fixture.dir, path.join(tmp, "program"));
    const config = Object.entries(fixture.expect.config).map(([key, v]) => ({
        key,
        value: v.value,
        secret: v.secret === true,
    }));
    return initIsolatedStack(toolchain, program, tmp, fixture.expect.stack, config, timeoutMs, kubeconfig);
}

/** The pack as a fixture's previews use it. */
export function fixturePack(fixture: Fixture, descriptions: Map<string, string>, packDir = PACK_DIR): PolicyPackRef {
    return { dir: packDir, config: fixture.policyConfig, descriptions };
}

/**
 * The run's packs as one preview uses them, in order, each with its config. With more than one pack every pack
 * gets a config file (`{}`, the defaults, written into `tmp` for those without), so that the CLI pairs each
 * `--policy-pack-config` with its own `--policy-pack`.
 */
export function fixturePacks(
    fixture: Fixture,
    descriptions: Map<string, string>,
    packs: PackSpec[],
    tmp: string,
): PolicyPackRef {
    const configs = packs.map((p) => (p.builtin ? fixture.policyConfig : p.config));
    const refs = packs.map((p, i) => {
        let config = configs[i];
        if (!config && packs.length > 1) {
            config = path.join(tmp, `policy-config-${i}.json`);
            fs.writeFileSync(config, "{}\n");
        }
        return { dir: p.dir, config };
    });
    return { ...refs[0], descriptions, more: refs.slice(1) };
}

/** `pulumi preview` must exit non-zero exactly when a mandatory violation was reported. */
export function exitCodeCheck(rows: Row[], exitCode: number | null): LegCheck {
    const mandatory = rows.some((r) => r.level === "mandatory");
    const failed = exitCode !== 0;
    return {
        check: "exit code",
        target: "pulumi preview",
        outcome: mandatory === failed ? "pass" : "fail",
        expected: mandatory ? 1 : 0,
        got: failed ? 1 : 0,
        note:
            mandatory === failed
                ? undefined
                : mandatory
                  ? "pulumi preview exited 0 despite a mandatory violation"
                  : `pulumi preview exited ${exitCode} without a mandatory violation`,
    };
}

export async function runRealLeg(fixture: Fixture, options: RealOptions): Promise<LegResult> {
    const result = legResult("real", Date.now());
    if (fixture.expect.mockOnly) return result.skipped(`mock-only: ${fixture.expect.mockOnly}`);
    if (fixture.expect.manifestOnly) return result.skipped(`manifest-only: ${fixture.expect.manifestOnly}`);
    return withTempDir("real", async (tmp) => {
        const stack = await prepareFixtureStack(fixture, options.toolchain, tmp, options.timeoutMs);
        if ("error" in stack) return result.error(stack.error);
        const pack = options.packs
            ? fixturePacks(fixture, options.descriptions, options.packs, tmp)
            : fixturePack(fixture, options.descriptions, options.packDir);
        const preview = await previewWithPack(stack, pack);
        if (preview.error) return result.error(preview.error);
        // Generated names are random: masked as the mock leg masks its own (autonames.ts).
        const rows = maskAutonames(preview.rows, autonamesFromEvents(preview.output));
        return result.ran(rows, [
            exitCodeCheck(rows, preview.exitCode),
            ...remediationChecks(fixture.expect.remediations, preview.remediations),
        ]);
    });
}
