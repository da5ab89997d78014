/**
 * `check`'s network options, in one place: `--offline`, `--allow-host HOST[:PORT]` (repeatable; `allow-hosts:` in
 * `.pko-guard.yaml`), `--cache-dir DIR` and `--refresh`. The policy they make for the run is
 * gitops/fetch/network-policy.ts runFetchPolicy; by default check fetches what Argo CD's repo server fetches, under it.
 */
import { Command } from "commander";
import { FetchFlags, defaultCacheDir } from "../gitops/fetch/network-policy";

/** The network flags of the command line's options. */
export function fetchFlags(o: {
    offline?: boolean;
    allowHost?: string[];
    cacheDir?: string;
    refresh?: boolean;
}): FetchFlags {
    return { offline: o.offline, allowHost: o.allowHost ?? [], cacheDir: o.cacheDir, refresh: o.refresh };
}

/** Adds the network options to `check`. */
export function fetchOptions(command: Command): Command {
    return command
        .option("--offline", "fetch nothing: remote charts, repositories and bases come from the cache only")
        .option(
            "--allow-host <host[:port]>",
            "let fetches reach this host (a private, loopback or plain-http one) (repeatable)",
            (value: string, previous: string[]) => [...previous, value],
            [] as string[],
        )
        .option("--cache-dir <dir>", `where fetched sources are kept (default: ${defaultCacheDir()})`)
        .option("--refresh", "resolve and fetch every remote source again, whatever the cache holds");
}
