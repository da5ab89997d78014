/**
 * The provider-side components the mock leg expands besides yaml/v2 (./mock-yaml.ts): `kubernetes:helm.sh/v4:Chart`
 * and `kubernetes:kustomize/v2:Directory` from local folders, rendered with the real tools; and the list of
 * components it expands.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { BadInputError } from "../../support/errors";
import { installCommand } from "../../support/toolchain";
import { runTool } from "../../gitops/render/render";
import { findTool } from "../../gitops/render/tools";
import { CheckContext } from "./mock-check";
import { ChildRegistration, registerObjects } from "./mock-register";
import { decodeDocuments } from "./mock-yaml";
import { MockRefusal, Obj, SIG_KEY, hasUnknown, isObj, unwrap } from "./mock-wire";

const ASSET_SIG = "c44067f5952c0a294b673a41bacd8c17";
const REMOTE_REF = /^(?:[a-z][a-z0-9+.-]*:\/\/|git@|github\.com\/)|\?ref=/i;

/** Runs a rendering tool for a component: a missing tool is a refusal, a failed render the component's error. */
function renderFor(tool: "helm" | "kustomize", args: string[], what: string, cwd: string): string {
    if (!findTool(tool))
        throw new MockRefusal(
            `cannot expand ${what} in the mock leg: ${tool} is not installed (run: ${installCommand(tool)})`,
        );
    try {
        return runTool(tool, args, what, { deadline: Date.now() + 120_000, repoRoot: cwd, show: (p) => p }, { cwd });
    } catch (e) {
        if (e instanceof BadInputError) throw new Error(e.message);
        throw e;
    }
}

/**
 * `kubernetes:helm.sh/v4:Chart` with a local chart: `helm template` (hooks left out, CRDs unless skipCrds,
 * the release name `name` or the component's, `values` and `valueYamlFiles`), then the yaml/v2 path with the
 * component's name as the prefix and the Chart's namespace (else the provider's) as the default.
 * Charts from a repository or an OCI registry are refused (they need the network).
 */
export function expandHelmV4(
    componentName: string,
    inputs: Obj,
    programDir: string,
    ctx: CheckContext,
): ChildRegistration[] {
    const what = `kubernetes:helm.sh/v4:Chart "${componentName}"`;
    if (hasUnknown(inputs))
        throw new MockRefusal(`cannot expand ${what} in the mock leg: its inputs are unknown in preview`);
    const valueFiles = (Array.isArray(inputs.valueYamlFiles) ? inputs.valueYamlFiles : []).map((a) =>
        isObj(a) && a[SIG_KEY] === ASSET_SIG && typeof a.path === "string" ? a.path : undefined,
    );
    const args = unwrap(inputs) as Obj;
    const chart = typeof args.chart === "string" ? args.chart : "";
    const repo =
        isObj(args.repositoryOpts) && typeof args.repositoryOpts.repo === "string" ? args.repositoryOpts.repo : "";
    const dir = path.resolve(programDir, chart);
    if (repo !== "" || REMOTE_REF.test(chart) || !fs.existsSync(path.join(dir, "Chart.yaml"))) {
        throw new MockRefusal(
            `cannot expand ${what} in the mock leg: the chart comes from a repository or registry (it needs the network)`,
        );
    }
    if (valueFiles.some((f) => f === undefined))
        throw new MockRefusal(
            `cannot expand ${what} in the mock leg: a valueYamlFiles entry is not a local file asset`,
        );
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-chart-"));
    try {
        const namespace = typeof args.namespace === "string" ? args.namespace : "";
        const cli = [
            "template",
            typeof args.name === "string" && args.name !== "" ? args.name : componentName,
            dir,
            "--no-hooks",
        ];
        if (namespace) cli.push("--namespace", namespace);
        if (args.skipCrds !== true) cli.push("--include-crds");
        for (const f of valueFiles) cli.push("--values", path.resolve(programDir, f!));
        if (isObj(args.values)) {
            fs.writeFileSync(path.join(tmp, "values.json"), JSON.stringify(args.values));
            cli.push("--values", path.join(tmp, "values.json"));
        }
        const text = renderFor("helm", cli, what, programDir);
        const prefix = typeof inputs.resourcePrefix === "string" ? inputs.resourcePrefix : componentName;
        return registerObjects(
            decodeDocuments(text, (o) => Object.keys(o).length > 0),
            prefix,
            namespace || ctx.defaultNamespace,
            args.skipAwait === true,
            ctx,
        );
    } finally {
        fs.rmSync(tmp, { recursive: true, force: true });
    }
}

/**
 * `kubernetes:kustomize/v2:Directory` with a local kustomization: `kustomize build` with the provider's
 * options (no load restrictions, no reordering), then the yaml/v2 path (prefix: the component's name;
 * default namespace: `namespace`, else the provider's). Remote directories are refused.
 */
export function expandKustomizeV2(
    componentName: string,
    inputs: Obj,
    programDir: string,
    ctx: CheckContext,
): ChildRegistration[] {
    const what = `kubernetes:kustomize/v2:Directory "${componentName}"`;
    if (hasUnknown(inputs))
        throw new MockRefusal(`cannot expand ${what} in the mock leg: its inputs are unknown in preview`);
    const args = unwrap(inputs) as Obj;
    const directory = typeof args.directory === "string" ? args.directory : "";
    if (REMOTE_REF.test(directory))
        throw new MockRefusal(
            `cannot expand ${what} in the mock leg: the kustomization is remote (it needs the network)`,
        );
    const dir = path.resolve(programDir, directory);
    const text = renderFor(
        "kustomize",
        ["build", "--load-restrictor", "LoadRestrictionsNone", "--reorder", "none", dir],
        what,
        programDir,
    );
    const prefix = typeof inputs.resourcePrefix === "string" ? inputs.resourcePrefix : componentName;
    const namespace =
        typeof args.namespace === "string" && args.namespace !== "" ? args.namespace : ctx.defaultNamespace;
    return registerObjects(
        decodeDocuments(text, (o) => Object.keys(o).length > 0),
        prefix,
        namespace,
        args.skipAwait === true,
        ctx,
    );
}

/** Provider-side components the mock leg expands, and why the others cannot be. */
export const EXPANDABLE_COMPONENTS = new Set([
    "kubernetes:yaml/v2:ConfigGroup",
    "kubernetes:yaml/v2:ConfigFile",
    "kubernetes:helm.sh/v4:Chart",
    "kubernetes:kustomize/v2:Directory",
]);
export const REFUSED_COMPONENTS: Record<string, string> = {};
