/**
 * The tag a Flux GitRepository's `spec.ref.semver` range checks out (and an OCIRepository's pulls), chosen as
 * source-controller's git client (fluxcd/pkg/git) and OCIRepository reconciler choose it, by the toolchain's flux-build running Flux's own version parsing and Masterminds
 * semver: among the repository's tags that parse as versions and satisfy the range, the highest; of tags that are
 * the same version but for build metadata, the one whose commit is newest.
 */
import { exec } from "../../support/process";
import { findTool } from "../render/tools";
import { firstErrorLine } from "../render/tool-errors";
import { FetchError } from "./http-client";

/** The most tags one repository may list (a bound on hostile input). */
export const MAX_TAGS = 100_000;

/**
 * The tags `git ls-remote --tags --refs` lists, by name (`refs/tags/` left off); a line of another shape (a peeled
 * `^{}` entry, a warning) is skipped.
 */
export function tagsOf(listing: string): string[] {
    const out: string[] = [];
    for (const line of listing.split("\n")) {
        const m = /^[0-9a-f]{40,64}\trefs\/tags\/(.+)$/.exec(line.trim());
        if (m && !m[1].endsWith("^{}")) out.push(m[1]);
    }
    return out;
}

/** The highest tag matching `range`, and the tags of the same version (more than one: decided by commit date). */
export async function pickSemverTag(
    shown: string,
    range: string,
    tags: string[],
    timeoutMs: number,
    filter?: string,
): Promise<{ tag: string; tied: string[] }> {
    const tool = findTool("flux-build");
    if (!tool) throw new FetchError(`${shown}: resolving spec.ref.semver needs flux-build, which is not installed`);
    const r = await exec(tool.path, [], {
        cwd: process.cwd(),
        env: { PATH: process.env.PATH ?? "" },
        input: JSON.stringify({ semver: { range, tags, filter } }),
        timeoutMs: Math.max(1, timeoutMs),
    });
    if (r.timedOut) throw new FetchError(`${shown}: resolving spec.ref.semver ran out of time`);
    if (r.code !== 0)
        throw new FetchError(
            `${shown}: semver ${JSON.stringify(range)}: ${firstErrorLine(r.stderr) || "flux-build failed"}`,
        );
    const answer = JSON.parse(r.stdout) as { tag?: unknown; tied?: unknown };
    if (typeof answer.tag !== "string" || !Array.isArray(answer.tied))
        throw new FetchError(`${shown}: semver ${JSON.stringify(range)}: flux-build gave no tag`);
    return { tag: answer.tag, tied: answer.tied.filter((t): t is string => typeof t === "string") };
}
