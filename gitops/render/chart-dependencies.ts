/**
 * `helm dependency build` as Argo CD's repo server runs it for a chart whose dependencies come from chart
 * repositories, done under the network policy (gitops/fetch/): each dependency that is not vendored into `charts/`
 * is fetched (a Helm repository by URL, or by the name `@name`/`alias:name` of the user's repositories.yaml; an
 * OCI registry) at the version Chart.lock pins, else at Chart.yaml's constraint (resolved by helm), and put into
 * `charts/` of a copy of the chart, which is what helm then renders.
 */
import * as fs from "fs";
import * as path from "path";
import { BadInputError } from "../../support/errors";
import { helmRepoUrlByName } from "../fetch/source-credentials";
import { FetchError, FetchRequest, FetchedSource, fetchForRun, fromCache } from "../fetch/fetch";
import { RenderContext, SourceNotFetched, mappingOf } from "./render";
import { withinDeadline } from "../fetch/network-policy";

type Obj = Record<string, unknown>;

/** A dependency of Chart.yaml that is fetched: its name and what to fetch. */
interface Wanted {
    name: string;
    req: FetchRequest;
}

function records(v: unknown): Obj[] {
    return Array.isArray(v) ? v.filter((x): x is Obj => x !== null && typeof x === "object") : [];
}

/** The dependencies of the chart in `dir` to fetch (from repositories, not vendored), each with its request. */
function wanted(dir: string, what: string): Wanted[] {
    const chart = mappingOf(fs.readFileSync(path.join(dir, "Chart.yaml"), "utf8"));
    const lockFile = path.join(dir, "Chart.lock");
    const lock = fs.existsSync(lockFile) ? mappingOf(fs.readFileSync(lockFile, "utf8")) : {};
    const locked = new Map(records(lock.dependencies).map((d) => [String(d.name), String(d.version ?? "")]));
    const vendored = fs.existsSync(path.join(dir, "charts")) ? fs.readdirSync(path.join(dir, "charts")) : [];
    const out: Wanted[] = [];
    for (const d of records(chart.dependencies)) {
        const name = String(d.name ?? "");
        let repo = typeof d.repository === "string" ? d.repository.trim() : "";
        if (repo === "" || repo.startsWith("file://") || vendored.some((f) => f.startsWith(name))) continue;
        const version = locked.get(name) ?? (typeof d.version === "string" ? d.version : "");
        const alias = /^(?:@|alias:)(.+)$/.exec(repo);
        if (alias) {
            const url = helmRepoUrlByName(alias[1]);
            if (!url)
                throw new BadInputError(
                    `${what}: dependency ${JSON.stringify(name)} names repository ${JSON.stringify(alias[1])}, which Helm's repositories.yaml does not hold`,
                );
            repo = url;
        }
        out.push({
            name,
            req: repo.startsWith("oci://")
                ? { kind: "oci", url: `${repo.replace(/\/+$/, "")}/${name}`, version }
                : { kind: "helm", url: repo, chart: name, version },
        });
    }
    return out;
}

/** Whether every dependency a chart fetches can be had under the run's policy (offline: from the cache). */
export function dependenciesFetchable(dir: string, ctx: RenderContext): boolean {
    if (!ctx.fetch) return false;
    if (!ctx.fetch.offline) return true;
    try {
        return wanted(dir, "").every((w) => fromCache(w.req, ctx.fetch!) !== undefined);
    } catch {
        return false;
    }
}

/** A fetched dependency's folder in a chart copy, and the source it came from. */
export interface FetchedDependency {
    /** The dependency's folder in the copy (`<copy>/charts/<name>`). */
    dir: string;
    source: FetchedSource;
}

/**
 * Copies the chart in `dir` to `into` and fetches its dependencies into `into/charts/`; what it fetched. A fetch
 * that fails is one line (BadInputError), naming the dependency.
 */
export function buildDependencies(dir: string, into: string, ctx: RenderContext, what: string): FetchedDependency[] {
    const policy = ctx.fetch!;
    fs.cpSync(dir, into, { recursive: true, dereference: false });
    const out: FetchedDependency[] = [];
    for (const w of wanted(dir, what)) {
        let got: FetchedSource;
        try {
            got = fetchForRun(w.req, withinDeadline(policy, ctx.deadline), (ctx.fetched ??= []));
        } catch (e) {
            if (!(e instanceof FetchError)) throw e;
            throw new SourceNotFetched(`${what}: dependency ${JSON.stringify(w.name)}: ${e.message}`);
        }
        const target = path.join(into, "charts", w.name);
        fs.rmSync(target, { recursive: true, force: true });
        fs.mkdirSync(path.dirname(target), { recursive: true });
        fs.cpSync(got.path, target, { recursive: true, dereference: false });
        out.push({ dir: target, source: got });
    }
    return out;
}
