import * as assert from "assert";
import { tagsOf } from "../../../../gitops/fetch/git-semver";

describe("git-semver tagsOf", () => {
    it("reads tag names from `git ls-remote --tags --refs`, skipping lines of any other shape", () => {
        const sha = "2b0889718d3e63feeb6079ccd5e4488d8601e353";
        const listing = [
            `${sha}\trefs/tags/v1.0.0`,
            `${sha}\trefs/tags/release/v2.0.0`,
            `${sha}\trefs/heads/main`,
            `${sha}\trefs/tags/v1.1.0^{}`,
            "warning: redirecting to https://example.com/x.git/",
            "",
            `${"a".repeat(64)}\trefs/tags/sha256-repo`,
        ].join("\n");
        assert.deepStrictEqual(tagsOf(listing), ["v1.0.0", "release/v2.0.0", "sha256-repo"]);
    });
});
