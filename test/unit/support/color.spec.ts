/** Colour by commander's conventions: a terminal with colours, NO_COLOR and FORCE_COLOR honoured. */
import * as assert from "assert";
import { colorFor, painter } from "../../../support/color";

describe("colour", () => {
    const tty = { isTTY: true, hasColors: () => true };
    it("is on for a terminal that has colours, off elsewhere, as the environment says", () => {
        assert.deepStrictEqual(
            [
                colorFor(tty, {}),
                colorFor({}, {}),
                colorFor({ isTTY: true, hasColors: () => false }, {}),
                colorFor(tty, { NO_COLOR: "1" }),
                colorFor(tty, { NO_COLOR: "" }),
                colorFor({}, { FORCE_COLOR: "1" }),
                colorFor(tty, { FORCE_COLOR: "0" }),
                colorFor({}, { CLICOLOR_FORCE: "1" }),
            ],
            [true, false, false, false, true, true, false, true],
        );
    });

    it("paints only when on", () => {
        assert.strictEqual(painter(true)("red", "x"), "\u001b[31mx\u001b[39m");
        assert.strictEqual(painter(false)("red", "x"), "x");
    });
});
