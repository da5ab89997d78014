/** Where things are: the repository root, the compiled pack entry point, the fixtures. */
import * as fs from "fs";
import * as path from "path";

/** The repository root (the folder with PulumiPolicy.yaml), whether run from source or from bin/. */
export const REPO_ROOT = (() => {
    let dir = __dirname;
    while (!fs.existsSync(path.join(dir, "PulumiPolicy.yaml"))) {
        const up = path.dirname(dir);
        if (up === dir) return path.resolve(__dirname, "..");
        dir = up;
    }
    return dir;
})();

export const PACK_ENTRY = path.join(REPO_ROOT, "bin", "index.js");
export const FIXTURES_DIR = path.join(REPO_ROOT, "fixtures");
