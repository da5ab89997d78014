/**
 * `pko-guard test --update`: expectations rewritten from the current verdicts, for review by diff.
 * Each expect.yaml is edited as text at the places the YAML parser locates, so comments, quoting and order stay as
 * written. A fixture whose legs disagree or did not run is left as it is and said; a message pattern that no
 * longer matches is kept and said (a person wrote it).
 */
import * as fs from "fs";
import * as path from "path";
import * as YAML from "yaml";
import { Row } from "../evaluation/rows";
import { BadInputError } from "../support/errors";
import { discoverFixtures } from "./expect";
import { corpusEntries, updateCorpusEntry } from "./corpus";
import { RunOptions, loadFixtures, runFixtures } from "./runner";

/** What the fixture's legs report, by policy and resource: the count and the level all of them share. */
interface Observed {
    policy: string;
    resource: string;
    count: number;
    level?: "mandatory" | "advisory";
    messages: string[];
}

export interface UpdateResult {
    /** Files rewritten. */
    updated: string[];
    /** Files whose expectations already held. */
    unchanged: number;
    /** Fixtures left as they are, and why (legs that disagree or failed). */
    left: string[];
    /** Message patterns that no longer match, to review. */
    review: string[];
}

const key = (policy: string, resource: string) => `${policy}\u0000${resource}`;

function observed(rows: Row[]): Map<string, Observed> {
    const groups = new Map<string, Observed>();
    for (const r of rows) {
        const k = key(r.policy, r.resource);
        const g = groups.get(k) ?? { policy: r.policy, resource: r.resource, count: 0, messages: [] };
        g.count++;
        g.messages.push(r.message);
        const level = r.level === "mandatory" || r.level === "advisory" ? r.level : undefined;
        g.level = g.count === 1 ? level : g.level === level ? level : undefined;
        groups.set(k, g);
    }
    return groups;
}

function sameCounts(a: Map<string, Observed>, b: Map<string, Observed>): boolean {
    return a.size === b.size && [...a].every(([k, g]) => b.get(k)?.count === g.count);
}

/** One text edit: replace [from, to) with `text`. */
interface Edit {
    from: number;
    to: number;
    text: string;
}

/** The offset of the start of the line holding `at`, and of the line after the one holding `end - 1`. */
function lineSpan(text: string, at: number, end: number): [number, number] {
    const from = text.lastIndexOf("\n", at - 1) + 1;
    const nl = text.indexOf("\n", Math.max(at, end - 1));
    return [from, nl < 0 ? text.length : nl + 1];
}

function scalar(v: string | number): string {
    return YAML.stringify(v, { lineWidth: 0 }).trimEnd();
}

/** An entry in block style, its dash at `indent` columns. */
function entryText(g: Observed & { message?: string }, indent: number, eol: string): string {
    const pad = " ".repeat(indent);
    const lines = [
        `${pad}- policy: ${scalar(g.policy)}`,
        `${pad}  resource: ${scalar(g.resource)}`,
        `${pad}  count: ${g.count}`,
        ...(g.message !== undefined ? [`${pad}  message: ${scalar(g.message)}`] : []),
        ...(g.level ? [`${pad}  level: ${g.level}`] : []),
    ];
    return lines.map((l) => l + eol).join("");
}

const byKey = (a: Observed, b: Observed) => (key(a.policy, a.resource) < key(b.policy, b.resource) ? -1 : 1);

/**
 * The edits that make the sequence at `at` (a fixture's or a profile's violations) say what `groups` holds; notes
 * for message patterns that no longer match. A block sequence is edited in place; a flow one (`[]`) that changes
 * is written again in block style below its key.
 */
function violationEdits(
    text: string,
    doc: YAML.Document.Parsed,
    at: string[],
    groups: Map<string, Observed>,
    notes: string[],
    shown: string,
): Edit[] {
    const seq = doc.getIn(at, true);
    if (!YAML.isSeq(seq) || !seq.range) return [];
    const eol = text.includes("\r\n") ? "\r\n" : "\n";
    const edits: Edit[] = [];
    const listed = new Set<string>();
    /** The entries the sequence will hold, in order (a flow sequence is written from them). */
    const kept: (Observed & { message?: string })[] = [];
    let changed = false;
    let indent = -1;
    let after = -1;
    for (const item of seq.items) {
        if (!YAML.isMap(item) || !item.range) continue;
        const policy = String(item.get("policy"));
        const resource = String(item.get("resource"));
        const g = groups.get(key(policy, resource));
        const [lineFrom, lineTo] = lineSpan(text, item.range[0], item.range[1]);
        if (indent < 0) indent = Math.max(0, item.range[0] - lineFrom - 2);
        after = lineTo;
        listed.add(key(policy, resource));
        if (!g) {
            changed = true;
            edits.push({ from: lineFrom, to: lineTo, text: "" });
            continue;
        }
        const message = item.get("message");
        const level = item.get("level", true);
        const count = item.get("count", true);
        const written = YAML.isScalar(level) ? level.value : undefined;
        const newLevel = written !== undefined && g.level ? g.level : written;
        kept.push({
            ...g,
            level: newLevel as Observed["level"],
            message: typeof message === "string" ? message : undefined,
        });
        if (YAML.isScalar(count) && count.range && count.value !== g.count) {
            changed = true;
            edits.push({ from: count.range[0], to: count.range[1], text: String(g.count) });
        }
        if (YAML.isScalar(level) && level.range && g.level && level.value !== g.level) {
            changed = true;
            edits.push({ from: level.range[0], to: level.range[1], text: g.level });
        }
        if (typeof message === "string" && !g.messages.every((m) => new RegExp(message).test(m)))
            notes.push(`${shown}: the message pattern of ${policy} on ${resource} no longer matches: review it`);
    }
    const added = [...groups.values()].filter((g) => !listed.has(key(g.policy, g.resource))).sort(byKey);
    if (!changed && added.length === 0) return [];
    if (seq.flow) {
        const keyFrom = text.lastIndexOf("\n", seq.range[0] - 1) + 1;
        const keyIndent = /^ */.exec(text.slice(keyFrom))![0].length;
        const entries = [...kept, ...added];
        const block = entries.map((g) => entryText(g, keyIndent + 2, eol)).join("");
        if (entries.length === 0) return [{ from: seq.range[0], to: seq.range[1], text: "[]" }];
        // the block starts on the key's next line: the spaces before `[` go too
        let from = seq.range[0];
        while (from > 0 && text[from - 1] === " ") from--;
        return [{ from, to: seq.range[1], text: eol + block.slice(0, -eol.length) }];
    }
    if (kept.length === 0 && added.length === 0) {
        // Every entry removed: an empty sequence after the key.
        const parent = doc.getIn(at.slice(0, -1), true);
        const pair = YAML.isMap(parent)
            ? parent.items.find((p) => YAML.isScalar(p.key) && p.key.value === at.at(-1))
            : undefined;
        const keyEnd = (pair?.key as YAML.Node | undefined)?.range?.[1];
        if (keyEnd === undefined) return edits;
        return [{ from: text.indexOf(":", keyEnd) + 1, to: after, text: ` []${eol}` }];
    }
    if (added.length > 0)
        edits.push({ from: after, to: after, text: added.map((g) => entryText(g, indent, eol)).join("") });
    return edits;
}

