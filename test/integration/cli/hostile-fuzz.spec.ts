/**
 * A fuzz suite of hostile inputs (issue 19), fast and reproducible: a fixed seed and a bounded number of
 * cases, run in `npm test`. Time and memory bounds are measured in the bench, not here.
 *
 * `check` as users run it (the CLI, GitHub output, a step summary and every report format) over generated
 * repositories that mix the classes of the issue: names, namespaces and file names carrying control
 * characters, ANSI escapes and workflow commands; Secrets whose values are a canary; BOM, CRLF and CR-only
 * line ends, UTF-16; Latin-1; huge keys; many documents; deep flow collections; undefined aliases and tags
 * named after the canary. Asserted for each case: the exit code as documented (0 pass, 1 blocking, 2 bad
 * input), every output inert (no raw control character, no workflow command from input), no canary
 * anywhere, and every requested report written and valid JSON.
 * The gate's report path (the table, workflow commands, step summary and reports rendered from a preview's
 * rows) gets the same hostile strings in its findings, waivers, notices and errors, and the event reader gets
 * hostile event streams in random chunks.
 */
import * as assert from "assert";
import * as fc from "fast-check";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { EventReader } from "../../../engine/pulumi-cli";
import { renderStepSummary, renderWorkflowCommands } from "../../../reports/github";
import { ProjectSubject } from "../../../reports/subject";
import { renderFindings, renderFullTable } from "../../../reports/table";
import { reportChunks } from "../../../reports/write";
import { CORPUS, assertInert, pkoGuard } from "../../support/inert";

const SEED = 19_2026;
const CANARY = "fuzzc4n4ry";

/** Characters that break naive output, for names and file names. */
const HOSTILE = [
    "\n",
    "\r",
    "\t",
    "\u0000",
    "\u0007",
    "\u001b",
    "\u007f",
    "\u0085",
    "\u009b",
    "\u2028",
    "\u202e",
    ":",
    "::",
    "#",
    "##[",
    "[",
    "`",
    "<",
    ">",
    "|",
    "*",
    "_",
    "%",
    "&",
    '"',
    "'",
    "\\",
    "é",
    "€",
    "😀",
];

const piece = fc.oneof(
    fc.constantFrom(...HOSTILE),
    fc.constantFrom(...CORPUS),
    fc.string({ maxLength: 6 }),
    fc.constantFrom("::error::PWNED", "::set-output name=x::PWNED", "::stop-commands::PWNED"),
);
const hostileText = fc.array(piece, { minLength: 1, maxLength: 4 }).map((a) => a.join(""));

/** A YAML double-quoted scalar that holds any string (everything outside printable ASCII escaped). */
function quoted(s: string): string {
    let out = '"';
    for (const ch of s) {
        const c = ch.codePointAt(0)!;
        if (ch === '"' || ch === "\\") out += `\\${ch}`;
        else if (c >= 0x20 && c < 0x7f) out += ch;
        else if (c <= 0xffff) out += `\\u${c.toString(16).padStart(4, "0")}`;
        else out += `\\U${c.toString(16).padStart(8, "0")}`;
    }
    return `${out}"`;
}

type Eol = "\n" | "\r\n" | "\r";
type Encoding = "utf8" | "utf8-bom" | "utf16le" | "utf16be";

function encode(text: string, eol: Eol, encoding: Encoding): Buffer {
    const t = text.replace(/\n/g, eol);
    if (encoding === "utf8") return Buffer.from(t);
    if (encoding === "utf8-bom") return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(t)]);
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(t, "utf16le")]);
    return encoding === "utf16le" ? le : le.swap16();
}

interface Case {
    files: { name: string; bytes: Buffer }[];
    expected: 0 | 1 | 2;
    /** CR-only line ends: whether they decode is the Kubernetes decoder's call (gitops/decode/kube-yaml.ts), so 2 is accepted too. */
    orBadInput?: boolean;
}

const fileName = hostileText.map((s) => `${s.replace(/[/\u0000]/g, "_").slice(0, 60)}.yaml`);

/** A repository that is valid: hostile names, a canary Secret, and a production Stack on a branch (1) or not (0). */
const validParams = fc.record({
    name: hostileText,
    namespace: hostileText,
    value: hostileText,
    file: fileName,
    blocking: fc.boolean(),
    eol: fc.constantFrom<Eol>("\n", "\r\n", "\r"),
    encoding: fc.constantFrom<Encoding>("utf8", "utf8-bom", "utf16le", "utf16be"),
    documents: fc.constantFrom(1, 3, 400),
    hugeKey: fc.boolean(),
    flowDepth: fc.integer({ min: 0, max: 60 }),
});

