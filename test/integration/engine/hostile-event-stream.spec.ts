/**
 * The gate's reading of the engine's event stream: every policy event is kept however much the preview
 * prints before it (issue 19 item 1; the reader used to keep only the last 200,000 characters, so the
 * policy events of a few hundred resources were cut off and a failing gate passed). A stand-in `pulumi`
 * prints the stream as the engine does (one JSON event a line, in pipe-sized chunks): a Stack's policy
 * events, then the events of thousands of other resources; the real preview of 5,000 resources is in gate-large.spec.ts.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { EventReader, previewWithPack } from "../../../engine/pulumi-cli";

const STACK_URN = "urn:pulumi:dev::big::kubernetes:pulumi.com/v1:Stack::billing-prod";

/** A fake `pulumi` (a node script) that prints the policy events, then `resources` resource events, and exits. */
function fakeCli(
    dir: string,
    resources: number,
    policy: { level: "mandatory" | "advisory"; count: number },
    exitCode: number,
): string {
    const file = path.join(dir, `pulumi-${resources}-${policy.level}`);
    const script = `#!${process.execPath}
const out = [];
// As in a real preview, a resource's policy events follow its own events: the Stack comes first here, so
// its findings are followed by thousands of other resources' events.
for (let i = 0; i < ${policy.count}; i++) {
    out.push(JSON.stringify({ policyEvent: { resourceUrn: ${JSON.stringify(STACK_URN)}, message: "finding " + i, policyName: "pko-stack-prod-pinned-commit", enforcementLevel: "${policy.level}" } }));
}
for (let i = 0; i < ${resources}; i++) {
    out.push(JSON.stringify({ sequence: i, resourcePreEvent: { metadata: { op: "create", urn: "urn:pulumi:dev::big::kubernetes:core/v1:ConfigMap::cm-" + i,
        new: { inputs: { data: { key: "ünïcödé-" + "x".repeat(200) } } } } } }));
}
${exitCode !== 0 ? `out.push(JSON.stringify({ diagnosticEvent: { message: "preview failed", severity: "error" } }));` : ""}
out.push(JSON.stringify({ summaryEvent: {} }));
process.stdout.write(out.join("\\n") + "\\n", () => process.exit(${exitCode}));
`;
    fs.writeFileSync(file, script, { mode: 0o755 });
    return file;
}

describe("the gate's event stream (issue 19 item 1)", function () {
    this.timeout(120000);
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-events-"));
    after(() => fs.rmSync(tmp, { recursive: true, force: true }));
    const pack = { dir: tmp, descriptions: new Map<string, string>() };

    it("keeps every policy event after 5,000 resource events (mandatory: a violation, not a failed preview)", async () => {
        const cli = fakeCli(tmp, 5000, { level: "mandatory", count: 3 }, 255);
        const r = await previewWithPack(
            { cli: { pulumi: cli }, cwd: tmp, env: process.env, stack: "dev", timeoutMs: 60000 },
            pack,
            { keepOutput: false },
        );
        assert.strictEqual(r.error, undefined);
        assert.deepStrictEqual(
            r.rows.map((x) => [x.policy, x.resource, x.level, x.message]),
            [0, 1, 2].map((i) => ["pko-stack-prod-pinned-commit", "billing-prod", "mandatory", `finding ${i}`]),
        );
    });

    it("keeps every advisory policy event after 5,000 resource events (exit 0)", async () => {
        const cli = fakeCli(tmp, 5000, { level: "advisory", count: 2 }, 0);
        const r = await previewWithPack(
            { cli: { pulumi: cli }, cwd: tmp, env: process.env, stack: "dev", timeoutMs: 60000 },
            pack,
            { keepOutput: false },
        );
        assert.strictEqual(r.error, undefined);
        assert.strictEqual(r.rows.length, 2);
        assert.ok(r.output.length <= 200_001 + 10, "without keepOutput, only a bounded tail of the output is held");
    });

    it("reads events split anywhere, multi-byte characters included", () => {
        const events = [
            { resourcePreEvent: { metadata: { urn: "u", note: "ç".repeat(1000) } } },
            {
                policyEvent: {
                    resourceUrn: STACK_URN,
                    message: "é€ message",
                    policyName: "p",
                    enforcementLevel: "advisory",
                },
            },
            { diagnosticEvent: { message: "boom", severity: "error" } },
            { diagnosticEvent: { message: "fine", severity: "info" } },
        ];
        const bytes = Buffer.from(events.map((e) => JSON.stringify(e)).join("\n"));
        for (const size of [1, 2, 3, 7, 64, 4096]) {
            const reader = new EventReader();
            for (let i = 0; i < bytes.length; i += size) reader.push(bytes.subarray(i, i + size));
            assert.deepStrictEqual(reader.end(), [events[1], events[2]], `chunks of ${size} byte(s)`);
        }
    });

    it("keeps every remediation event among resource events (the pack's remediate level)", () => {
        const remediation = {
            policyRemediationEvent: { resourceUrn: STACK_URN, policyName: "pko-stack-resync-floor" },
        };
        const lines = Array.from({ length: 5000 }, (_, i) =>
            JSON.stringify({ resourcePreEvent: { metadata: { urn: `u${i}` } } }),
        );
        lines.splice(2500, 0, JSON.stringify(remediation));
        const reader = new EventReader();
        reader.push(Buffer.from(lines.join("\n")));
        assert.deepStrictEqual(reader.end(), [remediation]);
    });
});
