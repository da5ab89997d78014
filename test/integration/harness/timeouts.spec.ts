/**
 * `--timeout` bounds everything a mock-leg run starts, the pack's analyzer included: a pack whose policy
 * overruns is killed and the leg is an error, never a mismatch or a pass.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { REPO_ROOT } from "../../../support/paths";
import { Analyzer } from "../../../harness/analyzer";
import { loadFixture } from "../../../harness/expect";
import { runMockLeg } from "../../../harness/legs/mock";
import { alive, waitFor } from "../../support/processes";

describe("timeouts", function () {
    this.timeout(300000);
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-timeouts-"));
    after(() => fs.rmSync(tmp, { recursive: true, force: true }));

    it("a policy that overruns the mock leg's timeout is killed, and the leg is an error", async () => {
        // A pack of one policy that never returns (a busy loop blocks its event loop, as a slow rule would).
        fs.writeFileSync(path.join(tmp, "package.json"), JSON.stringify({ name: "slow-pack", version: "0.0.1" }));
        fs.writeFileSync(
            path.join(tmp, "index.js"),
            `const { PolicyPack } = require(${JSON.stringify(path.join(REPO_ROOT, "node_modules", "@pulumi", "policy"))});
new PolicyPack("slow", { policies: [{ name: "slow-policy", description: "never returns", enforcementLevel: "mandatory",
  validateResource: () => { for (;;) {} } }] });\n`,
        );
        const analyzer = await Analyzer.start(path.join(tmp, "index.js"), tmp);
        const fixture = loadFixture(path.join(REPO_ROOT, "fixtures", "creds-literal-token"));
        const started = Date.now();
        const result = await runMockLeg(fixture, {
            packs: [{ analyzer: async () => analyzer, config: () => ({}) }],
            timeoutMs: 45000,
        });
        assert.strictEqual(result.status, "error", JSON.stringify(result));
        assert.match(result.status === "error" ? result.message : "", /^the policy pack timed out after 45 s$/);
        assert.ok(Date.now() - started < 120000, "the leg outlived its timeout by far");
        assert.strictEqual(analyzer.alive, false, "the overrunning pack was not stopped");
        const pid = analyzer.pid;
        await waitFor("the pack's process to end", () => pid === undefined || !alive(pid), 10000);
    });
});
