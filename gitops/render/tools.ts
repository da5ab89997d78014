/**
 * The rendering tools `pko-guard check` runs where Argo CD's repo server would (kustomize, helm, jsonnet),
 * plus appset-template, flux-build and the reference YAML decoder (kube-yaml). Each is located by
 * support/toolchain.ts (platform package, toolchain folder, else PATH); `source` says which, so a run can say
 * what rendered it.
 */
import { forgetInSnapshot } from "../../support/snapshot";
import { installCommand, locateTool } from "../../support/toolchain";

/** Every proxy variable at a closed port: a tool given these reaches no network by itself. */
export const DEAD_PROXIES: Readonly<Record<string, string>> = {
    HTTP_PROXY: "http://127.0.0.1:9",
    HTTPS_PROXY: "http://127.0.0.1:9",
    http_proxy: "http://127.0.0.1:9",
    https_proxy: "http://127.0.0.1:9",
    ALL_PROXY: "http://127.0.0.1:9",
    NO_PROXY: "",
    no_proxy: "",
};

export type ToolName =
    "kustomize" | "helm" | "jsonnet" | "jsonnet-deps" | "kube-yaml" | "appset-template" | "flux-build" | "flux";

export interface Tool {
    name: ToolName;
    path: string;
    source: "prebuilt" | "toolchain" | "PATH";
}

/**
 * What to run when a tool is missing (one line's worth): this package's own toolchain/install.sh, which ships in
 * the package, so the command works from a packed install (`npm run setup` needs the development build).
 */
export const INSTALL_HINT: Record<ToolName, string> = {
    kustomize: `install kustomize v5 on PATH, or run: ${installCommand("kustomize")}`,
    helm: `install helm v3 on PATH, or run: ${installCommand("helm")}`,
    jsonnet: `install the jsonnet CLI (go-jsonnet) on PATH, or run: ${installCommand("jsonnet")}`,
    "jsonnet-deps": `install go-jsonnet's jsonnet-deps on PATH, or run: ${installCommand("jsonnet-deps")}`,
    "kube-yaml": `run: ${installCommand("kube-yaml")}`,
    "appset-template": `run: ${installCommand("appset-template")}`,
    "flux-build": `run: ${installCommand("flux-build")}`,
    flux: `run: ${installCommand("flux")}`,
};

const found = new Map<ToolName, Tool | undefined>();
// What PATH held where a start-up snapshot was built is not what a run started from it finds.
forgetInSnapshot(() => found.clear());

/** The tool as support/toolchain.ts locates it (prebuilt, the toolchain folder, PATH); undefined when none has it. */
export function findTool(name: ToolName): Tool | undefined {
    if (found.has(name)) return found.get(name);
    const located = locateTool(name);
    const tool: Tool | undefined = located ? { name, path: located.path, source: located.source } : undefined;
    found.set(name, tool);
    return tool;
}