function validCase(c: typeof validParams extends fc.Arbitrary<infer T> ? T : never): Case {
    {
        const docs = [
            `apiVersion: v1\nkind: Secret\nmetadata:\n  name: ${quoted(c.name)}\n  namespace: ${quoted(c.namespace)}\nstringData:\n  password: ${CANARY}-password\n  token: ${quoted(`${CANARY}-${c.value}`)}\n`,
        ];
        // A production Stack on a branch blocks (1); without it nothing may block (0).
        if (c.blocking) {
            docs.push(
                `apiVersion: pulumi.com/v1\nkind: Stack\nmetadata:\n  name: ${quoted(`s-${c.name}`)}\n  namespace: ${quoted(c.namespace)}\n  labels: {env: production}\nspec:\n  stack: ${quoted(`acme/${c.value}/prod`)}\n  projectRepo: https://github.com/acme/app\n  branch: ${quoted(c.value)}\n`,
            );
        }
        const data = (i: number) => [
            `  deep: ${"[".repeat(c.flowDepth)}${quoted(c.value)}${"]".repeat(c.flowDepth)}`,
            ...(c.hugeKey && i === 0 ? [`  ${quoted("k".repeat(100_000) + c.value)}: v`] : []),
        ];
        for (let i = 0; i < c.documents; i++)
            docs.push(
                `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-${i}\n  namespace: ${quoted(c.namespace)}\ndata:\n${data(i).join("\n")}\n`,
            );
        return {
            files: [{ name: c.file, bytes: encode(docs.join("---\n"), c.eol, c.encoding) }],
            expected: c.blocking ? 1 : 0,
            orBadInput: c.eol === "\r",
        };
    }
}

/** A repository with one bad file among good ones: exit 2, whatever else it holds. */
const badParams = fc.record({
    kind: fc.constantFrom("alias", "tag", "latin1", "deep", "binary", "unclosed-flow"),
    file: fileName,
    good: validParams,
});

function badCase(c: typeof badParams extends fc.Arbitrary<infer T> ? T : never): Case {
    {
        const bad: Record<string, Buffer> = {
            alias: Buffer.from(
                `apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData:\n  password: *${CANARY}\n`,
            ),
            tag: Buffer.from(
                `apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData:\n  password: !${CANARY}! x\n`,
            ),
            latin1: Buffer.from(
                `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: caf\xe9}\ndata: {k: ${CANARY}-\xe9}\n`,
                "latin1",
            ),
            deep: Buffer.from(
                `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: d}\ndata:\n  k: ${"[".repeat(5000)}${CANARY}${"]".repeat(5000)}\n`,
            ),
            binary: Buffer.from(`apiVersion: v1\u0000${CANARY}\n`),
            "unclosed-flow": Buffer.from(
                `apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData:\n  password: [${CANARY}\n`,
            ),
        };
        return { files: [...validCase(c.good).files, { name: `bad-${c.file}`, bytes: bad[c.kind] }], expected: 2 };
    }
}

