/**
 * The rendering tools `pko-guard check` runs where Argo CD's repo server would (kustomize, helm, jsonnet),
 * and the reference YAML decoder of the differential test (kube-yaml). Each is taken from the project's own
 * toolchain build (`npm run setup`: .cache/toolchain/bin, pinned versions, toolchain/install.sh) when it is
 * there, else from PATH; `source` says which, so a run can say what rendered it.
 */
import * as fs from "fs";
import * as path from "path";
import { REPO_ROOT } from "../paths";

export type ToolName = "kustomize" | "helm" | "jsonnet" | "kube-yaml";

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
    "kube-yaml": "run `npm run setup` (toolchain/install.sh kube-yaml)",
};

export function toolchainBin(): string {
    return process.env.PKO_GUARD_TOOLCHAIN_BIN ?? path.join(REPO_ROOT, ".cache", "toolchain", "bin");
}

function executable(file: string): boolean {
    try {
        fs.accessSync(file, fs.constants.X_OK);
        return fs.statSync(file).isFile();
    } catch {
        return false;
    }
}

const found = new Map<ToolName, Tool | undefined>();

/** The tool, from the project's toolchain first, else PATH; undefined when neither has it. */
export function findTool(name: ToolName): Tool | undefined {
    if (found.has(name)) return found.get(name);
    let tool: Tool | undefined;
    const own = path.join(toolchainBin(), name);
    if (executable(own)) tool = { name, path: own, source: "toolchain" };
    else {
        for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
            if (dir && executable(path.join(dir, name))) {
                tool = { name, path: path.join(dir, name), source: "PATH" };
                break;
            }
        }
    }
    found.set(name, tool);
    return tool;
}
