/**
 * The terminal output of many findings (reports/table.ts renderFindings) wraps each message and shows each
 * file once a rendering, for the findings that share them: the output must be each finding's block as it is
 * rendered alone, in order, whatever the findings share (messages, files, absolute or relative to the current
 * folder, or outside it).
 */
import * as assert from "assert";
import fc from "fast-check";
import * as path from "path";
import { Finding } from "../../../evaluation/rows";
import { ProjectSubject } from "../../../reports/subject";
import { renderFindings, renderFullTable, wrap, wrapWords } from "../../../reports/table";

function subject(findings: Finding[]): ProjectSubject {
    return {
        kind: "project",
        name: "manifests",
        stack: "",
        description: "",
        programFile: "",
        findings,
        outcome: findings.length > 0 ? "fail" : "pass",
        durationMs: 0,
    };
}

/** The lines of a rendering without its summary line. */
function blocks(out: string): string {
    return out.split("\n").slice(0, -2).join("\n");
}

describe("the terminal output of findings that share messages and files", () => {
    it("wraps any text as its words filled into lines (single-spaced text or not)", () => {
        const part = fc.constantFrom(
            "a",
            "bb",
            "word",
            "spec.envRefs.PULUMI_ACCESS_TOKEN",
            "x".repeat(30),
            " ",
            " ",
            " ",
            "  ",
            "\t",
            "\n",
            "\u00a0",
            "\u3000",
        );
        fc.assert(
            fc.property(
                fc.array(part, { maxLength: 40 }),
                fc.integer({ min: 1, max: 60 }),
                fc.constantFrom("", "  ", "    "),
                (parts, width, indent) => {
                    const text = parts.join("");
                    assert.deepStrictEqual(
                        wrap(text, width, indent),
                        wrapWords(text, width, indent),
                        JSON.stringify([text, width, indent]),
                    );
                },
            ),
            { numRuns: 3000 },
        );
        assert.deepStrictEqual(wrap("one two three", 9, "  "), ["  one two", "  three"]);
        assert.deepStrictEqual(wrap(" one  two\tthree\n", 9, "  "), ["  one two", "  three"]);
    });

    it("is each finding's block as rendered alone, in order", () => {
        const long =
            "spec.envRefs.PULUMI_ACCESS_TOKEN (a credential) is a Literal: the credential would sit in plaintext in the Stack manifest; reference a Kubernetes Secret instead.";
        const files = [
            path.join(process.cwd(), "manifests", "a.yaml"),
            path.join(path.dirname(process.cwd()), "elsewhere", "a.yaml"),
            "other/a.yaml",
            undefined,
        ];
        const messages = [long, "short message", `${long} (and more)`, long.replace(/ /g, "  ")];
        const findings: Finding[] = [];
        for (let i = 0; i < 24; i++) {
            const file = files[i % files.length];
            findings.push({
                policy: i % 3 === 0 ? "pko-stack-credentials-from-secrets" : "pko-stack-destroy-on-finalize",
                resource: `Stack/team/app-${i}`,
                urn: `urn:pulumi:check::manifests::kubernetes:pulumi.com/v1:Stack::Stack/team/app-${i}`,
                type: "kubernetes:pulumi.com/v1:Stack",
                level: i % 2 === 0 ? "mandatory" : "advisory",
                status: i % 2 === 0 ? "blocking" : "advisory",
                message: messages[(i * 7) % messages.length],
                ...(file ? { file, line: i + 1, column: 3 } : {}),
            });
        }
        for (const width of [60, 120]) {
            const together = blocks(renderFindings(subject(findings), width, "summary"));
            const ordered = [
                ...findings.filter((f) => f.status === "blocking"),
                ...findings.filter((f) => f.status === "advisory"),
            ];
            const alone = ordered.map((f) => blocks(renderFindings(subject([f]), width, "summary"))).join("\n");
            assert.strictEqual(together, alone, `width ${width}`);
        }
    });
});

