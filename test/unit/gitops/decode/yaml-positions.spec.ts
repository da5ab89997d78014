/**
 * The fast positions (gitops/decode/yaml-positions.ts: js-yaml's parse events) equal the exact path's (the `yaml`
 * package's node tree) wherever the fast ones answer: on every document of the decoding corpus, on generated
 * manifest repositories (the benchmark's and the peer comparison's), and on generated block and flow documents
 * with odd keys, comments, quoting, block scalars and empty values. And they answer for ordinary manifests.
 */
import * as assert from "assert";
import fc from "fast-check";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as jsyaml from "js-yaml";
import * as YAML from "yaml";
import { KubeYamlError, decodeKubeYaml, decodeOptions } from "../../../../gitops/decode/kube-yaml";
import { ParseLog, PosNode, fromYamlNode } from "../../../../gitops/decode/yaml-positions";
import { generate } from "../../../../bench/check-speed";
import { writeRepository } from "../../../../bench/peers/peer-manifests";
import { REPO_ROOT } from "../../../../support/paths";

const CORPUS = path.join(REPO_ROOT, "test", "data", "kube-yaml-corpus");
const RUNS = Number(process.env.PKO_GUARD_PROPERTY_RUNS ?? 1000);
const OPTIONS = { schema: jsyaml.FAILSAFE_SCHEMA, json: true };

/** A tree of positions as plain objects (every entry and item read), as the tests compare them. */
function plainPositions(n: PosNode | undefined): PosNode | undefined {
    if (!n) return undefined;
    if (n.entries)
        return {
            start: n.start,
            entries: n.entries.map((e) =>
                e.value
                    ? { key: e.key, keyStart: e.keyStart, value: plainPositions(e.value)! }
                    : { key: e.key, keyStart: e.keyStart },
            ),
        };
    if (n.items) return { start: n.start, items: n.items.map((i) => plainPositions(i)!) };
    return { start: n.start };
}

/** The fast positions of one document chunk on its own (its own parse, recorded as the decoder records its parse). */
function fastPositions(chunk: string, offset: number, options: jsyaml.LoadOptions): PosNode | undefined {
    const log = new ParseLog();
    const mark = log.begin(chunk);
    try {
        jsyaml.load(chunk, { ...options, listener: log.listener });
    } catch {
        return undefined;
    }
    log.end();
    return plainPositions(log.positions(mark, chunk, offset));
}

/** Every document of a stream: [fast positions or undefined, exact positions]. */
function both(text: string): { fast: ReturnType<typeof fastPositions>; exact: ReturnType<typeof fromYamlNode> }[] {
    const out: { fast: ReturnType<typeof fastPositions>; exact: ReturnType<typeof fromYamlNode> }[] = [];
    let offset = 0;
    for (const chunk of text.split(/^---[ \t]*$/m)) {
        const doc = YAML.parseAllDocuments(chunk, {
            version: "1.1",
            schema: "failsafe",
            uniqueKeys: false,
            prettyErrors: false,
            strict: false,
        });
        const first = Array.isArray(doc) ? doc[0] : undefined;
        if (first && first.errors.length === 0) {
            const exact = fromYamlNode(first.contents);
            const shifted =
                exact &&
                JSON.parse(JSON.stringify(exact), (k, v) => (k === "start" || k === "keyStart" ? v + offset : v));
            out.push({ fast: fastPositions(chunk, offset, OPTIONS), exact: shifted });
        }
        offset += chunk.length + 3;
    }
    return out;
}

function agree(text: string, label: string): number {
    let answered = 0;
    for (const { fast, exact } of both(text)) {
        if (fast === undefined) continue;
        answered++;
        assert.deepStrictEqual(fast, exact, label);
    }
    return answered;
}

/**
 * Every document's positions as the decoder gives them, with its fast path on or off; undefined when the stream
 * does not decode. An empty or null document's are never read (it holds no object) and left out: the fast path
 * gives a `null` scalar's start, the exact path none.
 */
