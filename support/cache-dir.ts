/**
 * The user's cache folder for pko-guard: what outlives one run and one install (built toolchain, verified prebuilt
 * tools, fetched sources).
 * Shared by every project of the user, so a reinstall reuses it, and every command asks here, so one variable moves all
 * of it: `PKO_GUARD_CACHE_DIR`, else `$XDG_CACHE_HOME/pko-guard` (only if absolute, per the XDG rule), else
 * `~/.cache/pko-guard`.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";

/** The environment variable that names the cache folder. */
export const CACHE_DIR_ENV = "PKO_GUARD_CACHE_DIR";

/** The user's cache folder (not created): PKO_GUARD_CACHE_DIR, else $XDG_CACHE_HOME/pko-guard, else ~/.cache/pko-guard. */
export function userCacheDir(env: NodeJS.ProcessEnv = process.env, home: string = os.homedir()): string {
    const named = env[CACHE_DIR_ENV];
    if (named) return path.resolve(named);
    const xdg = env.XDG_CACHE_HOME;
    if (xdg && path.isAbsolute(xdg)) return path.join(xdg, "pko-guard");
    return path.join(home, ".cache", "pko-guard");
}

/** A folder inside the user's cache (`parts` joined below it), created with its parents, private to the user. */
export function ensureCacheDir(...parts: string[]): string {
    const dir = path.join(userCacheDir(), ...parts);
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    return dir;
}
