/**
 * docs/cluster.md says what the door's code does: the options its Usage gives `webhook` and `audit` are exactly
 * the options their commands take (read from the commands' own help), every option the page names elsewhere is
 * one of them, and every metric the webhook serves is named on the page (and no other).
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { main } from "../../../cli/program";
import { Terminal } from "../../../cli/guide";
import { REPO_ROOT } from "../../../support/paths";

const PAGE = fs.readFileSync(path.join(REPO_ROOT, "docs", "cluster.md"), "utf8");

/** The long options a command's help lists. */
async function helpOptions(command: string): Promise<Set<string>> {
    let text = "";
    const out = { write: (t: string) => ((text += t), true) };
    const term: Terminal = { out, err: out, env: {} };
    assert.strictEqual(await main(["help", command], term), 0);
    const options = text.slice(text.indexOf("Options:"));
    const declared = [...options.matchAll(/^ {2}(?:-[a-zA-Z], )?(--[a-z][a-z-]*)/gm)].map((m) => m[1]);
    return new Set(declared.filter((o) => o !== "--help"));
}

/** The long options the page's Usage block gives `npx pko-guard <command>` (its continuation lines included). */
function usageOptions(command: string): Set<string> {
    const usage = PAGE.slice(PAGE.indexOf("## Usage"), PAGE.indexOf("## How the webhook decides"));
    const lines = usage.split("\n");
    const start = lines.findIndex((l) => l.startsWith(`npx pko-guard ${command} `));
    assert.ok(start >= 0, `no usage of ${command}`);
    let end = start + 1;
    while (end < lines.length && /^\s/.test(lines[end])) end++;
    const mine = lines.slice(start, end);
    return new Set([...mine.join(" ").matchAll(/--[a-z][a-z-]*/g)].map((m) => m[0]));
}

describe("docs/cluster.md", () => {
    for (const command of ["webhook", "audit"])
        it(`gives ${command} exactly the options its command takes`, async () => {
            const taken = await helpOptions(command);
            assert.deepStrictEqual([...usageOptions(command)].sort(), [...taken].sort());
        });

    it("names no option of the door that does not exist", async () => {
        const known = new Set([...(await helpOptions("webhook")), ...(await helpOptions("audit"))]);
        // Flags of other programs the page shows (kube-apiserver, kubectl, docker, openssl) are theirs.
        const theirs = new Set([
            "--admission-control-config-file",
            "--use-service-account-credentials",
            "--server-side",
        ]);
        const named = [...PAGE.matchAll(/`(--[a-z][a-z-]*)/g)].map((m) => m[1]).filter((o) => !theirs.has(o));
        assert.deepStrictEqual(
            named.filter((o) => !known.has(o)),
            [],
        );
    });

    it("names every metric the webhook serves, and no other", () => {
        const sources = fs
            .readdirSync(path.join(REPO_ROOT, "cluster"))
            .map((f) => fs.readFileSync(path.join(REPO_ROOT, "cluster", f), "utf8"))
            .join("\n");
        const names = (t: string) => [...new Set([...t.matchAll(/pko_guard_[a-z_]+/g)].map((m) => m[0]))].sort();
        assert.ok(names(sources).length >= 10);
        assert.deepStrictEqual(names(PAGE), names(sources));
    });
});
