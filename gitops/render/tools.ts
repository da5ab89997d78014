/**
 * The rendering tools `pko-guard check` runs where Argo CD's repo server would (kustomize, helm, jsonnet),
 * ApplicationSet goTemplate expansion (appset-template: Go's text/template with Argo CD's functions), and the
 * reference YAML decoder of the differential test (kube-yaml). Each is taken from the project's own
 * toolchain build (`npm run setup`: .cache/toolchain/bin, pinned versions, toolchain/install.sh) when it is
 * there, else from PATH; `source` says which, so a run can say what rendered it.
 */
import * as path from "path";
import { isExecutable, onPath, toolchainBin } from "../../support/toolchain";

export type ToolName = "kustomize" | "helm" | "jsonnet" | "jsonnet-deps" | "kube-yaml" | "appset-template";

export interface Tool {
    name: ToolName;
    path: string;
    source: "toolchain" | "PATH";
}

/** What to run when a tool is missing (one line's worth). */
export const INSTALL_HINT: Record<ToolName, string> = {
    kustomize: "install kustomize v5 on PATH, or run `npm run setup` in pko-guard's folder",
    helm: "install helm v3 on PATH, or run `npm run setup` in pko-guard's folder",
    jsonnet: "install the jsonnet CLI (go-jsonnet) on PATH, or run `npm run setup` in pko-guard's folder",
    "jsonnet-deps": "install go-jsonnet's jsonnet-deps on PATH, or run `npm run setup` in pko-guard's folder",
    "kube-yaml": "run `npm run setup` (toolchain/install.sh kube-yaml)",
    "appset-template": "run `npm run setup` in pko-guard's folder (toolchain/install.sh appset-template)",
};

const found = new Map<ToolName, Tool | undefined>();

/** The tool, from the project's toolchain first, else PATH; undefined when neither has it. */
export function findTool(name: ToolName): Tool | undefined {
    if (found.has(name)) return found.get(name);
    const own = path.join(toolchainBin(), name);
    let tool: Tool | undefined;
    if (isExecutable(own)) tool = { name, path: own, source: "toolchain" };
    else {
        const fromPath = onPath(name);
        if (fromPath) tool = { name, path: fromPath, source: "PATH" };
    }
    found.set(name, tool);
    return tool;
}
