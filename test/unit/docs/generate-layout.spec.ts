/**
 * docs/contributing/architecture.md's module list is generated from the code (docs/generate-layout.ts, `npm run docs`): the
 * committed page is what the generator renders now, every module has a header to render, and a sentence ends where
 * a reader's would.
 */
import * as assert from "assert";
import * as fs from "fs";
import { ARCHITECTURE, firstSentence, renderLayout, withLayout } from "../../../docs/generate-layout";

describe("the layout of docs/contributing/architecture.md (docs/generate-layout.ts)", () => {
    it("is what the generator renders from the modules' headers now", () => {
        const page = fs.readFileSync(ARCHITECTURE, "utf8");
        assert.ok(
            page === withLayout(page),
            "docs/contributing/architecture.md's module list is stale: run `npm run docs` and commit the result",
        );
    });

    it("lists every module, each with its header's first sentence (a module without a header fails, named)", () => {
        assert.doesNotThrow(() => renderLayout());
        assert.match(renderLayout(), /^- `parallel\.ts`: `check`'s one flow: /m);
    });

    it("ends a sentence at a full stop before the next sentence, not inside e.g. or a version", () => {
        assert.strictEqual(
            firstSentence("/**\n * Reads v2.9.0 files, e.g. CRDs. Then more.\n */\n"),
            "Reads v2.9.0 files, e.g. CRDs.",
        );
        assert.strictEqual(firstSentence("#!/usr/bin/env node\n/** One line */\n"), "One line");
        assert.strictEqual(firstSentence("// a line comment\nconst x = 1;\n"), undefined);
    });
});