function decoderPositions(text: string, fastPath: boolean): unknown[] | undefined {
    decodeOptions.fastPath = fastPath;
    try {
        return decodeKubeYaml(text).map((d) => (d.value === null ? "empty" : plainPositions(d.positions)));
    } catch (e) {
        if (e instanceof KubeYamlError) return undefined;
        throw e;
    } finally {
        decodeOptions.fastPath = true;
    }
}

/** The decoder's positions (recorded while it decodes with the fast path) are the exact path's, for a whole stream. */
function decoderAgrees(text: string, label: string): void {
    assert.deepStrictEqual(decoderPositions(text, true), decoderPositions(text, false), label);
}

/** Manifest files of generated repositories (the benchmark's and the peer comparison's). */
function withGeneratedFiles(use: (files: string[]) => void): void {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-positions-"));
    try {
        const files: string[] = [];
        const walk = (d: string) =>
            fs
                .readdirSync(d, { withFileTypes: true })
                .forEach((e) => (e.isDirectory() ? walk(path.join(d, e.name)) : files.push(path.join(d, e.name))));
        walk(generate(tmp, 100, 5, false));
        writeRepository(path.join(tmp, "peers"), 300);
        walk(path.join(tmp, "peers"));
        use(files);
    } finally {
        fs.rmSync(tmp, { recursive: true, force: true });
    }
}

