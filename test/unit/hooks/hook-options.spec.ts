/**
 * The pre-commit hook tells check's options from the folders to judge by the options that take a value: its list
 * is exactly check's, so an option added to check (or its value) is never taken for a folder.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { command } from "../../../cli/check";
import { REPO_ROOT } from "../../../support/paths";

describe("the pre-commit hook's arguments", () => {
    it("knows every option of check that takes a value, and no other", () => {
        const script = fs.readFileSync(path.join(REPO_ROOT, "hooks", "pko-guard-check.sh"), "utf8");
        const listed = /^takes_value=" (.*) "$/m.exec(script)?.[1].split(" ") ?? [];
        const sink = { write: () => true };
        const check = command({ term: { out: sink, err: sink, env: {} }, code: 0 });
        const valued = check.options.filter((o) => o.required || o.optional).map((o) => o.long ?? "");
        assert.deepStrictEqual([...listed].sort(), [...valued].sort());
    });
});
