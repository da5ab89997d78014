/**
 * The mock leg re-creates part of the Pulumi engine around SDK internals (harness/legs/engine-surface.ts), and the
 * real leg is the oracle it is compared with. The pair of versions they were last compared on is recorded there:
 * this spec fails when the installed @pulumi/pulumi or the toolchain's pinned Pulumi CLI moves away from it, so that
 * neither moves without the legs being compared again.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { REPO_ROOT } from "../../../../support/paths";
import { COMPARED } from "../../../../harness/legs/engine-surface";

const AGAIN =
    "compare the legs again (npm run setup, then npm run harness -- --leg both: every fixture must match in both), " +
    "check the interfaces of harness/legs/engine-surface.ts against the SDK, then record the pair in its COMPARED";

describe("the mock leg's contract with the Pulumi SDK", () => {
    it("was compared with the real leg on the installed @pulumi/pulumi", () => {
        const file = path.join(REPO_ROOT, "node_modules", "@pulumi", "pulumi", "package.json");
        const installed = (JSON.parse(fs.readFileSync(file, "utf8")) as { version: string }).version;
        assert.strictEqual(
            installed,
            COMPARED.sdk,
            `@pulumi/pulumi is ${installed}, the legs were last compared on ${COMPARED.sdk}: ${AGAIN}`,
        );
    });

    it("was compared with the real leg on the toolchain's pinned Pulumi CLI", () => {
        const script = fs.readFileSync(path.join(REPO_ROOT, "toolchain", "install.sh"), "utf8");
        const pinned = /^PULUMI_VERSION="([^"]+)"/m.exec(script)?.[1];
        assert.ok(pinned, "toolchain/install.sh sets no PULUMI_VERSION");
        assert.strictEqual(
            pinned,
            COMPARED.cli,
            `toolchain/install.sh pins the Pulumi CLI ${pinned}, the legs were last compared on ${COMPARED.cli}: ${AGAIN}`,
        );
    });
});
