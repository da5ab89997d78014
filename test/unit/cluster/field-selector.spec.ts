/**
 * A name read by a field selector (cluster/client.ts fieldSelectorValue): escaped as the API server unescapes
 * it, so a name with `,`, `=` or `\` (an RBAC object's name may hold them) selects that object alone.
 */
import * as assert from "assert";
import { fieldSelectorValue } from "../../../cluster/client";

describe("cluster/client: fieldSelectorValue", () => {
    it("escapes the selector's separators and its escape, and leaves every other character", () => {
        assert.strictEqual(fieldSelectorValue("x,metadata.name=y"), "x\\,metadata.name\\=y");
        assert.strictEqual(fieldSelectorValue("a\\b"), "a\\\\b");
        assert.strictEqual(fieldSelectorValue("a!=b"), "a!\\=b");
        assert.strictEqual(fieldSelectorValue("system:aggregate-to-admin ü\n"), "system:aggregate-to-admin ü\n");
    });
});
