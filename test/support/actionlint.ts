/**
 * actionlint for the tests that lint GitHub Actions files: built from the Go module proxy into .cache/tools/bin
 * (or PKO_GUARD_TOOLS_BIN) when missing; a reason string when it cannot be built (the caller skips, saying why).
 */
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { REPO_ROOT } from "../../support/paths";

export const ACTIONLINT = "github.com/rhysd/actionlint/cmd/actionlint@v1.7.8";

export function actionlint(): string | { reason: string } {
    const bin = process.env.PKO_GUARD_TOOLS_BIN ?? path.join(REPO_ROOT, ".cache", "tools", "bin");
    const exe = path.join(bin, "actionlint");
    if (fs.existsSync(exe)) return exe;
    const go = spawnSync("go", ["version"], { encoding: "utf8" });
    if (go.status !== 0) return { reason: "go is not installed, so actionlint cannot be built" };
    fs.mkdirSync(bin, { recursive: true });
    const r = spawnSync("go", ["install", ACTIONLINT], {
        encoding: "utf8",
        env: { ...process.env, GOBIN: bin, GOFLAGS: "-mod=mod" },
        timeout: 900000,
    });
    if (r.status !== 0 || !fs.existsSync(exe))
        return { reason: `go install ${ACTIONLINT} failed: ${(r.stderr || "timed out").trim().split("\n").pop()}` };
    return exe;
}
