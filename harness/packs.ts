/**
 * The policy packs a harness run uses: pko-guard's own (unless left out) and any other Node CrossGuard pack
 * folder (`--policy-pack DIR`, with its `--policy-pack-config FILE` in the same order, as `pulumi preview` pairs
 * them). The mock leg starts each pack as the Node language host does (`node <run-policy-pack> <engine> <folder>`,
 * @pulumi/pulumi's cmd/run-policy-pack: TypeScript packs through ts-node as in a real preview) and drives it over
 * gRPC; the real leg hands every folder to `pulumi preview --policy-pack`.
 */
import * as fs from "fs";
import * as path from "path";
import * as YAML from "yaml";
import { PackConfig, loadPackConfig, reconcilePackConfig } from "../evaluation/pack-config";
import { BadInputError } from "../support/errors";
import { PACK_DIR, PACK_ENTRY } from "../support/paths";
import { Analyzer } from "./analyzer";
import { Fixture, fixtureConfig } from "./expect";

export interface PackSpec {
    /** The pack folder (PulumiPolicy.yaml). */
    dir: string;
    /** The user's `--policy-pack-config` for an other pack (pko-guard's comes from --config or the fixture). */
    config?: string;
    /** pko-guard's own pack. */
    builtin: boolean;
}

export const DEFAULT_PACK: PackSpec = { dir: PACK_DIR, builtin: true };

/** The packs of a run: pko-guard's first (unless left out), then the others; bad folders are bad input. */
export function runPacks(o: { defaultPack: boolean; packs: string[]; packConfigs: string[] }): PackSpec[] {
    if (o.packConfigs.length > o.packs.length)
        throw new BadInputError("more --policy-pack-config than --policy-pack options (they pair in order)");
    const others = o.packs.map((dir, i): PackSpec => {
        const abs = path.resolve(dir);
        if (!fs.existsSync(path.join(abs, "PulumiPolicy.yaml")))
            throw new BadInputError(`${dir}: not a policy pack folder (no PulumiPolicy.yaml)`);
        const config = o.packConfigs[i] ? path.resolve(o.packConfigs[i]) : undefined;
        if (config && !fs.existsSync(config)) throw new BadInputError(`${o.packConfigs[i]}: no such policy config`);
        return { dir: abs, config, builtin: false };
    });
    const packs = [...(o.defaultPack ? [DEFAULT_PACK] : []), ...others];
    if (packs.length === 0) throw new BadInputError("no policy pack: --no-default-pack needs a --policy-pack");
    return packs;
}

/** The node arguments a pack's PulumiPolicy.yaml asks the language host for (`runtime.options.nodeargs`). */
function nodeArgs(dir: string): string[] {
    try {
        const doc = YAML.parse(fs.readFileSync(path.join(dir, "PulumiPolicy.yaml"), "utf8")) as {
            runtime?: { options?: { nodeargs?: unknown } };
        };
        const args = doc?.runtime?.options?.nodeargs;
        return typeof args === "string" ? args.split(/\s+/).filter(Boolean) : [];
    } catch {
        return [];
    }
}

/** The SDK's policy pack runner the pack itself would get: its own @pulumi/pulumi's, else this package's. */
function runPolicyPack(dir: string): string {
    try {
        return require.resolve("@pulumi/pulumi/cmd/run-policy-pack", { paths: [dir] });
    } catch {
        return require.resolve("@pulumi/pulumi/cmd/run-policy-pack");
    }
}

/** Starts a pack's analyzer: pko-guard's from its built entry, another as the language host would. */
export async function startPack(pack: PackSpec): Promise<Analyzer> {
    if (pack.builtin) {
        if (!fs.existsSync(PACK_ENTRY)) {
            throw new BadInputError(`compiled policy pack not found at ${PACK_ENTRY}; run npm run build`);
        }
        return Analyzer.start([PACK_ENTRY], PACK_DIR);
    }
    // No engine listens there: a pack that logs through the engine loses the line, as nothing reads it.
    return Analyzer.start([...nodeArgs(pack.dir), runPolicyPack(pack.dir), "127.0.0.1:1", pack.dir], pack.dir, 60000);
}

/** The config a pack is configured with for a fixture, reconciled with that pack's own policies. */
export function packConfigFor(pack: PackSpec, analyzer: Analyzer, fixture: Fixture): PackConfig {
    if (pack.builtin) return fixtureConfig(fixture);
    return reconcilePackConfig(
        analyzer.policies,
        pack.config ? loadPackConfig(pack.config) : {},
        pack.config ?? `default config of ${path.basename(pack.dir)}`,
    );
}
