/**
 * `check`'s network options, in one place: `--offline`, `--allow-host HOST[:PORT]` (repeatable; `allow-hosts:` in
 * `.pko-guard.yaml`), `--cache-dir DIR` and `--refresh`, and the network policy they make for the run
 * (gitops/fetch/network-policy.ts). The default fetches what Argo CD's repo server fetches, under that policy.
 */
import { Command } from "commander";
import { FetchPolicy, defaultCacheDir, fetchPolicy, parseAllowHost } from "../gitops/fetch/network-policy";

/** The network options as the command line gives them (undefined or empty: not given). */
export interface FetchFlags {
    offline?: boolean;
    allowHost: string[];
    cacheDir?: string;
    refresh?: boolean;
}

function collect(value: string, previous: string[]): string[] {
    return [...previous, value];
}

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
            collect,
            [] as string[],
        )
        .option("--cache-dir <dir>", `where fetched sources are kept (default: ${defaultCacheDir()})`)
        .option("--refresh", "resolve and fetch every remote source again, whatever the cache holds");
}

/** Why an `allow-hosts` entry is refused (the line without the option's name), or undefined. */
export function allowHostProblem(value: unknown): string | undefined {
    if (typeof value !== "string") return "is not a string";
    try {
        parseAllowHost(value);
        return undefined;
    } catch {
        return "is not a host or host:port";
    }
}

/** The run's network policy: the flags, the hosts the file allows (when no --allow-host is given), the repository. */
export function runFetchPolicy(flags: FetchFlags, allowHosts: string[], repoRoot: string): FetchPolicy {
    return fetchPolicy({
        offline: flags.offline === true,
        allowHosts,
        cacheDir: flags.cacheDir,
        refresh: flags.refresh === true,
        repoRoot,
    });
}
