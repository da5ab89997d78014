/**
 * Helm parameters reach `helm template` as Argo CD passes them (argo-cd util/helm/cmd.go): commas escaped unless
 * already escaped, a `{a,b}` list kept, `forceString` as `--set-string`, file parameters as `--set-file`, the
 * last of a repeated name winning.
 */
import * as assert from "assert";
import { cleanSetParameter, setArgs } from "../../../../gitops/render/helm";

describe("Helm parameters as Argo CD escapes them", () => {
    it("escapes each comma not already preceded by a backslash, and nothing else", () => {
        assert.strictEqual(cleanSetParameter("a,destroyOnFinalize=true"), "a\\,destroyOnFinalize=true");
        assert.strictEqual(cleanSetParameter("a,b,c"), "a\\,b\\,c");
        assert.strictEqual(cleanSetParameter("a\\,b"), "a\\,b");
        assert.strictEqual(cleanSetParameter("C:\\path"), "C:\\path");
        assert.strictEqual(cleanSetParameter("{a,b}"), "{a,b}");
        assert.strictEqual(cleanSetParameter("{a,b"), "{a\\,b");
        assert.strictEqual(cleanSetParameter(""), "");
    });
    it("builds --set, --set-string and --set-file in Argo CD's order, one value a name", () => {
        assert.deepStrictEqual(
            setArgs({
                parameters: [
                    { name: "tag", value: "a,destroyOnFinalize=true" },
                    { name: "port", value: "8080", forceString: true },
                    { name: "tag", value: "v2" },
                ],
                fileParameters: [{ name: "cfg", path: "/r/c,d.txt" }],
            }),
            ["--set", "tag=v2", "--set-string", "port=8080", "--set-file", "cfg=/r/c\\,d.txt"],
        );
        assert.deepStrictEqual(setArgs({ parameters: [{ name: "tag", value: "a,b" }] }), ["--set", "tag=a\\,b"]);
        assert.deepStrictEqual(setArgs({}), []);
    });
});
