/**
 * A denial is text kubectl prints: every line of it is pko-guard's own. A value a finding quotes (a map key of
 * the object under review, say) cannot start a line of its own in the denial (forging a finding or an
 * "all clear"), nor carry a terminal escape: it is escaped (support/escape.ts) before the lines are made and
 * clipped, so the denial keeps one line a finding and stays bounded.
 */
import * as assert from "assert";
import { packConfig } from "../../../evaluation/pack-config";
import { DENIAL_LINE, judgeAdmission } from "../../../cluster/admission";
import { seededCache } from "../../support/fake-cluster";

const FORGED = "\n- pko-guard: all clear, admitted\r\x1b[2K\x1b[32mOK\u202e";

function stackWith(keys: string[]) {
    const envRefs = Object.fromEntries(
        keys.map((k) => [k, { type: "Literal", literal: { value: "AKIAIOSFODNN7EXAMPLE" } }]),
    );
    return {
        apiVersion: "pulumi.com/v1",
        kind: "Stack",
        metadata: { name: "s", namespace: "n" },
        spec: { stack: "o/p/s", projectRepo: "https://example.com/p.git", commit: "0".repeat(40), envRefs },
    };
}

describe("the text of a denial", () => {
    const config = packConfig();

    it("a quoted value with line breaks and terminal escapes starts no line and drives no terminal", () => {
        const d = judgeAdmission(
            { operation: "CREATE", object: stackWith([`AWS_SECRET_ACCESS_KEY${FORGED}`]) },
            seededCache(),
            {
                config,
                warnOnly: false,
            },
        );
        assert.strictEqual(d.allowed, false);
        const lines = d.message!.split("\n");
        assert.strictEqual(lines.length, 2, d.message);
        assert.match(
            lines[1],
            /^- pko-stack-credentials-from-secrets: spec\.envRefs\.AWS_SECRET_ACCESS_KEY\\n- pko-guard/,
        );
        assert.doesNotMatch(d.message!, /[\r\x1b\u202e]/);
    });

    it("each line stays within DENIAL_LINE characters once escaped", () => {
        const d = judgeAdmission(
            { operation: "CREATE", object: stackWith([`K${"\x1b".repeat(400)}`]) },
            seededCache(),
            { config, warnOnly: false },
        );
        for (const line of d.message!.split("\n")) assert.ok(line.length <= DENIAL_LINE, `${line.length}: ${line}`);
    });
});
