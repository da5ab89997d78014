/**
 * Argo CD's view of a repository: which objects an `Application` syncs, rendered as its repo server renders
 * them (each source by ./application-sources.ts), and the Applications an `ApplicationSet` would create
 * (./application-sets.ts). A source's type is the one it names, else discovered as Argo CD does at the folder's
 * root (kustomization, else `Chart.yaml`, else a directory); `.argocd-source*.yaml` overrides are merged first.
 * Sources that cannot be rendered here are named, never guessed, and the Application fails closed. Supported
 * options: docs/check.md, "Rendering, as Argo CD renders".
 */
import * as fs from "fs";
import * as path from "path";
import { BadInputError } from "../../support/errors";
import { RenderContext } from "../render/render";
import { rootInUse } from "../render/repo-tree";
import {
    SourceOwner,
    directorySource,
    SourceNotRendered,
    discoveredType,
    helmSource,
    kustomizeSource,
} from "./application-sources";
import { withOverrides } from "./source-overrides";
import { list, record, str } from "../../support/records";
import { otherRepository } from "../render/repo-url";
import { buildEnv, needsUnknownRevision } from "./build-env";
import { remoteDependency } from "../render/helm";
import { dependenciesFetchable } from "../render/chart-dependencies";
import { chartRequest, gitRequest, remoteValueFile } from "./remote-sources";
import { SourceOutput, fetchedContext, fetchedOrNoted, mergeFetched } from "../render/fetched-sources";

type Obj = Record<string, unknown>;

export function isApplication(o: Obj): boolean {
    return o.kind === "Application" && typeof o.apiVersion === "string" && o.apiVersion.startsWith("argoproj.io/");
}
export function isApplicationSet(o: Obj): boolean {
    return o.kind === "ApplicationSet" && typeof o.apiVersion === "string" && o.apiVersion.startsWith("argoproj.io/");
}

/** What one Application syncs. */
export interface ApplicationOutput extends SourceOutput {
    /**
     * Why some of what it applies could not be computed here, one line each, naming the source's field
     * (`spec.source`, `spec.sources[1]`) and quoting (JSON) every value it shows: the Application fails closed
     * (argocd-app-rendered).
     */
    notes: string[];
    /** The destination namespace, when set. */
    namespace?: string;
}

