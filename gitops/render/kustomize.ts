/**
 * `kustomize build` as Argo CD's repo server runs it: in a copy of the repository, with the Application's own
 * kustomize options written into the kustomization, no remote base, every object attributed to its base file.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { BadInputError } from "../../support/errors";
import { KubeYamlError, decodeKubeYaml } from "../decode/kube-yaml";
import { yamlReason } from "../decode/manifest-yaml";
import { RenderContext, RenderedStream, mappingOf, runTool } from "./render";
import { confineLinks } from "./repo-tree";
import { Localizer, remoteEntriesFetchable } from "./kustomize-remote";
import { rewriteKsops, rewriteNestedKsops } from "./ksops";
import { extended } from "../../support/shapes";
import { enableHelmArgs, placeHelmCharts } from "./kustomize-helm";
import { KUSTOMIZATION_FILES, kustomizationFile } from "./folders";

export { KUSTOMIZATION_FILES, kustomizationFile };

/**
 * A kustomization entry kustomize fetches rather than reads from the repository: a URL (`https://`, `ssh://`,
 * `file://`), go-getter's forced getter (`git::https://...`), scp-like `git@host:`, a hosting site's path, or a
 * path with `//` and a query (`repo//base?ref=v1`).
 */
export function isRemoteEntry(entry: string): boolean {
    return /^(?:[a-z][a-z0-9+.-]*::|git@|github\.com\/|gitlab\.com\/|bitbucket\.org\/)|:\/\/|\?ref=|\/\/.*\?/i.test(
        entry,
    );
}

/** Entries of a kustomization that point outside the repository (remote bases): fetched, else refused. */
function remoteEntries(kfile: string): string[] {
    const k = mappingOf(fs.readFileSync(kfile, "utf8"));
    const out: string[] = [];
    for (const field of ["resources", "bases", "components"]) {
        const list = k[field];
        if (Array.isArray(list)) for (const e of list) if (typeof e === "string" && isRemoteEntry(e)) out.push(e);
    }
    return out;
}

/** The Application's own kustomize options (spec.source.kustomize), as Argo CD applies them before building. */
export interface KustomizeOptions {
    namePrefix?: string;
    nameSuffix?: string;
    namespace?: string;
    images?: string[];
    commonLabels?: Record<string, string>;
    commonAnnotations?: Record<string, string>;
    patches?: unknown[];
    components?: string[];
    replicas?: unknown[];
    /**
     * Build with kustomize's Helm chart generator (./kustomize-helm.ts), as Argo CD does when argocd-cm's
     * `kustomize.buildOptions` carries `--enable-helm`.
     */
    enableHelm?: boolean;
}

function copyTree(from: string, to: string): void {
    fs.cpSync(from, to, {
        recursive: true,
        dereference: false,
        filter: (src) => {
            const base = path.basename(src);
            return base !== ".git" && base !== "node_modules";
        },
    });
}

/**
 * The run's copy of the repository (made on first use in `scratch.dir`), where kustomizations are edited before
 * a build and restored after it: kustomize reads bases by relative paths, so the whole tree is copied once.
 */
export function scratchCopy(repoRoot: string, scratch: { dir?: string }): string {
    const copy = path.join(scratchRoot(scratch), "repo");
    if (!fs.existsSync(copy)) copyTree(repoRoot, copy);
    return copy;
}

/** The run's scratch folder (made on first use; the caller removes it), where its copies are written. */
export function scratchRoot(scratch: { dir?: string }): string {
    if (!scratch.dir) scratch.dir = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-kustomize-"));
    return scratch.dir;
}

/** `kustomize edit set image` semantics for one `name[=newName][:tag][@digest]` entry. */
function imageEntry(spec: string): Record<string, string> {
    const [left, digest] = spec.split("@");
    const eq = left.indexOf("=");
    const name = eq >= 0 ? left.slice(0, eq) : left;
    let rest = eq >= 0 ? left.slice(eq + 1) : "";
    let newName = "";
    let newTag = "";
    const target = eq >= 0 ? rest : left;
    const colon = target.lastIndexOf(":");
    const slash = target.lastIndexOf("/");
    if (colon > slash) {
        newTag = target.slice(colon + 1);
        rest = target.slice(0, colon);
    } else rest = target;
    const imageName = eq >= 0 ? name : rest;
    if (eq >= 0 && rest !== "") newName = rest;
    const e: Record<string, string> = { name: imageName };
    if (newName) e.newName = newName;
    if (newTag) e.newTag = newTag;
    if (digest) e.digest = digest;
    return e;
}

/**
 * `kustomize build` of a folder, with the Application's kustomize options written into a copy of its
 * kustomization (as Argo CD does with `kustomize edit`), in a copy of the repository (bases are relative).
 * Origin annotations are turned on to attribute every object to its base file, and removed again.
 */
