/**
 * The lean pack entry (pack/dist/index.js: one bundle with the @pulumi/pulumi alias) reports exactly
 * the rows of the plain compiled entry (bin/index.js, tsc module by module, the whole SDK index), on
 * every fixture and profile: each program runs once under mocks and its registrations go to both
 * analyzers over gRPC, with the fixture's reconciled policy config.
 */
import * as assert from "assert";
import { Analyzer } from "../../../harness/analyzer";
import { fixtureConfig } from "../../../harness/expect";
import { runProgramUnderMocks } from "../../../harness/legs/mock";
import { programFixture } from "../../../harness/legs/manifest";
import { Row } from "../../../evaluation/rows";
import { PACK_DIR, PACK_ENTRY, PLAIN_PACK_ENTRY, REPO_ROOT } from "../../../support/paths";
import { loadFixtures } from "../../../harness/runner";

const key = (r: Row) => JSON.stringify([r.policy, r.resource, r.urn, r.level, r.message]);

describe("lean pack entry: rows identical to the plain compiled entry on every fixture", function () {
    this.timeout(1200000);
    let lean: Analyzer;
    let plain: Analyzer;
    before(async () => {
        lean = await Analyzer.start(PACK_ENTRY, PACK_DIR, 120000);
        plain = await Analyzer.start(PLAIN_PACK_ENTRY, REPO_ROOT, 120000);
    });
    after(() => {
        lean?.stop();
        plain?.stop();
    });

    it("both entries describe the same policies", () => {
        assert.deepStrictEqual(lean.policies, plain.policies);
    });

    it("every fixture gives the same rows through both", async () => {
        const fixtures = loadFixtures([]).filter((f) => !f.expect.realOnly);
        let rows = 0;
        const programs = new Map<string, Awaited<ReturnType<typeof runProgramUnderMocks>>>();
        for (const f of fixtures) {
            // A manifest fixture runs as the program the harness generates for it (a yaml/v2 ConfigGroup of its files).
            const resources = programs.get(f.dir) ?? (await runProgramUnderMocks(programFixture(f), 120000));
            programs.set(f.dir, resources);
            const got: Row[][] = [];
            for (const analyzer of [lean, plain]) {
                await analyzer.configure(fixtureConfig(f), { project: f.project, stack: f.expect.stack });
                got.push(await analyzer.analyze(resources));
            }
            assert.deepStrictEqual(got[0].map(key).sort(), got[1].map(key).sort(), f.name);
            rows += got[0].length;
        }
        assert.ok(
            rows > fixtures.length,
            `only ${rows} rows over ${fixtures.length} fixtures: the comparison proves little`,
        );
    });
});
