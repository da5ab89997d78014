/**
 * Rendering what Argo CD's repo server renders, with the same tools (gitops/render/tools.ts): `kustomize build`
 * (./kustomize.ts), `helm template` (./helm.ts), and the jsonnet CLI (./jsonnet.ts), over the repository's one walk
 * (./repo-tree.ts). This module holds what they share: a run's context and running a tool, bounded by the caller's
 * deadline, with no network (a dead proxy), failing with one line that never echoes quoted text (a values file
 * can hold secrets).
 */
import { spawnSync } from "child_process";
import * as os from "os";
import * as path from "path";
import { BadInputError } from "../../support/errors";
import { firstKubeYamlValue } from "../decode/kube-yaml";
import { ClusterCapabilities } from "./capabilities";
import type { CheckedRepository } from "./repo-url";
import type { FetchPolicy } from "../fetch/network-policy";
import type { FetchedSource } from "../fetch/fetch";
import { RepoContext } from "./repo-tree";
import { DEAD_PROXIES, INSTALL_HINT, ToolName, findTool } from "./tools";
import { PathMap, firstErrorLine } from "./tool-errors";
import { extended } from "../../support/shapes";
import { record } from "../../support/records";

/** A rendered manifest stream and the file (absolute path) its objects came from. */
export interface RenderedStream {
    text: string;
    /** The source file (a base manifest, a chart template, a .jsonnet file), else the rendered folder. */
    from: string;
    /**
     * How the file is named in findings when it is not a file of the checked repository (a fetched source's:
     * `<url>@<resolved>/<path>`); unset: the file's path, relative to the working folder.
     */
    shown?: string;
    /** When it came from a fetched source whose reference can move: `<url> at <ref>, resolved to <x>`. */
    floating?: string;
}

/** A run's rendering: its repository (./repo-tree.ts RepoContext), deadline, scratch copy and cluster. */
export interface RenderContext extends RepoContext {
    /** Absolute deadline (ms since the epoch) for all rendering of one run. */
    deadline: number;
    /**
     * One copy of the repository per run, made on first use, where kustomizations are edited (and restored)
     * before each build; the caller removes `dir` when done.
     */
    scratch?: { dir?: string };
    /** The destination cluster's version and APIs, as Argo CD tells Helm (default: a cluster serving PKO and Argo CD). */
    cluster?: ClusterCapabilities;
    /**
     * The repository checked: Application sources whose repoURL names another are not read (gitops/render/repo-url.ts).
     * Unset: every source's path is read from the repository root (the harness's fixtures).
     */
    repository?: CheckedRepository;
    /**
     * The network policy for remote sources (gitops/fetch/): charts, other repositories, remote bases are fetched
     * under it. Unset: nothing is fetched, and such sources are not read (the fail-closed finding, or exit 2).
     */
    fetch?: FetchPolicy;
    /** Every source fetched (or taken from the cache) in the run, for the reports; shared by nested contexts. */
    fetched?: FetchedSource[];
    /**
     * Whether Argo CD builds kustomizations with `--enable-helm` (argocd-cm's `kustomize.buildOptions`, as the
     * repository declares it: gitops/argocd/argocd-cm.ts); unset: not known, and `helmCharts` are not rendered.
     */
    kustomizeHelm?: boolean;
}

/**
 * A render context for another tree than the repository's (a fetched source, a Flux artifact): its own root,
 * names and repository; the run's deadline, cluster, network policy, record and kustomize settings. Not the
 * repository's scratch copy or walk, which are of the repository.
 */
export function treeContext(
    ctx: RenderContext,
    repoRoot: string,
    show: (abs: string) => string,
    repository: CheckedRepository | undefined,
): RenderContext {
    return {
        deadline: ctx.deadline,
        repoRoot,
        show,
        cluster: ctx.cluster,
        repository,
        fetch: ctx.fetch,
        fetched: ctx.fetched,
        kustomizeHelm: ctx.kustomizeHelm,
    };
}