/** Renders (or lists) what an Application syncs. `appName` for messages and the default release name. */
export function applicationOutput(app: Obj, ctx: RenderContext): ApplicationOutput {
    const meta = record(app.metadata) ?? {};
    const spec = record(app.spec) ?? {};
    const appName = str(meta.name) ?? "(unnamed)";
    const namespace = str(record(spec.destination)?.namespace) || undefined;
    const out: ApplicationOutput = { files: [], streams: [], rendered: [], renders: 0, notes: [], namespace };
    const sources = spec.sources !== undefined ? list(spec.sources).map(record) : [record(spec.source)];
    const refs = new Map<string, string>();
    const fieldOf = (i: number) => (spec.sources !== undefined ? `spec.sources[${i}]` : "spec.source");
    // A `ref` source of another repository: its `$ref/...` files are that repository's, never read here.
    const foreignRefs = new Map<string, string>();
    for (const [i, s] of sources.entries()) {
        if (!s || typeof s.ref !== "string") continue;
        const other = otherRepository(s.repoURL, fieldOf(i), ctx.repository);
        if (!other) {
            refs.set(s.ref, ctx.repoRoot);
            continue;
        }
        // Another repository's files, fetched at the source's targetRevision when the run fetches.
        const req = gitRequest(s);
        const got = req && fetchedOrNoted(req, fieldOf(i), ctx, out.notes);
        if (got && got !== "failed") {
            refs.set(s.ref, got.path);
            continue;
        }
        foreignRefs.set(s.ref, fieldOf(i));
        if (got !== "failed" && typeof s.path !== "string" && typeof s.chart !== "string")
            out.notes.push(`${other}, so its files ($${s.ref}/...) are not read`);
    }
    const owner: SourceOwner = {
        name: appName,
        who: `Application ${JSON.stringify(appName)}`,
        namespace,
        refs,
        remoteFile: remoteValueFile(ctx),
    };
    for (const [i, source] of sources.entries()) {
        const field = fieldOf(i);
        if (!source) {
            if (spec.sources !== undefined || spec.source !== undefined)
                out.notes.push(`${field} is not an object, so what it applies is not known`);
            continue;
        }
        const foreign = list(record(source.helm)?.valueFiles).find(
            (f) => typeof f === "string" && foreignRefs.has(/^\$([^/]+)\//.exec(f)?.[1] ?? ""),
        );
        if (typeof foreign === "string") {
            const ref = /^\$([^/]+)\//.exec(foreign)![1];
            out.notes.push(
                `${field}.helm.valueFiles: ${JSON.stringify(foreign)} is a file of ${foreignRefs.get(ref)}, another repository, which check does not read`,
            );
            continue;
        }
        try {
            renderSource(source, field, owner, ctx, out, app);
        } catch (e) {
            if (!(e instanceof SourceNotRendered)) throw e;
            out.notes.push(`${field}${e.message}`);
        }
    }
    return out;
}

/** Why check cannot render a source of a known folder (after its field's name), or undefined. */
function unrenderable(type: string, source: Obj, dir: string, app: Obj, ctx: RenderContext): string | undefined {
    if (type === "plugin")
        return `.plugin: a config management plugin renders ${JSON.stringify(source.path)}, which check does not run`;
    if (type === "helm") {
        const remote = remoteDependency(dir);
        if (remote !== undefined && !dependenciesFetchable(dir, ctx))
            return ` is a chart whose dependency ${JSON.stringify(remote)} comes from a chart repository (helm dependency build needs the network, which check does not use)`;
    }
    if (needsUnknownRevision(source, buildEnv(app, source, ctx.repository?.revision)))
        return " uses $ARGOCD_APP_REVISION, the commit Argo CD renders, which check does not know here (the repository root is not in a git repository with a commit)";
    return undefined;
}

/** One source (at `field`) rendered into `out` by its type, or named in `out.notes` when check cannot render it. */
function renderSource(
    written: Obj,
    field: string,
    owner: SourceOwner,
    ctx: RenderContext,
    out: ApplicationOutput,
    app: Obj,
) {
    let source = written;
    if (typeof source.chart === "string") {
        const req = chartRequest(source);
        const got = req && fetchedOrNoted(req, field, ctx, out.notes);
        if (got === "failed") return;
        if (!got) {
            out.notes.push(
                `${field} is chart ${JSON.stringify(source.chart)} from a Helm repository, which check does not read (it uses no network)`,
            );
            return;
        }
        const fetchedOut: SourceOutput = { files: [], streams: [], rendered: [], renders: 0 };
        helmSource(source, got.path, owner, fetchedContext(ctx, got, String(source.repoURL)), fetchedOut);
        mergeFetched(fetchedOut, got, out);
        return;
    }
    if (typeof source.path !== "string") return; // a `ref` source of value files only
    const other = otherRepository(source.repoURL, field, ctx.repository);
    if (other) {
        // Another repository's folder, fetched at the source's targetRevision and rendered as that repository's.
        const req = gitRequest(source);
        const got = req && fetchedOrNoted(req, field, ctx, out.notes);
        if (got === "failed") return;
        if (!got) {
            out.notes.push(`${other}, so ${JSON.stringify(source.path)} is not read from this one`);
            return;
        }
        const fetchedOut: ApplicationOutput = { files: [], streams: [], rendered: [], renders: 0, notes: [] };
        renderSource(written, field, owner, fetchedContext(ctx, got, String(source.repoURL)), fetchedOut, app);
        mergeFetched(fetchedOut, got, out);
        out.notes.push(...fetchedOut.notes);
        return;
    }
    const dir = path.resolve(ctx.repoRoot, source.path);
    const rel = path.relative(ctx.repoRoot, dir);
    if (rel.startsWith("..") || path.isAbsolute(rel) || !fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) {
        out.notes.push(
            `${field}.path ${JSON.stringify(source.path)} is not a folder of this repository (another repository's path is not read; ${rootInUse(ctx)})`,
        );
        return;
    }
    source = withOverrides(source, dir, app, owner.who, ctx);
    const explicit = ["helm", "kustomize", "directory", "plugin"].filter((t) => record(source[t]) !== undefined);
    if (explicit.length > 1)
        throw new BadInputError(
            `${owner.who}: its source sets more than one of ${explicit.join(", ")} (Argo CD refuses it)`,
        );
    const type = explicit[0] ?? discoveredType(dir);
    // The folder is this Application's input even when check cannot render it: never rendered again with defaults.
    out.rendered.push(dir);
    const why = unrenderable(type, source, dir, app, ctx);
    if (why) {
        out.notes.push(`${field}${why}`);
        return;
    }
    const env = buildEnv(app, source, ctx.repository?.revision);
    if (type === "kustomize") kustomizeSource(source, dir, ctx, out, env);
    else if (type === "helm") helmSource(source, dir, { env, ...owner }, ctx, out);
    else directorySource(source, dir, ctx, out, env);
}
