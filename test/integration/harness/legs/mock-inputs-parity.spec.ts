/**
 * The mock leg hands the analyzer what a real preview hands it: for the mock-fidelity fixtures, every
 * resource the real preview registers (its URN, so its type and parent chain) is registered by the mock
 * leg too, and each Kubernetes object's checked inputs (what the engine passes to `Analyze`) are equal,
 * generated names masked alike. The real preview's inputs come from its event stream (`resourcePreEvent`),
 * where secrets show as "[secret]".
 *
 * Needs the toolchain (`npm run setup`); without it this suite fails, unless PKO_GUARD_SKIP_REAL=1 is set
 * (then it is pending, never passing).
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { loadFixtures } from "../../../../harness/runner";
import { runProgramUnderMocks } from "../../../../harness/legs/mock";
import { fixturePack, prepareFixtureStack } from "../../../../harness/legs/real";
import { previewWithPack } from "../../../../engine/pulumi-cli";
import { findToolchain } from "../../../../support/toolchain";
import { ToolchainMissingError } from "../../../../support/errors";
import { REPO_ROOT } from "../../../../support/paths";
import { maskedName } from "../../../../harness/autonames";
import { SIG_KEY, SECRET_SIG } from "../../../../harness/legs/mock-wire";

const FIXTURES = [
    "fidelity-autonamed-sa",
    "fidelity-transforms",
    "fidelity-yaml-v1",
    "fidelity-yaml-v2",
    "fidelity-component-parents",
];

/** Wire form → the event stream's display form: secrets as "[secret]", generated names masked. */
function display(v: unknown, names: Set<string>): unknown {
    if (typeof v === "string") return names.has(v) ? maskedName(v) : v;
    if (Array.isArray(v)) return v.map((x) => display(x, names));
    if (v && typeof v === "object") {
        const o = v as Record<string, unknown>;
        if (o[SIG_KEY] === SECRET_SIG) return "[secret]";
        return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, display(x, names)]));
    }
    return v;
}

interface PreEvent {
    resourcePreEvent?: {
        metadata: {
            urn: string;
            type: string;
            op: string;
            new?: { inputs?: Record<string, unknown>; parent?: string };
        };
    };
}

describe("mock leg inputs = real preview inputs (mock-fidelity fixtures)", function () {
    this.timeout(1800000);
    const skipReal = process.env.PKO_GUARD_SKIP_REAL === "1";

    for (const name of FIXTURES) {
        it(name, async function () {
            if (skipReal) this.skip();
            let toolchain;
            try {
                toolchain = findToolchain();
            } catch (e) {
                if (e instanceof ToolchainMissingError)
                    assert.fail(
                        "the Pulumi toolchain is not installed: run npm run setup (or set PKO_GUARD_SKIP_REAL=1)",
                    );
                throw e;
            }
            const [fixture] = loadFixtures([path.join(REPO_ROOT, "fixtures", name)]);
            const mock = await runProgramUnderMocks(fixture, 300000);
            const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-inputs-"));
            try {
                const prepared = await prepareFixtureStack(fixture, toolchain, tmp, 300000);
                if ("error" in prepared) assert.fail(prepared.error);
                const preview = await previewWithPack(prepared, fixturePack(fixture, new Map()));
                assert.strictEqual(preview.error, undefined);
                const real = new Map<string, { inputs: Record<string, unknown>; parent?: string }>();
                for (const line of preview.output.split("\n")) {
                    if (!line.startsWith("{")) continue;
                    const e = JSON.parse(line) as PreEvent;
                    const m = e.resourcePreEvent?.metadata;
                    if (!m || m.type.startsWith("pulumi:providers:")) continue;
                    real.set(m.urn, { inputs: m.new?.inputs ?? {}, parent: m.new?.parent });
                }
                const names = new Set(
                    mock.map((r) => (r as { autonamed?: string }).autonamed).filter((n): n is string => !!n),
                );
                const realNames = new Set<string>();
                for (const r of real.values()) {
                    const meta = r.inputs.metadata as
                        { name?: string; annotations?: Record<string, string> } | undefined;
                    if (meta?.annotations?.["pulumi.com/autonamed"] === "true" && meta.name) realNames.add(meta.name);
                }
                assert.deepStrictEqual(
                    [...mock.map((r) => r.urn)].sort(),
                    [...real.keys()].sort(),
                    "the same resources, with the same URNs",
                );
                for (const r of mock) {
                    const other = real.get(r.urn)!;
                    assert.strictEqual(r.parent ?? "", other.parent ?? "", `parent of ${r.urn}`);
                    if (!r.type.startsWith("kubernetes:") || !(r as { custom?: boolean }).custom) continue;
                    assert.deepStrictEqual(
                        display(r.properties, names),
                        display(other.inputs, realNames),
                        `checked inputs of ${r.urn}`,
                    );
                }
            } finally {
                fs.rmSync(tmp, { recursive: true, force: true });
            }
        });
    }
});
