/**
 * Argo CD's build environment and where its repo server substitutes it, so check renders what Argo CD renders.
 * The variables are reposerver/repository/repository.go `newEnv`'s (ARGOCD_APP_REVISION is the checked working
 * tree's HEAD); `KUBE_VERSION`/`KUBE_API_VERSIONS` exist only for config management plugins, so here they
 * substitute to nothing. Substitution (`Env.Envsubst`: os.Expand with `$$` for `$`) applies only where Argo CD
 * applies it: Helm parameters, value files and file parameters (never `values`); kustomize `images` and
 * `commonLabels` (annotations only with `commonAnnotationsEnvsubst`); jsonnet TLAs and ext vars.
 */
import { list, record, str } from "../../support/records";
import { instanceName } from "./source-overrides";

type Obj = Record<string, unknown>;

/** The build environment of one source: name to value; the revision entries are absent when it is unknown. */
export type BuildEnv = Map<string, string>;

export const REVISION_VARS = ["ARGOCD_APP_REVISION", "ARGOCD_APP_REVISION_SHORT", "ARGOCD_APP_REVISION_SHORT_8"];

/** The environment Argo CD's repo server builds for `source` of `app`, at commit `revision` when known. */
export function buildEnv(app: Obj, source: Obj, revision: string | undefined): BuildEnv {
    const spec = record(app.spec) ?? {};
    const env: BuildEnv = new Map([
        // The instance name (controller/state.go sends `app.InstanceName(controlPlaneNamespace)`): `<ns>_<name>` for
        // an Application outside the control plane's namespace.
        ["ARGOCD_APP_NAME", instanceName(app)],
        ["ARGOCD_APP_NAMESPACE", str(record(spec.destination)?.namespace) ?? ""],
        ["ARGOCD_APP_PROJECT_NAME", str(spec.project) ?? ""],
        ["ARGOCD_APP_SOURCE_REPO_URL", str(source.repoURL) ?? ""],
        ["ARGOCD_APP_SOURCE_PATH", str(source.path) ?? ""],
        ["ARGOCD_APP_SOURCE_TARGET_REVISION", str(source.targetRevision) ?? ""],
    ]);
    if (revision !== undefined) {
        env.set("ARGOCD_APP_REVISION", revision);
        env.set("ARGOCD_APP_REVISION_SHORT", revision.slice(0, 7));
        env.set("ARGOCD_APP_REVISION_SHORT_8", revision.slice(0, 8));
    }
    return env;
}

const SPECIAL = /^[*#$@!?\-0-9]$/;
const ALNUM = /^[A-Za-z0-9_]$/;

/** Go's os `getShellName`: the name after a `$` and how many characters it takes (name "" and 0: not a name). */
function shellName(s: string): [string, number] {
    if (s[0] === "{") {
        if (s.length > 2 && SPECIAL.test(s[1]) && s[2] === "}") return [s[1], 3];
        for (let i = 1; i < s.length; i++) if (s[i] === "}") return i === 1 ? ["", 2] : [s.slice(1, i), i + 1];
        return ["", 1];
    }
    if (SPECIAL.test(s[0])) return [s[0], 1];
    let i = 0;
    while (i < s.length && ALNUM.test(s[i])) i++;
    return [s.slice(0, i), i];
}

/** Go's os.Expand with `name` mapped through `lookup`. */
function expand(s: string, lookup: (name: string) => string): string {
    let out = "";
    let from = 0;
    for (let j = 0; j < s.length; j++) {
        if (s[j] !== "$" || j + 1 >= s.length) continue;
        out += s.slice(from, j);
        const [name, w] = shellName(s.slice(j + 1));
        if (name === "" && w === 0) out += "$";
        else if (name !== "") out += lookup(name);
        // else: bad syntax (`${}`, an unclosed `${`), whose characters Go drops
        j += w;
        from = j + 1;
    }
    return out + s.slice(from);
}

/** `Env.Envsubst`: `$$` is `$`, a known name its value, any other name nothing. */
export function envsubst(s: string, env: BuildEnv): string {
    return expand(s, (name) => (name === "$" ? "$" : (env.get(name) ?? "")));
}

/** The names a string refers to, as `envsubst` reads them. */
function namesIn(s: string): string[] {
    const names: string[] = [];
    expand(s, (name) => {
        names.push(name);
        return "";
    });
    return names;
}

const strings = (v: unknown): string[] => list(v).filter((x): x is string => typeof x === "string");
const values = (v: unknown): string[] => Object.values(record(v) ?? {}).map((x) => String(x));
const named = (v: unknown, key: string): string[] =>
    list(v)
        .map(record)
        .flatMap((x) => (x && x[key] !== undefined ? [String(x[key])] : []));

/** The strings of a source Argo CD substitutes (its Helm, kustomize and jsonnet places above). */
export function substitutedStrings(source: Obj): string[] {
    const h = record(source.helm) ?? {};
    const k = record(source.kustomize) ?? {};
    const j = record(record(source.directory)?.jsonnet) ?? {};
    return [
        ...named(h.parameters, "value"),
        ...strings(h.valueFiles),
        ...named(h.fileParameters, "path"),
        ...strings(k.images),
        ...values(k.commonLabels),
        ...(k.commonAnnotationsEnvsubst === true ? values(k.commonAnnotations) : []),
        ...named(j.tlas, "value"),
        ...named(j.extVars, "value"),
    ];
}

/** Whether a source's substituted strings use the revision, which `env` does not know. */
export function needsUnknownRevision(source: Obj, env: BuildEnv): boolean {
    if (env.has("ARGOCD_APP_REVISION")) return false;
    return substitutedStrings(source).some((s) => namesIn(s).some((n) => REVISION_VARS.includes(n)));
}
