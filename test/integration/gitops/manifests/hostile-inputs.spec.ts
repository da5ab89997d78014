/**
 * Hostile and careless input to `pko-guard check` (issue 19 items 3-6): parser errors that never quote the
 * document, reads bounded by bytes actually read (devices, FIFOs, standard input), non-regular files
 * refused, alias expansion bounded per run, linear field location on the right line, UTF-16 with a
 * byte-order mark decoded as kubectl does, and no fail-open skip in a folder unless --skip-unreadable.
 * Nothing here waits on time: a read that would hang or grow without bound fails the test by its deadline.
 */
import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { loadManifests } from "../../../../gitops/manifests/load";
import { aliasBombConfigMap } from "../../../../harness/hostile-yaml";
import { CLI, assertInert, assertOneLine, pkoGuard, prodStackYaml } from "../../../support/inert";

const CANARY = "canary-s3cr3t-9d1e";

const STACK = prodStackYaml;

describe("hostile input to check (issue 19 items 3-6)", function () {
    this.timeout(180000);
    let tmp: string;
    beforeEach(() => (tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-inputs-"))));
    afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));
    const write = (rel: string, text: string | Buffer) => {
        const f = path.join(tmp, rel);
        fs.mkdirSync(path.dirname(f), { recursive: true });
        fs.writeFileSync(f, text);
        return f;
    };

    describe("item 3: YAML errors give a position and a fixed reason, never the document's text", () => {
        const cases: [string, string, RegExp][] = [
            [
                "an undefined alias",
                `apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData:\n  password: *${CANARY}\n`,
                /:5:\d+: invalid YAML: an alias refers to an anchor that is not defined$/,
            ],
            [
                "an undeclared tag handle",
                `apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData:\n  password: !${CANARY}! x\n`,
                /:5:\d+: invalid YAML: a tag that cannot be resolved$/,
            ],
            [
                "a bad escape",
                `apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData:\n  password: "\\q${CANARY}"\n`,
                /:5:\d+: invalid YAML: an invalid escape sequence$/,
            ],
            [
                "an unclosed flow sequence",
                `apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData:\n  password: [${CANARY}\n`,
                /:5:13: invalid YAML: a flow sequence \("\["\) that is never closed$/,
            ],
            [
                "flow collections nested too deeply",
                `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s}\ndata:\n  k: ${"[".repeat(5000)}${CANARY}${"]".repeat(5000)}\n`,
                /:\d+:\d+: invalid YAML: mappings, sequences or aliases nested too deeply$/,
            ],
        ];
        for (const [what, text, re] of cases) {
            it(what, () => {
                write("s.yaml", text);
                const r = pkoGuard(["check", "s.yaml"], { cwd: tmp });
                assertOneLine(r, new RegExp(`^pko-guard: s\\.yaml${re.source}`));
                assertInert("output", r.stdout + r.stderr, [CANARY]);
            });
        }
    });

    describe("item 4: bounded reads, non-regular files refused", () => {
        it("a device named as a path is refused unread (/dev/zero)", () => {
            assertOneLine(
                pkoGuard(["check", "/dev/zero"], { cwd: tmp, timeout: 60000 }),
                /^pko-guard: \/dev\/zero: not a regular file/,
            );
        });

        it("standard input from a device that never ends is bounded by bytes read", () => {
            const zero = fs.openSync("/dev/zero", "r");
            try {
                const r = spawnSync(process.execPath, [CLI, "check", "-"], {
                    cwd: tmp,
                    stdio: [zero, "pipe", "pipe"],
                    encoding: "utf8",
                    timeout: 120000,
                });
                assertOneLine(
                    { code: r.status, stderr: r.stderr },
                    /^pko-guard: <stdin>: larger than 16 MiB; not read$/,
                );
            } finally {
                fs.closeSync(zero);
            }
        });

        it("standard input over 16 MiB is refused; at the limit it is read", () => {
            const big = Buffer.alloc(16 * 1024 * 1024 + 1, "#");
            assertOneLine(
                pkoGuard(["check", "-"], { cwd: tmp, input: big }),
                /^pko-guard: <stdin>: larger than 16 MiB; not read$/,
            );
            const r = pkoGuard(["check", "-"], {
                cwd: tmp,
                input: Buffer.concat([Buffer.from(STACK("main")), Buffer.alloc(1024, "#")]),
            });
            assert.strictEqual(r.code, 1, r.stderr);
        });

        it("a FIFO, named or found in a folder, is refused without blocking", () => {
            fs.mkdirSync(path.join(tmp, "m"));
            write("m/ok.yaml", STACK("main"));
            const fifo = path.join(tmp, "m", "pipe.yaml");
            assert.strictEqual(spawnSync("mkfifo", [fifo]).status, 0);
            assertOneLine(
                pkoGuard(["check", "m/pipe.yaml"], { cwd: tmp, timeout: 60000 }),
                /^pko-guard: m\/pipe\.yaml: not a regular file/,
            );
            assertOneLine(
                pkoGuard(["check", "m"], { cwd: tmp, timeout: 60000 }),
                /^pko-guard: m\/pipe\.yaml: not a regular file/,
            );
            const skipped = pkoGuard(["check", "m", "--skip-unreadable"], { cwd: tmp, timeout: 60000 });
            assert.strictEqual(skipped.code, 1, skipped.stderr);
            assert.match(skipped.stderr, /^pko-guard: skipped m\/pipe\.yaml: not a regular file/m);
        });

        it("alias expansion is bounded per run: many small alias documents fail like one big one", () => {
            // Each document expands to ~110,000 nodes (under the per-document bound); 24 of them exceed the run's.
            const doc = (n: number) => aliasBombConfigMap(`lol-${n}`, 5);
            write("one.yaml", doc(0));
            assert.strictEqual(pkoGuard(["check", "one.yaml"], { cwd: tmp }).code, 0);
            write("many.yaml", Array.from({ length: 24 }, (_, i) => doc(i)).join("---\n"));
            assertOneLine(
                pkoGuard(["check", "many.yaml"], { cwd: tmp }),
                /^pko-guard: many\.yaml:\d+:1: invalid YAML: aliases in this run expand to more than 1,000,000 extra nodes$/,
            );
        });
    });

    describe("item 5: field location is linear and lands on the right line", () => {
        it("a field path of 50,000 segments through dotted keys", () => {
            const key = Array.from({ length: 25000 }, (_, i) => `k${i}`).join(".");
            write(
                "c.yaml",
                `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations:\n    other: x\n    "${key}":\n      deeper: 1\n`,
            );
            const obj = loadManifests(["c.yaml"], { cwd: tmp }).objects[0];
            assert.deepStrictEqual(obj.locate(`metadata.annotations.${key}`), { line: 7, column: 5 });
            assert.deepStrictEqual(obj.locate(`metadata.annotations.${key}.deeper`), { line: 8, column: 7 });
            const miss = Array.from({ length: 50000 }, () => "spec").join(".");
            assert.deepStrictEqual(obj.locate(miss), { line: 1, column: 1 });
        });

        it("a value quoted in a message is not taken for the field", () => {
            // The branch's name looks like a field path; the finding stays on spec.branch.
            write("s.yaml", STACK(`"spec.stack.${"a.".repeat(20000)}x"`));
            const r = pkoGuard(["check", "s.yaml", "--report", "json=r.json"], { cwd: tmp });
            assert.strictEqual(r.code, 1, r.stderr);
            const rows = JSON.parse(fs.readFileSync(path.join(tmp, "r.json"), "utf8")).projects[0].findings;
            const pinned = rows.find((x: { policy: string }) => x.policy === "pko-stack-prod-pinned-commit");
            assert.strictEqual(pinned.line, 10);
        });
    });

    describe("item 6: decoding as kubectl does, no fail-open skip", () => {
        for (const [name, encode] of [
            ["UTF-16LE", (s: string) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(s, "utf16le")])],
            ["UTF-16BE", (s: string) => Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(s, "utf16le").swap16()])],
            ["UTF-8 with a BOM", (s: string) => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(s)])],
        ] as const) {
            it(`${name} with a byte-order mark is decoded and judged, in a folder and on stdin`, () => {
                write(`m/stack.yaml`, encode(STACK()));
                const r = pkoGuard(["check", "m", "--report", "json=r.json"], { cwd: tmp });
                assert.strictEqual(r.code, 1, r.stderr);
                const rows = JSON.parse(fs.readFileSync(path.join(tmp, "r.json"), "utf8")).projects[0].findings;
                assert.ok(
                    rows.some(
                        (x: { policy: string; line: number }) =>
                            x.policy === "pko-stack-prod-pinned-commit" && x.line === 10,
                    ),
                    JSON.stringify(rows),
                );
                assert.strictEqual(pkoGuard(["check", "-"], { cwd: tmp, input: encode(STACK()) }).code, 1);
            });
        }

        it("Latin-1 (not UTF-8) fails the run, named or in a folder, unless --skip-unreadable", () => {
            write("m/ok.yaml", STACK("main"));
            write("m/latin1.yaml", Buffer.from(`${STACK()}# caf\xe9\n`, "latin1"));
            assertOneLine(
                pkoGuard(["check", "m/latin1.yaml"], { cwd: tmp }),
                /^pko-guard: m\/latin1\.yaml: not UTF-8 text/,
            );
            assertOneLine(pkoGuard(["check", "m"], { cwd: tmp }), /^pko-guard: m\/latin1\.yaml: not UTF-8 text/);
            const r = pkoGuard(["check", "m", "--skip-unreadable"], { cwd: tmp });
            assert.strictEqual(r.code, 1, r.stderr);
            assert.match(r.stderr, /^pko-guard: skipped m\/latin1\.yaml: not UTF-8 text/m);
        });
    });
});