export function renderKustomize(dir: string, ctx: RenderContext, opts: KustomizeOptions = {}): RenderedStream[] {
    const what = `${ctx.show(dir)} (kustomize)`;
    confineLinks(ctx);
    const kfile = kustomizationFile(dir);
    if (!kfile) throw new BadInputError(`${what}: no kustomization.yaml`);
    const remote = remoteEntries(kfile);
    if (remote.length > 0 && !remoteEntriesFetchable(remote, ctx))
        throw new BadInputError(
            `${what}: a remote base needs the network, which check does not use; vendor it into the repository`,
        );
    const scratch = ctx.scratch ?? {};
    const owned = ctx.scratch === undefined;
    const copy = scratchCopy(ctx.repoRoot, scratch);
    const rel = path.relative(ctx.repoRoot, dir);
    const appDir = path.join(copy, rel);
    const kcopy = path.join(appDir, path.basename(kfile));
    const original = fs.readFileSync(kcopy, "utf8");
    const localizer = ctx.fetch ? new Localizer(scratch.dir!, ctx, what, isRemoteEntry) : undefined;
    let restoreNested = () => undefined as void;
    let charts: string[] = [];
    try {
        // Read as kustomize reads it (sigs.k8s.io/yaml: YAML 1.1, so a plain `on` is true) and written back as
        // JSON, which every YAML reader takes as it is: a YAML 1.2 round trip wrote a quoted "on" or "y" plain,
        // and kustomize then read a boolean where the kustomization has a string.
        let decoded: unknown;
        try {
            decoded = decodeKubeYaml(original).find((d) => d.value !== null)?.value;
        } catch (e) {
            if (!(e instanceof KubeYamlError)) throw e;
            throw new BadInputError(`${what}: ${ctx.show(kfile)} is not valid YAML (${yamlReason(e.reason)})`);
        }
        if (decoded !== undefined && (typeof decoded !== "object" || Array.isArray(decoded)))
            throw new BadInputError(`${what}: ${ctx.show(kfile)} is not a mapping`);
        const k = (decoded ?? {}) as Record<string, unknown>;
        if (opts.namePrefix) k.namePrefix = opts.namePrefix;
        if (opts.nameSuffix) k.nameSuffix = opts.nameSuffix;
        if (opts.namespace) k.namespace = opts.namespace;
        if (opts.commonLabels) k.commonLabels = extended((k.commonLabels as object) ?? {}, opts.commonLabels);
        if (opts.commonAnnotations)
            k.commonAnnotations = extended((k.commonAnnotations as object) ?? {}, opts.commonAnnotations);
        if (opts.images && opts.images.length > 0) {
            const images = Array.isArray(k.images) ? (k.images as Record<string, string>[]) : [];
            for (const spec of opts.images) {
                const e = imageEntry(spec);
                const i = images.findIndex((x) => x && x.name === e.name);
                if (i >= 0) images[i] = e;
                else images.push(e);
            }
            k.images = images;
        }
        if (opts.patches && opts.patches.length > 0)
            k.patches = [...(Array.isArray(k.patches) ? (k.patches as unknown[]) : []), ...opts.patches];
        if (opts.components && opts.components.length > 0)
            k.components = [...(Array.isArray(k.components) ? (k.components as unknown[]) : []), ...opts.components];
        if (opts.replicas && opts.replicas.length > 0)
            k.replicas = [...(Array.isArray(k.replicas) ? (k.replicas as unknown[]) : []), ...opts.replicas];
        // Remote bases (and what they name remotely) fetched under the policy, their entries made local.
        localizer?.rewrite(k, appDir);
        // KSOPS generators, here and below, as the encrypted objects they decrypt (./ksops.ts).
        rewriteKsops(k, appDir);
        restoreNested = rewriteNestedKsops(appDir, copy, k, kustomizationFile);
        const meta = Array.isArray(k.buildMetadata) ? (k.buildMetadata as string[]) : [];
        if (!meta.includes("originAnnotations")) k.buildMetadata = [...meta, "originAnnotations"];
        fs.writeFileSync(kcopy, `${JSON.stringify(k, null, 2)}\n`);
        const helmArgs = opts.enableHelm ? enableHelmArgs(ctx, what) : [];
        if (opts.enableHelm) charts = placeHelmCharts(k, appDir, copy, ctx, kustomizationFile);
        const out = runTool("kustomize", ["build", ".", ...helmArgs], what, ctx, { cwd: appDir });
        return splitByOrigin(out, appDir, dir, localizer);
    } finally {
        fs.writeFileSync(kcopy, original);
        for (const c of charts) fs.rmSync(c, { recursive: true, force: true });
        restoreNested();
        if (owned && scratch.dir) fs.rmSync(scratch.dir, { recursive: true, force: true });
    }
}

const ORIGIN = "config.kubernetes.io/origin";

/**
 * Splits kustomize's output by each object's origin annotation (removed from the object). An object is attributed
 * to a file, never a folder: its resource file (`path`), else the kustomization whose generator made it
 * (`configuredIn`: helmCharts, generators), else the folder's own kustomization.
 */
export function splitByOrigin(out: string, appCopy: string, appDir: string, localizer?: Localizer): RenderedStream[] {
    const streams: RenderedStream[] = [];
    const own = kustomizationFile(appDir) ?? appDir;
    for (const chunk of out.split(/^---$/m)) {
        if (chunk.trim() === "") continue;
        let from = own;
        let shown: string | undefined;
        let floating: string | undefined;
        let text = chunk;
        const m = new RegExp(`^(\\s*)${ORIGIN.replace(/[./]/g, "\\$&")}: \\|\\n((?:\\1  .*\\n)+)`, "m").exec(chunk);
        if (m) {
            const origin = mappingOf(m[2].replace(new RegExp(`^${m[1]}  `, "gm"), ""));
            const file = typeof origin.path === "string" ? origin.path : origin.configuredIn;
            if (typeof file === "string" && !origin.repo) {
                // A fetched base's file is named by its source; any other is the repository's file.
                const remote = localizer?.named(path.resolve(appCopy, file));
                from = remote?.from ?? path.resolve(appDir, file);
                shown = remote?.shown;
                floating = remote?.floating;
            }
            text = chunk.slice(0, m.index) + chunk.slice(m.index + m[0].length);
            // An annotations map left empty: kustomize would not have written one.
            text = text.replace(/^(\s*)annotations:\s*\n(?!\1\s)/m, "");
        }
        const body = text.replace(/^\n+/, "");
        streams.push(shown === undefined ? { text: body, from } : { text: body, from, shown, floating });
    }
    return streams;
}
