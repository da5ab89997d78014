/**
 * `pko-guard test --update` rewrites an expectation file from the rows a run reported, and the diff is the change
 * alone: a count or a level edited in place, an entry no longer reported removed with its lines, a new one
 * appended in the file's style; comments, quoting, folded text and the order of the rest stay byte for byte.
 */
import * as assert from "assert";
import { Row } from "../../../evaluation/rows";
import * as YAML from "yaml";
import { updatedExpectText } from "../../../harness/expect-update";

const row = (policy: string, resource: string, level: "mandatory" | "advisory", message = "m"): Row => ({
    policy,
    resource,
    urn: "",
    type: "",
    level,
    message,
});

const FILE = [
    "# yaml-language-server: $schema=../../schemas/pko-guard/fixture-v1.schema.json",
    "apiVersion: pko-guard/v1",
    "kind: Fixture",
    "description: >-",
    "  a description folded over",
    "  two lines",
    "violations:",
    "  # the token",
    "  - policy: pko-stack-credentials-from-secrets",
    "    resource: app-dev",
    "    count: 1",
    '    message: "spec\\\\.envRefs"',
    "  - policy: pko-stack-auth-delegator",
    "    resource: 'app-dev'",
    "    count: 1",
    "    level: advisory",
    "",
].join("\n");

describe("pko-guard test --update", () => {
    it("leaves a file whose expectations hold byte for byte", () => {
        const rows = [
            row("pko-stack-credentials-from-secrets", "app-dev", "mandatory", "spec.envRefs.X is Literal"),
            row("pko-stack-auth-delegator", "app-dev", "advisory"),
        ];
        assert.strictEqual(updatedExpectText(FILE, [{ at: ["violations"], rows }]), FILE);
    });

    it("edits a count and a level in place, removes what is gone, appends what is new", () => {
        const review: string[] = [];
        const rows = [
            row("pko-stack-credentials-from-secrets", "app-dev", "mandatory", "nothing about envRefs"),
            row("pko-stack-credentials-from-secrets", "app-dev", "mandatory", "nothing about envRefs"),
            row("pko-stack-name-length", "a-very-long-name", "mandatory"),
        ];
        const text = updatedExpectText(FILE, [{ at: ["violations"], rows }], review);
        assert.strictEqual(
            text,
            FILE.replace("    count: 1\n    message", "    count: 2\n    message").replace(
                "  - policy: pko-stack-auth-delegator\n    resource: 'app-dev'\n    count: 1\n    level: advisory\n",
                "  - policy: pko-stack-name-length\n    resource: a-very-long-name\n    count: 1\n    level: mandatory\n",
            ),
        );
        assert.deepStrictEqual(review, [
            "expect.yaml: the message pattern of pko-stack-credentials-from-secrets on app-dev no longer matches: review it",
        ]);
        const level = updatedExpectText(FILE, [
            {
                at: ["violations"],
                rows: [
                    row("pko-stack-credentials-from-secrets", "app-dev", "mandatory", "spec.envRefs"),
                    row("pko-stack-auth-delegator", "app-dev", "mandatory"),
                ],
            },
        ]);
        assert.strictEqual(level, FILE.replace("level: advisory", "level: mandatory"));
    });

    it("empties a list that is no longer reported, and fills an empty one in block style", () => {
        const empty = updatedExpectText(FILE, [{ at: ["violations"], rows: [] }]);
        assert.strictEqual(empty, FILE.slice(0, FILE.indexOf("violations:")) + "violations: []\n");
        const filled = updatedExpectText(empty, [{ at: ["violations"], rows: [row("p", "r", "advisory")] }]);
        assert.strictEqual(
            filled,
            FILE.slice(0, FILE.indexOf("violations:")) +
                "violations:\n  - policy: p\n    resource: r\n    count: 1\n    level: advisory\n",
        );
        // what it writes reads back as the expectations it was given
        assert.deepStrictEqual(YAML.parse(filled).violations, [
            { policy: "p", resource: "r", count: 1, level: "advisory" },
        ]);
    });

    it("updates a profile's list without touching the fixture's own, in the file's line endings", () => {
        const crlf = [
            "apiVersion: pko-guard/v1",
            "kind: Fixture",
            "description: d",
            "profiles:",
            "  strict:",
            "    policyConfig: strict.json",
            "    violations: []",
            "violations: []",
            "",
        ].join("\r\n");
        const text = updatedExpectText(crlf, [
            { at: ["violations"], rows: [] },
            { at: ["profiles", "strict", "violations"], rows: [row("p", "r", "mandatory")] },
        ]);
        assert.strictEqual(
            text,
            crlf.replace(
                "    violations: []\r\n",
                "    violations:\r\n      - policy: p\r\n        resource: r\r\n        count: 1\r\n        level: mandatory\r\n",
            ),
        );
    });
});