/** A rendering tool ran and refused the input (its first error line): bad input, exit 2, unless the caller knows better. */
export class ToolFailed extends BadInputError {}

/** A remote base or chart dependency a render needs could not be fetched (the fetch's one line): exit 2, as ToolFailed. */
export class SourceNotFetched extends BadInputError {}

/** No network for rendering tools: every proxy points at a closed port, and git never prompts. */
function offlineEnv(): NodeJS.ProcessEnv {
    return extended(extended(process.env, DEAD_PROXIES), {
        GIT_TERMINAL_PROMPT: "0",
        GIT_ALLOW_PROTOCOL: "file",
        // jsonnet searches JSONNET_PATH too: only the library folders check passes (-J) may be searched.
        JSONNET_PATH: "",
        HELM_CACHE_HOME: path.join(os.tmpdir(), "pko-guard-helm-cache"),
        HELM_CONFIG_HOME: path.join(os.tmpdir(), "pko-guard-helm-config"),
        HELM_DATA_HOME: path.join(os.tmpdir(), "pko-guard-helm-data"),
    });
}

/** The folders a tool's messages name, as check shows them: relative to the repository, its scratch copy too. */
function toolPaths(ctx: RenderContext): PathMap[] {
    const paths: PathMap[] = [{ from: path.resolve(ctx.repoRoot), to: "" }];
    if (ctx.scratch?.dir) paths.push({ from: path.join(ctx.scratch.dir, "repo"), to: "" });
    return paths;
}

/** Runs a rendering tool; exit 2 (BadInputError) with one line when it is missing, fails or runs out of time. */
export function runTool(
    name: ToolName,
    args: string[],
    what: string,
    ctx: RenderContext,
    opts: { cwd: string; input?: string },
): string {
    const tool = findTool(name);
    if (!tool) throw new BadInputError(`${what} needs ${name}, which is not installed: ${INSTALL_HINT[name]}`);
    const left = ctx.deadline - Date.now();
    if (left <= 0) throw new BadInputError(`${what}: rendering ran out of time (--timeout)`);
    const r = spawnSync(tool.path, args, {
        cwd: opts.cwd,
        env: offlineEnv(),
        input: opts.input,
        encoding: "utf8",
        timeout: left,
        maxBuffer: 256 * 1024 * 1024,
        killSignal: "SIGKILL",
    });
    if (r.error && (r.error as NodeJS.ErrnoException).code === "ETIMEDOUT")
        throw new BadInputError(`${what}: ${name} ran out of time (--timeout)`);
    if (r.error)
        throw new BadInputError(`${what}: cannot run ${name} (${(r.error as NodeJS.ErrnoException).code ?? "error"})`);
    if (r.status !== 0) {
        let line = firstErrorLine(r.stderr ?? "", toolPaths(ctx));
        // A chart's own messages (`fail`, `required`) and template errors can quote values: the location only.
        const at = /^(.*?(?:execution error at \([^)]*\)|template: [^\s:]+:\d+(?::\d+)?))/.exec(line);
        if ((name === "helm" || name === "kustomize") && at)
            line = `${at[1]}: (the message is not shown: it can quote values)`;
        const network =
            /127\.0\.0\.1:9|proxyconnect|dial tcp|no such host|could not resolve|git clone|fetching|repository.*not found/i.test(
                r.stderr ?? "",
            );
        throw new ToolFailed(
            `${what}: ${name} failed: ${line}${network ? " (it needs the network, which check does not use)" : ""}`,
        );
    }
    return r.stdout;
}

/**
 * A Chart.yaml's or a kustomization's top-level mapping as Helm and kustomize read it (sigs.k8s.io/yaml: YAML
 * 1.1, merge keys, a repeated key's last value); empty when the text does not decode to a mapping (the tool then
 * fails on its own and check reports that).
 */
export function mappingOf(text: string): Record<string, unknown> {
    const doc = firstKubeYamlValue(text);
    return (doc.ok ? record(doc.value) : undefined) ?? {};
}
