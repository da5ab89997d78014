/**
 * Argo CD's parameter override files, merged into a source before it is rendered (argo-cd
 * reposerver/repository/repository.go `mergeSourceParameters`, before the source's type is decided, so a patch can
 * change it): `.argocd-source.yaml`, then `.argocd-source-<app>.yaml`, each as a JSON merge patch (RFC 7386).
 * `repoURL`, `path`, `chart` and `targetRevision` are put back as written. `<app>` is the instance name: the
 * name in the control plane's namespace (check assumes `argocd`), else `<namespace>_<name>`.
 */
import * as fs from "fs";
import * as path from "path";
import { BadInputError } from "../../support/errors";
import { firstKubeYamlValue } from "../decode/kube-yaml";
import { RenderContext } from "../render/render";
import { confineLinks } from "../render/repo-tree";
import { record } from "../../support/records";

type Obj = Record<string, unknown>;

export const MAX_OVERRIDE_BYTES = 1024 * 1024;
/** The namespace of Argo CD's control plane, where an Application's instance name is its name. */
export const CONTROL_PLANE_NAMESPACE = "argocd";
const KEPT = ["repoURL", "path", "chart", "targetRevision"];

/** RFC 7386 JSON merge patch, as evanphx/json-patch `MergePatch` applies it. */
export function mergePatch(target: unknown, patch: unknown): unknown {
    const p = record(patch);
    if (!p) return patch;
    const out: Obj = { ...(record(target) ?? {}) };
    for (const [k, v] of Object.entries(p)) {
        if (v === null) delete out[k];
        else out[k] = mergePatch(out[k], v);
    }
    return out;
}

/** The Application's instance name, as Argo CD names its override file. */
export function instanceName(app: Obj): string {
    const meta = record(app.metadata) ?? {};
    const name = String(meta.name ?? "");
    const ns = typeof meta.namespace === "string" ? meta.namespace : "";
    return ns === "" || ns === CONTROL_PLANE_NAMESPACE ? name : `${ns}_${name}`;
}

/** The files that apply to a source in `dir`, in Argo CD's order (those that exist, as regular files). */
export function overrideFiles(dir: string, appName: string): string[] {
    const names = [".argocd-source.yaml", ...(appName ? [`.argocd-source-${appName}.yaml`] : [])];
    return names.map((n) => path.join(dir, n)).filter((f) => fs.existsSync(f) && !fs.statSync(f).isDirectory());
}

/** The source with the override files of its folder `dir` merged in (the source itself when there are none). */
export function withOverrides(source: Obj, dir: string, app: Obj, who: string, ctx: RenderContext): Obj {
    const files = overrideFiles(dir, instanceName(app));
    if (files.length === 0) return source;
    confineLinks(ctx); // a link out of the repository is refused before any file is read through it
    let merged: unknown = source;
    for (const f of files) {
        const shown = ctx.show(f);
        if (fs.statSync(f).size > MAX_OVERRIDE_BYTES)
            throw new BadInputError(`${who}: ${shown} is larger than ${MAX_OVERRIDE_BYTES} bytes`);
        // Read as sigs.k8s.io/yaml's YAMLToJSON reads it (its first document).
        const doc = firstKubeYamlValue(fs.readFileSync(f, "utf8"));
        if (!doc.ok) throw new BadInputError(`${who}: ${shown} is not valid YAML (Argo CD fails the source)`);
        const value = doc.value;
        if (value === null || value === undefined) continue;
        if (!record(value))
            throw new BadInputError(`${who}: ${shown} is not a mapping of source fields (Argo CD fails the source)`);
        merged = mergePatch(merged, value);
    }
    const out = { ...(merged as Obj) };
    for (const k of KEPT) {
        if (source[k] === undefined) delete out[k];
        else out[k] = source[k];
    }
    return out;
}