function applyEdits(text: string, edits: Edit[]): string {
    let out = text;
    for (const e of [...edits].sort((a, b) => b.from - a.from)) out = out.slice(0, e.from) + e.text + out.slice(e.to);
    return out;
}

/** The rows every leg of the fixture that ran agrees on, or why there are none to take. */
function agreedRows(legs: Awaited<ReturnType<typeof runFixtures>>[number]["legs"]) {
    const ran = legs.filter((l) => l.status === "ran");
    const failed = legs.find((l) => l.status === "error");
    if (failed && failed.status === "error") return { why: `the ${failed.leg} leg failed: ${failed.message}` };
    if (ran.length === 0) return { why: "no leg ran it" };
    const rows = ran.map((l) => (l.status === "ran" ? l.rows : []));
    const groups = rows.map(observed);
    if (!groups.every((g) => sameCounts(g, groups[0])))
        return { why: `its legs disagree (${ran.map((l) => l.leg).join(", ")}): compare them first` };
    return { rows: rows[0] };
}

/**
 * The text of an expectation file whose violations (`violations`, or `profiles.<name>.violations`) say what the
 * rows of each verdict hold; message patterns that no longer match are added to `review`.
 */
export function updatedExpectText(
    text: string,
    verdicts: { at: string[]; rows: Row[] }[],
    review: string[] = [],
    shown = "expect.yaml",
): string {
    const doc = YAML.parseDocument(text);
    return applyEdits(
        text,
        verdicts.flatMap((v) => violationEdits(text, doc, v.at, observed(v.rows), review, shown)),
    );
}

/** Rewrites the expectations of the fixtures and corpus entries under `paths` from a run of `run.leg`. */
export async function updateExpectations(
    paths: string[],
    load: Parameters<typeof loadFixtures>[1],
    run: RunOptions,
): Promise<UpdateResult> {
    const corpus = paths.flatMap(corpusEntries);
    const fixturePaths = paths.filter((p) =>
        fs.existsSync(path.join(p, "expect.yaml"))
            ? true
            : corpusEntries(p).length === 0 && discoverFixtures(p).length > 0,
    );
    if (corpus.length === 0 && fixturePaths.length === 0)
        throw new BadInputError("no fixtures or corpus entries found");
    const result: UpdateResult = { updated: [], unchanged: 0, left: [], review: [] };
    const fixtures = fixturePaths.length > 0 ? loadFixtures(fixturePaths, load) : [];
    const verdicts = fixtures.length > 0 ? await runFixtures(fixtures, run) : [];
    const byFile = new Map<string, { at: string[]; rows: Row[] }[]>();
    fixtures.forEach((fixture, i) => {
        const file = fixture.expectFile!;
        const agreed = agreedRows(verdicts[i].legs);
        if (!("rows" in agreed) || !agreed.rows) {
            result.left.push(`${file}: ${fixture.name} not updated: ${agreed.why}`);
            return;
        }
        const profile = fixture.name.includes("@") ? fixture.name.slice(fixture.name.indexOf("@") + 1) : undefined;
        const at = profile === undefined ? ["violations"] : ["profiles", profile, "violations"];
        byFile.set(file, [...(byFile.get(file) ?? []), { at, rows: agreed.rows }]);
    });
    for (const [file, found] of byFile) {
        const before = fs.readFileSync(file, "utf8");
        const after = updatedExpectText(before, found, result.review, file);
        if (after === before) {
            result.unchanged++;
            continue;
        }
        fs.writeFileSync(file, after);
        result.updated.push(file);
    }
    for (const dir of corpus) {
        if (await updateCorpusEntry(dir)) result.updated.push(path.join(dir, "corpus.json"));
        else result.unchanged++;
    }
    return result;
}
