/**
 * The Argo CD instance's settings a repository declares (its `argocd-cm` ConfigMap, as a manifest or as a
 * kustomization of the repository builds it): what of them changes how check renders. Only kustomize's Helm chart generator for now: Argo CD
 * builds a kustomization's `helmCharts` only when `kustomize.buildOptions` carries `--enable-helm` (argo-cd
 * util/settings `GetKustomizeSettings`, util/kustomize `isHelmEnabled`); an Application cannot ask for it.
 */
import * as fs from "fs";
import * as path from "path";
import { record } from "../../support/records";
import { BadInputError } from "../../support/errors";
import { decodeKubeYaml } from "../decode/kube-yaml";
import { KUSTOMIZATION_FILES } from "../render/folders";
import { RenderContext } from "../render/render";
import { renderKustomize } from "../render/kustomize";
import { repoTree } from "../render/repo-tree";

type Obj = Record<string, unknown>;

/** The most of a file read when looking for argocd-cm beside a kustomization. */
const MAX_PEEK = 1024 * 1024;

/** What check takes from argocd-cm for kustomize sources. */
export interface ArgoKustomizeSettings {
    /** `kustomize.buildOptions` carries `--enable-helm` in every argocd-cm of the repository (at least one). */
    enableHelm: boolean;
}

/**
 * The kustomize settings of the argocd-cm ConfigMaps among `objects` (the repository's manifests as written) and
 * those `rendered` (renderedArgoCdCms), in place of the files of the folders rendered:
 * Helm is enabled only when there is one and every one enables it (with several Argo CD instances, check does not
 * know which one renders an Application). Only the default version's `kustomize.buildOptions` is read: the repo
 * server passes it, not a `kustomize.buildOptions.<version>`, to `kustomize build`.
 */
export function argoKustomizeSettings(
    objects: readonly { object: Obj; abs?: string }[],
    rendered: ArgoCdCmRenders = { folders: [], objects: [] },
): ArgoKustomizeSettings {
    // A file of a folder rendered for its argocd-cm is a resource or a patch of that build: the build's answer counts.
    const inRendered = (abs?: string) =>
        abs !== undefined && rendered.folders.some((d) => abs.startsWith(`${d}${path.sep}`));
    const maps = [...objects.filter((o) => !inRendered(o.abs)).map((o) => o.object), ...rendered.objects].filter(
        (o) => o.kind === "ConfigMap" && o.apiVersion === "v1" && record(o.metadata)?.name === "argocd-cm",
    );
    const enables = (cm: Obj) => {
        const options = record(cm.data)?.["kustomize.buildOptions"];
        return typeof options === "string" && /(^|\s)--enable-helm(=true)?(\s|$)/.test(options);
    };
    return { enableHelm: maps.length > 0 && maps.every(enables) };
}

/** The argocd-cm ConfigMaps kustomizations of the repository build, and the folders built. */
export interface ArgoCdCmRenders {
    folders: string[];
    objects: Obj[];
}

/**
 * argocd-cm as the repository's kustomizations produce it (Argo CD installed by a kustomization that patches it:
 * a patch file, an inline patch, a `configMapGenerator` merging into it): each folder whose kustomization, or a
 * YAML or JSON file beside it, names `argocd-cm` is built with kustomize as for an Application (its remote bases
 * fetched under the run's policy), and the argocd-cm ConfigMaps it gives are taken instead of its files as
 * written. A folder that does not build gives nothing (Helm stays off: helmCharts then fail closed, as when
 * nothing says); its build fails the run later, when it is rendered as a folder of the repository.
 */
export function renderedArgoCdCms(ctx: RenderContext): ArgoCdCmRenders {
    const out: ArgoCdCmRenders = { folders: [], objects: [] };
    const tree = repoTree(ctx);
    if (tree.tooLarge) return out;
    const byFolder = new Map<string, string[]>();
    for (const f of tree.files) {
        const parts = f.split("/");
        if (parts.some((p) => p.startsWith(".") || p === "node_modules")) continue;
        const dir = parts.slice(0, -1).join("/");
        const names = byFolder.get(dir);
        if (names) names.push(parts[parts.length - 1]);
        else byFolder.set(dir, [parts[parts.length - 1]]);
    }
    for (const [dir, names] of byFolder) {
        if (!names.some((n) => KUSTOMIZATION_FILES.includes(n))) continue;
        const abs = path.join(ctx.repoRoot, ...dir.split("/").filter((p) => p !== ""));
        const named = names.some((n) => {
            if (!KUSTOMIZATION_FILES.includes(n) && !/\.(ya?ml|json)$/i.test(n)) return false;
            const file = path.join(abs, n);
            try {
                if (fs.statSync(file).size > MAX_PEEK) return false;
                return fs.readFileSync(file, "utf8").includes("argocd-cm");
            } catch {
                return false;
            }
        });
        if (!named) continue;
        out.folders.push(abs);
        try {
            for (const s of renderKustomize(abs, ctx))
                for (const d of decodeKubeYaml(s.text)) if (record(d.value)) out.objects.push(d.value as Obj);
        } catch (e) {
            if (!(e instanceof BadInputError)) throw e;
        }
    }
    return out;
}
