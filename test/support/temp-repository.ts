/**
 * A temporary repository root for the tests of one `describe` (made before each test, removed after it) and the
 * render contexts that read it, as check builds them (gitops/render/render.ts RenderContext).
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { RenderContext } from "../../gitops/render/render";

export interface TempRepository {
    /** The root of this test's repository (its real path). */
    readonly root: string;
    /** A render context over `repoRoot` (default: the root), with a minute's deadline and `more` on top. */
    context(repoRoot?: string, more?: Partial<RenderContext>): RenderContext;
}

/** Registers the hooks that make and remove the repository; call it inside a `describe`. */
export function tempRepository(name: string): TempRepository {
    let root = "";
    beforeEach(() => {
        root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `pko-guard-${name}-`)));
    });
    afterEach(() => fs.rmSync(root, { recursive: true, force: true }));
    return {
        get root() {
            return root;
        },
        context: (repoRoot = root, more = {}) => ({
            deadline: Date.now() + 60_000,
            repoRoot,
            show: (abs) => path.relative(repoRoot, abs),
            scratch: {},
            ...more,
        }),
    };
}
