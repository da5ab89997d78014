/**
 * The Applications an Argo CD `ApplicationSet` would create: its generators' parameter sets (./generators.ts)
 * applied to its template, with `goTemplate` by the toolchain's appset-template (Go templates with Argo CD's
 * functions). What is not expanded is named (`notExpanded`) and the set fails closed.
 */
import { BadInputError } from "../../support/errors";
import { RenderContext } from "../render/render";
import { executeGoTemplates, substitute } from "./appset-templates";
import { GenEnv, MAX_APPLICATIONS, generatorParams } from "./generators";
import { extended } from "../../support/shapes";
import { list, record, str } from "../../support/records";

type Obj = Record<string, unknown>;

export interface AppSetExpansion {
    applications: Obj[];
    /**
     * Why some of its Applications could not be computed here (a generator or feature check does not expand,
     * a template that does not execute), one line each naming the field (`spec.generators[1]`): the set fails
     * closed (argocd-app-rendered).
     */
    notExpanded: string[];
}

/**
 * `goTemplate: true`: every string of the template executed as a Go template by the toolchain's
 * appset-template (text/template with sprig and Argo CD's functions, `goTemplateOptions` applied), one run for
 * all parameter sets of a generator. A set whose template does not execute is named, never guessed.
 */
function goTemplates(
    template: Obj,
    params: Obj[],
    spec: Obj,
    values: Record<string, string> | undefined,
    ctx: RenderContext,
    who: string,
): { apps: Obj[]; failed: number; reason?: string } {
    if (params.length === 0) return { apps: [], failed: 0 };
    const results = executeGoTemplates(template, params, spec, values, ctx, who);
    const apps = results.map((r) => r.app).filter((a): a is Obj => !!record(a));
    const firstError = results.find((r) => typeof r.error === "string")?.error;
    return { apps, failed: results.length - apps.length, reason: firstError };
}

/** The Applications of one generator's parameter sets (at `field`); those that do not render are named in `notExpanded`. */
function generatedApplications(
    template: Obj,
    generated: { params: Obj[]; values?: Record<string, string> },
    field: string,
    env: GenEnv,
    notExpanded: string[],
): Obj[] {
    const { params, values } = generated;
    if (env.goTemplate) {
        const t = goTemplates(template, params, env.spec, values, env.ctx, env.who);
        if (t.failed > 0)
            notExpanded.push(
                `spec.template: ${t.failed} of the Applications of ${field} do not render (${t.reason ?? "template error"}), so Argo CD creates none of them`,
            );
        return t.apps;
    }
    return params.map((p) => {
        const flat = { ...p };
        // Flat values: rendered with the generator's parameters, then offered as `values.<key>`.
        for (const [k, v] of Object.entries(values ?? {})) flat[`values.${k}`] = substitute(v, p);
        return substitute(template, flat) as Obj;
    });
}

/** The Applications an ApplicationSet creates from its list, git (directories, files), matrix and merge generators. */
export function expandApplicationSet(appset: Obj, ctx: RenderContext): AppSetExpansion {
    const meta = record(appset.metadata) ?? {};
    const spec = record(appset.spec) ?? {};
    const name = str(meta.name) ?? "(unnamed)";
    const goTemplate = spec.goTemplate === true;
    const template = record(spec.template) ?? {};
    const result: AppSetExpansion = { applications: [], notExpanded: [] };
    if (spec.templatePatch !== undefined) {
        result.notExpanded.push("spec.templatePatch is not applied by check, so none of its Applications is expanded");
        return result;
    }
    const env: GenEnv = { spec, goTemplate, ctx, who: `ApplicationSet ${JSON.stringify(name)}` };
    let generated = 0;
    for (const [i, g] of list(spec.generators).entries()) {
        const field = `spec.generators[${i}]`;
        const r = generatorParams(record(g), field, 0, env);
        if ("reason" in r) {
            result.notExpanded.push(r.reason);
            continue;
        }
        if (r.params.length > MAX_APPLICATIONS)
            throw new BadInputError(
                `${env.who}: ${field} generates more than ${MAX_APPLICATIONS} Applications (check's limit)`,
            );
        generated += r.params.length;
        if (generated > MAX_APPLICATIONS)
            throw new BadInputError(
                `${env.who}: its generators create more than ${MAX_APPLICATIONS} Applications (check's limit)`,
            );
        for (const app of generatedApplications(template, r, field, env, result.notExpanded)) {
            const m = record(app.metadata) ?? {};
            // Argo CD creates every Application in the ApplicationSet's namespace, whatever the template says.
            result.applications.push({
                apiVersion: "argoproj.io/v1alpha1",
                kind: "Application",
                ...app,
                metadata: extended(m, { namespace: str(meta.namespace) }),
            });
        }
    }
    return result;
}