describe("fast document positions (gitops/decode/yaml-positions.ts) equal the exact path's", function () {
    this.timeout(120000);

    it("on every document of the decoding corpus", () => {
        for (const f of fs.readdirSync(CORPUS)) agree(fs.readFileSync(path.join(CORPUS, f), "utf8"), f);
    });

    it("on generated manifest repositories, answering for every document", () => {
        withGeneratedFiles((files) => {
            for (const f of files) {
                const text = fs.readFileSync(f, "utf8");
                const docs = both(text).length;
                assert.strictEqual(agree(text, f), docs, `${f}: the fast positions answer for all ${docs} documents`);
            }
        });
    });

    it("through the decoder (positions recorded while it decodes), on every stream of the corpus and of generated repositories", () => {
        for (const f of fs.readdirSync(CORPUS)) decoderAgrees(fs.readFileSync(path.join(CORPUS, f), "utf8"), f);
        withGeneratedFiles((files) => {
            for (const f of files) decoderAgrees(fs.readFileSync(f, "utf8"), f);
        });
    });

    it("keys over several lines (flow mappings) are left to the exact path", () => {
        for (const text of ["{a\n b: 1, c: 2}\n", '{"a\\nb": 1}\n', "x: {p\n  q: [1]}\n", "- {'k\n\n  l': v}\n"]) {
            agree(text, JSON.stringify(text));
            decoderAgrees(text, JSON.stringify(text));
        }
    });

    it("one parse log for many documents: each document's positions from its own mark, after documents dropped", () => {
        const docs = [
            "a: 1\nb:\n  c: [x, {'d.e': 2}]\n",
            "- 1\n- k: v\n  'q': \"w\"\n",
            "x: [unclosed\n",
            "{p: q, r: [1, 2]}\n",
            '"k": {"n": [true]}\n',
        ];
        const log = new ParseLog();
        const marks: (number | undefined)[] = [];
        const begun: number[] = [];
        for (const text of docs) {
            const mark = log.begin(text);
            begun.push(mark);
            try {
                jsyaml.load(text, { ...OPTIONS, listener: log.listener });
                marks.push(mark);
            } catch {
                log.drop(mark); // as the decoder does with a document js-yaml refuses
                marks.push(undefined);
            }
        }
        log.end();
        assert.strictEqual(marks[2], undefined, "the unclosed document is refused");
        assert.strictEqual(
            begun[3],
            begun[2],
            "the refused document's events are dropped: the next one is recorded in their place",
        );
        docs.forEach((text, i) => {
            if (marks[i] === undefined) return;
            const exact = fromYamlNode(YAML.parseDocument(text, { version: "1.1", schema: "failsafe" }).contents);
            assert.ok(exact);
            assert.deepStrictEqual(
                plainPositions(log.positions(marks[i]!, text, 7)),
                JSON.parse(JSON.stringify(exact), (k, v) => (k === "start" || k === "keyStart" ? v + 7 : v)),
                text,
            );
        });
    });

    it("through the decoder: a document's positions are the same with the fast path on and off", () => {
        const text =
            "a: 1\nmetadata:\n  name: x  # c\n  labels: {k.x/y: v, 'q': \"w\"}\nitems:\n- name: a\n  v: [1, 2]\n-   b\n- |\n  text\n";
        const fast = decodeKubeYaml(text).map((d) => plainPositions(d.positions));
        decodeOptions.fastPath = false;
        try {
            assert.deepStrictEqual(
                decodeKubeYaml(text).map((d) => plainPositions(d.positions)),
                fast,
            );
        } finally {
            decodeOptions.fastPath = true;
        }
    });

    it("on generated documents: block and flow collections, quoted and dotted keys, comments, block scalars, empty values", () => {
        const key = fc.oneof(
            fc.constantFrom("a", "b.c", "x/y", "'q k'", '"d.q"', "k-1", "true", "10", "n"),
            fc.stringMatching(/^[a-z][a-z0-9.\-/]{0,6}$/),
        );
        const scalar = fc.constantFrom(
            "v",
            "'s'",
            '"d"',
            "1",
            "yes",
            "",
            "~",
            "null",
            "x y",
            "# c",
            "[]",
            "{}",
            "[1, 'a']",
            "{k: v}",
            "|\n  lit\n  lines",
            ">-\n  folded",
        );
        const doc = fc.letrec((tie) => ({
            node: fc.oneof(
                { depthSize: "small" },
                scalar.map((s) => ({ s })),
                tie("map"),
                tie("seq"),
            ),
            map: fc.array(fc.tuple(key, tie("node")), { minLength: 1, maxLength: 4 }).map((pairs) => ({ pairs })),
            seq: fc.array(tie("node"), { minLength: 1, maxLength: 3 }).map((items) => ({ items })),
        }));
        type N = { s?: string; pairs?: [string, N][]; items?: N[] };
        const render = (n: N, indent: string): string => {
            if (n.s !== undefined) return n.s.replace(/\n/g, `\n${indent}`);
            if (n.pairs)
                return n.pairs
                    .map(
                        ([k, v]) =>
                            `${k}:${v.s !== undefined ? (v.s === "" ? "" : " " + render(v, indent + "  ")) : "\n" + indent + "  " + render(v, indent + "  ")}`,
                    )
                    .join(`\n${indent}`);
            return n.items!.map((v) => `- ${render(v, indent + "  ")}`).join(`\n${indent}`);
        };
        let answered = 0;
        fc.assert(
            fc.property(doc.map as fc.Arbitrary<N>, fc.constantFrom("", "# head\n", "\n\n"), (n, head) => {
                const text = head + render(n, "") + "\n";
                answered += agree(text, JSON.stringify(text));
            }),
            { numRuns: RUNS },
        );
        // The comparison is not vacuous: the fast positions answer for most generated documents.
        assert.ok(answered > RUNS / 3, `the fast positions answered for ${answered} of ${RUNS}`);
        // Streams of such documents through the decoder, which records its one parse of each.
        fc.assert(
            fc.property(fc.array(doc.map as fc.Arbitrary<N>, { minLength: 1, maxLength: 4 }), (ns) => {
                const text = ns.map((n) => render(n, "") + "\n").join("---\n");
                decoderAgrees(text, JSON.stringify(text));
            }),
            { numRuns: Math.ceil(RUNS / 4) },
        );
    });
});
