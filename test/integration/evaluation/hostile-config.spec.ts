/**
 * Policy config edge cases (issue 19 item 9), through `pko-guard check --config` as users run it: unknown
 * properties under "all" are rejected, waiver expiries must be calendar dates (and a waiver with an
 * impossible one waives nothing in the pack itself), a byte-order mark is accepted, and invalid JSON is
 * reported with a line and column on Node 20 without quoting the file.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { jsonErrorOffset } from "../../../evaluation/pack-config";
import { configWaivers } from "../../../policies/model/waivers";
import { assertInert, assertOneLine, pkoGuard, prodStackYaml } from "../../support/inert";

const CANARY = "canary-c0nf1g-77ab";
const STACK = prodStackYaml();

describe("policy config edge cases (issue 19 item 9)", function () {
    this.timeout(120000);
    let tmp: string;
    beforeEach(() => {
        tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-config-"));
        fs.writeFileSync(path.join(tmp, "stack.yaml"), STACK);
    });
    afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));
    const withConfig = (text: string | Buffer) => {
        fs.writeFileSync(path.join(tmp, "c.json"), text);
        return pkoGuard(["check", "stack.yaml", "--config", "c.json"], { cwd: tmp });
    };

    it('unknown properties under "all" are rejected', () => {
        assertOneLine(
            withConfig(JSON.stringify({ all: { enforcementLevel: "mandatory", allowedRepoPatterns: ["x"] } })),
            /^pko-guard: c\.json: all: unknown property allowedRepoPatterns \("all" takes only enforcementLevel\)$/,
        );
        assert.strictEqual(withConfig(JSON.stringify({ all: { enforcementLevel: "advisory" } })).code, 0);
    });

    for (const date of ["9999-99-99", "2026-02-30", "2027-13-01", "2026-04-31"]) {
        it(`a waiver that expires on ${date} is rejected`, () => {
            const config = {
                "pko-stack-prod-pinned-commit": {
                    waivers: [{ resource: "Stack/pulumi/app", reason: "later", expires: date }],
                },
            };
            assertOneLine(
                withConfig(JSON.stringify(config)),
                /^pko-guard: c\.json: pko-stack-prod-pinned-commit: (waivers\[0\]\.expires is not a calendar date|\/waivers\/0\/expires must match pattern)/,
            );
            // The pack itself (Pulumi Cloud applies configs without this check) does not honour it.
            assert.deepStrictEqual(configWaivers(config["pko-stack-prod-pinned-commit"]), []);
        });
    }

    it("a real date still waives", () => {
        const config = {
            "pko-stack-prod-pinned-commit": {
                waivers: [{ resource: "Stack/pulumi/app", reason: "later", expires: "2096-02-29" }],
            },
        };
        const r = withConfig(JSON.stringify(config));
        assert.match(r.stdout, /^waived {2}pko-stack-prod-pinned-commit/m);
    });

    it("JSON with a byte-order mark is accepted", () => {
        const r = withConfig(
            Buffer.concat([
                Buffer.from([0xef, 0xbb, 0xbf]),
                Buffer.from(JSON.stringify({ "pko-stack-prod-pinned-commit": "advisory" })),
            ]),
        );
        assert.strictEqual(r.code, 0, r.stderr);
    });

    it("invalid JSON: a line and column, never the text", () => {
        const r = withConfig(`{\n  "pko-stack-prod-pinned-commit": {\n    "token": ${CANARY}\n  }\n}\n`);
        assertOneLine(r, /^pko-guard: c\.json: not valid JSON at line 3, column 14 /);
        assertInert("output", r.stdout + r.stderr, [CANARY]);
        assertOneLine(withConfig(`{"a": "${CANARY}"`), /^pko-guard: c\.json: not valid JSON at line 1, column 27 /);
    });

    it("the JSON scanner agrees with JSON.parse", () => {
        for (const text of [
            "{}",
            "[1, 2.5e-3, true, null]",
            '{"a": }',
            "[1,]",
            '{"a" 1}',
            '"\\u12"',
            "[01]",
            "[".repeat(50000) + "]".repeat(50000),
            "[".repeat(50000),
            "{} x",
        ]) {
            let valid = true;
            try {
                JSON.parse(text);
            } catch {
                valid = false;
            }
            assert.strictEqual(jsonErrorOffset(text) === undefined, valid, text.slice(0, 40));
        }
    });
});
