/**
 * What makes a folder one a tool renders: a kustomization (kustomize) or a `Chart.yaml` (Helm). Apart from the
 * renderers themselves (./kustomize.ts, ./helm.ts), so that reading a repository can tell whether it needs them at
 * all without loading them (gitops/manifests/load.ts).
 */
import * as fs from "fs";
import * as path from "path";

/** The file names kustomize reads as a folder's kustomization, in its order. */
export const KUSTOMIZATION_FILES = ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/** The kustomization file of folder `dir`, or undefined when it has none. */
export function kustomizationFile(dir: string): string | undefined {
    for (const f of KUSTOMIZATION_FILES) if (fs.existsSync(path.join(dir, f))) return path.join(dir, f);
    return undefined;
}

/** Whether folder `dir` is a Helm chart (holds a `Chart.yaml`). */
export function isChart(dir: string): boolean {
    return fs.existsSync(path.join(dir, "Chart.yaml"));
}