describe("fuzz: hostile inputs (issue 19)", function () {
    this.timeout(600000);
    let tmp: string;
    before(() => (tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-fuzz-"))));
    after(() => fs.rmSync(tmp, { recursive: true, force: true }));

    it("check: exit codes as documented, inert output, no secret, every report written", () => {
        let n = 0;
        fc.assert(
            // Parameters (printed on failure), not files: each case is built from them.
            fc.property(
                fc.oneof(
                    { arbitrary: validParams.map((p) => ({ valid: p })), weight: 3 },
                    { arbitrary: badParams.map((p) => ({ bad: p })), weight: 1 },
                ),
                (params) => {
                    const c = "valid" in params ? validCase(params.valid) : badCase(params.bad);
                    const dir = path.join(tmp, `case-${n++}`);
                    fs.mkdirSync(path.join(dir, "repo"), { recursive: true });
                    for (const f of c.files) fs.writeFileSync(path.join(dir, "repo", f.name), f.bytes);
                    const summary = path.join(dir, "summary.md");
                    const reports = ["json", "sarif", "junit"].flatMap((f) => [
                        "--report",
                        `${f}=${path.join(dir, `r.${f}`)}`,
                    ]);
                    const r = pkoGuard(["check", "repo", "--format", "github", ...reports], {
                        cwd: dir,
                        env: { ...process.env, GITHUB_ACTIONS: "true", GITHUB_STEP_SUMMARY: summary },
                    });
                    if (!(c.orBadInput && r.code === 2))
                        assert.strictEqual(
                            r.code,
                            c.expected,
                            `expected exit ${c.expected}: ${r.stderr.slice(0, 500)}`,
                        );
                    if (r.code === 2) {
                        // One line; or, when several files cannot be read (a bad file, and a good one whose CR-only
                        // line ends do not decode), a line each and then their count.
                        const lines = r.stderr.trimEnd().split("\n");
                        const count = /^pko-guard: (\d+) files cannot be read as manifests$/.exec(
                            lines[lines.length - 1],
                        );
                        assert.ok(lines.length === 1 || Number(count?.[1]) === lines.length - 1, r.stderr);
                        assert.ok(
                            lines.every((l) => l.startsWith("pko-guard: ")),
                            r.stderr,
                        );
                    }
                    assertInert("stdout", r.stdout, [CANARY]);
                    assertInert("stderr", r.stderr, [CANARY]);
                    assertInert("step summary", fs.readFileSync(summary, "utf8"), [CANARY]);
                    for (const f of ["json", "sarif", "junit"]) {
                        const text = fs.readFileSync(path.join(dir, `r.${f}`), "utf8");
                        assert.ok(!text.includes(CANARY), `the ${f} report holds the secret`);
                        if (f !== "junit") JSON.parse(text);
                    }
                    fs.rmSync(dir, { recursive: true, force: true });
                },
            ),
            { seed: SEED, numRuns: 24, endOnFailure: true },
        );
    });

    it("the gate's report path: findings, waivers, notices and errors from input stay inert", () => {
        const finding = fc.record({
            resource: hostileText,
            message: hostileText,
            file: hostileText,
            reason: hostileText,
            status: fc.constantFrom("blocking", "advisory", "waived") as fc.Arbitrary<
                "blocking" | "advisory" | "waived"
            >,
        });
        fc.assert(
            fc.property(
                fc.array(finding, { minLength: 1, maxLength: 5 }),
                hostileText,
                hostileText,
                fc.boolean(),
                (findings, name, error, failed) => {
                    const subject: ProjectSubject = {
                        kind: "project",
                        name,
                        stack: name,
                        description: "fuzz",
                        programFile: path.join(tmp, "index.ts"),
                        findings: findings.map((f, i) => ({
                            policy: "pko-stack-prod-pinned-commit",
                            resource: f.resource,
                            urn: `urn:pulumi:dev::p::kubernetes:pulumi.com/v1:Stack::${f.resource}`,
                            type: "kubernetes:pulumi.com/v1:Stack",
                            level: "mandatory",
                            message: f.message,
                            file: path.join(tmp, f.file.replace(/\//g, "_")),
                            line: i + 1,
                            status: f.status,
                            ...(f.status === "waived" ? { waiver: { reason: f.reason, expires: "2099-01-01" } } : {}),
                        })),
                        notices: [{ level: "advisory", policy: "pko-stack-prod-pinned-commit", message: error }],
                        outcome: failed ? "error" : "fail",
                        ...(failed ? { error } : {}),
                        durationMs: 1,
                    };
                    assertInert("table", renderFindings(subject, 80));
                    assertInert("full table", renderFullTable(subject, 100));
                    assertInert("workflow commands", renderWorkflowCommands([subject]));
                    assertInert("step summary", renderStepSummary([subject]));
                    for (const f of ["json", "sarif"] as const) JSON.parse([...reportChunks(f, [subject])].join(""));
                },
            ),
            { seed: SEED, numRuns: 200 },
        );
    });

    it("the event reader keeps exactly the policy events of any stream, split anywhere", () => {
        const event = fc.oneof(
            hostileText.map((m) => ({
                policyEvent: { resourceUrn: "urn:x", message: m, policyName: "p", enforcementLevel: "mandatory" },
            })),
            hostileText.map((m) => ({ resourcePreEvent: { metadata: { urn: m } } })),
            hostileText.map((m) => ({ diagnosticEvent: { message: m, severity: "info" } })),
        );
        fc.assert(
            fc.property(
                fc.array(event, { maxLength: 40 }),
                fc.array(fc.integer({ min: 1, max: 97 }), { minLength: 1, maxLength: 10 }),
                (events, sizes) => {
                    const bytes = Buffer.from(events.map((e) => JSON.stringify(e)).join("\n") + "\n");
                    const reader = new EventReader();
                    for (let i = 0, k = 0; i < bytes.length; k++) {
                        const size = sizes[k % sizes.length];
                        reader.push(bytes.subarray(i, i + size));
                        i += size;
                    }
                    assert.deepStrictEqual(
                        reader.end(),
                        events.filter((e) => "policyEvent" in e),
                    );
                },
            ),
            { seed: SEED, numRuns: 200 },
        );
    });
});
