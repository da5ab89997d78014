/**
 * What `check` leaves out of the folders it walks: `--exclude GLOB` and `exclude:` of the repository's
 * configuration file (./check-settings.ts), and files that configure tools, which are never taken for manifests:
 * that file itself, the policy pack config in force, and the well-known configuration files of CI systems, git
 * hooks, linters and package managers (TOOL_CONFIG_GLOBS), so a run neither judges nor lists them as skipped.
 *
 * A glob is matched against a path relative to the repository root, `/`-separated: `*` matches within one
 * folder or file name, `?` one character, `**` any number of folders (`examples/**`, `**\/crds/**`); a glob
 * without `/` matches a name at any depth (`*.example.yaml`, `testdata`), as in `.gitignore`. An excluded folder
 * is not walked. Paths named on the command line are always read, and what an Argo CD Application syncs is read
 * whole, excluded or not: an exclusion never hides what the cluster receives.
 */
import * as path from "path";
import { posix } from "./files";

/** The repository configuration file's name (at the repository root). */
export const CONFIG_FILE = ".pko-guard.yaml";

/**
 * Files that configure tools, wherever a repository keeps them (a glob without `/` matches at any depth; one with
 * `/` from the repository root): CI workflows and pipelines, pre-commit, dependency bots, linters and formatters,
 * package managers and compilers, documentation sites. None is a Kubernetes manifest.
 */
export const TOOL_CONFIG_GLOBS = [
    CONFIG_FILE,
    ".pre-commit-config.yaml",
    ".pre-commit-hooks.yaml",
    "/.github",
    ".gitlab-ci.yml",
    "/.gitlab",
    "/.circleci",
    "/.buildkite",
    ".woodpecker.yml",
    "/.woodpecker",
    ".drone.yml",
    ".travis.yml",
    "azure-pipelines.yml",
    "bitbucket-pipelines.yml",
    "cloudbuild.yaml",
    "renovate.json",
    ".renovaterc",
    ".renovaterc.json",
    "codecov.yml",
    ".codecov.yml",
    ".yamllint",
    ".yamllint.yaml",
    ".yamllint.yml",
    ".markdownlint.json",
    ".markdownlint.yaml",
    ".markdownlint.yml",
    ".prettierrc",
    ".prettierrc.json",
    ".prettierrc.yaml",
    ".eslintrc.json",
    ".eslintrc.yaml",
    ".golangci.yml",
    ".golangci.yaml",
    ".goreleaser.yml",
    ".goreleaser.yaml",
    ".checkov.yaml",
    ".kube-linter.yaml",
    ".yamlfmt",
    "package.json",
    "package-lock.json",
    "tsconfig.json",
    "jsconfig.json",
    "mkdocs.yml",
    "mkdocs.yaml",
    "Pulumi.yaml",
    "Pulumi.*.yaml",
    "PulumiPolicy.yaml",
];

/** A glob as a regular expression over a repository-relative path; undefined when it is not a valid glob. */
export function globRegExp(glob: string): RegExp | undefined {
    let g = glob.trim().replace(/^\.\//, "").replace(/\/+$/, "");
    if (g === "" || g.includes("\u0000")) return undefined;
    const anywhere = !g.includes("/");
    if (g.startsWith("/")) g = g.slice(1);
    let re = "";
    for (let i = 0; i < g.length; i++) {
        const c = g[i];
        if (c === "*" && g[i + 1] === "*") {
            const slash = g[i + 2] === "/";
            re += slash ? "(?:.*/)?" : ".*";
            i += slash ? 2 : 1;
        } else if (c === "*") re += "[^/]*";
        else if (c === "?") re += "[^/]";
        else re += c.replace(/[\\^$.|+(){}[\]]/g, "\\$&");
    }
    return new RegExp(`^${anywhere ? "(?:.*/)?" : ""}${re}$`);
}

/** Whether a repository-relative path (a file or a folder) is excluded by one of the globs. */
export function excludedBy(globs: RegExp[], rel: string): boolean {
    return globs.some((g) => g.test(rel));
}

const TOOL_CONFIGS = TOOL_CONFIG_GLOBS.map(globRegExp).filter((r): r is RegExp => r !== undefined);

/** Whether a file (absolute) configures a tool: one of TOOL_CONFIG_GLOBS, or one of `configs` (absolute). */
export function isToolConfig(repoRoot: string, abs: string, configs: string[] = []): boolean {
    if (configs.includes(abs)) return true;
    const rel = path.relative(repoRoot, abs);
    if (rel === "" || rel.startsWith("..") || path.isAbsolute(rel)) return false;
    return excludedBy(TOOL_CONFIGS, posix(rel));
}

/**
 * The walk's filter for one run: true for a file or folder (absolute) that is excluded, or that configures a tool
 * (`configs`: the run's own configuration files, absolute, such as the policy pack config in force).
 */
export function walkFilter(repoRoot: string, globs: string[] = [], configs: string[] = []): (abs: string) => boolean {
    const res = globs.map(globRegExp).filter((r): r is RegExp => r !== undefined);
    return (abs) => {
        if (isToolConfig(repoRoot, abs, configs)) return true;
        if (res.length === 0) return false;
        const rel = path.relative(repoRoot, abs);
        if (rel === "" || rel.startsWith("..") || path.isAbsolute(rel)) return false;
        return excludedBy(res, posix(rel));
    };
}