describe("the full table (--verbose)", () => {
    const finding = (resource: string, message: string): Finding => ({
        policy: "pko-stack-prod-pinned-commit",
        resource,
        urn: `urn:pulumi:check::manifests::kubernetes:pulumi.com/v1:Stack::${resource}`,
        type: "kubernetes:pulumi.com/v1:Stack",
        level: "mandatory",
        status: "blocking",
        message,
        file: "/r/m/stack.yaml",
        line: 4,
    });
    const longest = (text: string) => Math.max(...text.split("\n").map((l) => l.length));
    const word = `spec.${"x".repeat(70)}`;

    it("breaks a word longer than the message column across lines instead of cutting it off", () => {
        const out = renderFullTable(subject([finding("Stack/p/a", `set ${word} now`)]), 120, "summary");
        assert.ok(longest(out) <= 120, out);
        assert.match(out, /^┌/);
        assert.ok(!out.includes("…"), out);
        const cells = out
            .split("\n")
            .filter((l) => l.startsWith("│"))
            .map((l) => l.split("│")[6].trim())
            .join("");
        assert.ok(cells.includes(word), cells);
    });

    it("where the table cannot fit, each finding's columns one under the other, names whole", () => {
        const name = `Stack/pulumi/${"n".repeat(60)}`;
        const out = renderFullTable(subject([finding(name, "not pinned")]), 80, "summary");
        assert.strictEqual(
            out,
            [
                "policy:   pko-stack-prod-pinned-commit",
                `resource: ${name}`,
                "level:    mandatory",
                "status:   blocking",
                // The file as the default output shows it (outside the current folder: whole), never its base name.
                "where:    /r/m/stack.yaml:4",
                "message:  not pinned",
                "",
                "summary",
                "",
            ].join("\n"),
        );
        assert.match(renderFullTable(subject([finding(name, "not pinned")]), 240, "summary"), /^┌/);
    });

    it("off a terminal (no width to fit) every column whole and each message on one line, words never cut", () => {
        const message = Array.from({ length: 30 }, (_, i) => `spec.envRefs.PULUMI_ACCESS_TOKEN_${i}`).join(" ");
        const out = renderFullTable(subject([finding("Stack/pulumi/ledger", message)]), Infinity, "summary");
        const lines = out.split("\n");
        assert.deepStrictEqual(
            lines.filter((l) => l.startsWith("message:  ")),
            [`message:  ${message}`],
        );
        assert.ok(!out.includes("…"), out);
        assert.ok(lines.includes("where:    /r/m/stack.yaml:4"), out);
    });
});

describe("a gate finding whose declaration the program's source does not show", () => {
    const finding = (urn: string, file?: string): Finding => ({
        policy: "pko-stack-prod-pinned-commit",
        resource: "prod-app",
        urn,
        type: "kubernetes:pulumi.com/v1:Stack",
        level: "mandatory",
        status: "blocking",
        message: "not pinned",
        ...(file ? { file, line: 3, column: 7 } : {}),
    });
    const program = "urn:pulumi:dev::shop::kubernetes:pulumi.com/v1:Stack::prod-app";

    it("says there is no source line, in the default output and in the full table", () => {
        const out = renderFindings(subject([finding(program)]), 120);
        assert.match(out, /^ {2}resource: prod-app \(no source line found\)$/m);
        const table = renderFullTable(subject([finding(program)]), Infinity, "summary");
        assert.ok(table.split("\n").includes("where:    no source line found"), table);
    });

    it("shows the line when there is one, and says nothing of a line where none is expected (the cluster)", () => {
        assert.match(renderFindings(subject([finding(program, "/p/index.ts")]), 120), /\(\/p\/index\.ts:3:7\)$/m);
        const live = finding("urn:pulumi:cluster::live::kubernetes:pulumi.com/v1:Stack::Stack/pulumi/prod-app");
        assert.match(renderFindings(subject([live]), 120), /^ {2}resource: prod-app$/m);
    });
});
