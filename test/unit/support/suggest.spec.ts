/** "Did you mean": the names nearest to what was typed, or the few that hold it; nothing when nothing is near. */
import * as assert from "assert";
import { didYouMean, editDistance, suggest } from "../../../support/suggest";

const RULES = [
    "pko-stack-resync-floor",
    "pko-stack-prod-refresh",
    "pko-stack-prod-pinned-commit",
    "pko-stack-name-length",
    "pko-stack-auth-delegator",
    "rbac-x",
];

describe("suggestions", () => {
    it("measures edits, a swap of neighbours as one", () => {
        assert.deepStrictEqual(
            [
                editDistance("chek", "check"),
                editDistance("chcek", "check"),
                editDistance("", "ab"),
                editDistance("a", "a"),
            ],
            [1, 1, 2, 0],
        );
    });

    it("suggests the nearest names, else the few that hold what was typed, else none", () => {
        assert.deepStrictEqual(suggest("pko-stack-resync-flor", RULES), ["pko-stack-resync-floor"]);
        assert.deepStrictEqual(suggest("pinned-commit", RULES), ["pko-stack-prod-pinned-commit"]);
        assert.deepStrictEqual(suggest("prod", RULES), ["pko-stack-prod-refresh", "pko-stack-prod-pinned-commit"]);
        assert.deepStrictEqual(suggest("stack", RULES), [], "held by too many");
        assert.deepStrictEqual(suggest("zzz", RULES), []);
        assert.strictEqual(didYouMean("rbac-y", RULES), " (did you mean rbac-x?)");
        assert.strictEqual(didYouMean("nothing-like-it", RULES), "");
    });
});
