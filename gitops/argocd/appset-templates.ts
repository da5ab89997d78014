/**
 * An ApplicationSet's templates filled with parameter sets, in either syntax: Argo CD's default (`{{ key }}`
 * replaced in every string and map key) here, and with `goTemplate` Go templates executed by the toolchain's
 * appset-template (text/template with sprig and Argo CD's functions, `goTemplateOptions` applied).
 */
import { RenderContext, runTool } from "../render/render";
import { list, record } from "../../support/records";

type Obj = Record<string, unknown>;

/** Argo CD's default template syntax: `{{ key }}` replaced in every string and map key; unknown keys stay as written. */
export function substitute(v: unknown, params: Obj): unknown {
    if (typeof v === "string") {
        return v.replace(/\{\{([^{}]*)\}\}/g, (all, expr: string) => {
            const value = params[expr.trim()];
            return typeof value === "string" ? value : all; // fasttemplate leaves unknown keys as they are
        });
    }
    if (Array.isArray(v)) return v.map((x) => substitute(x, params));
    const o = record(v);
    if (o)
        return Object.fromEntries(
            Object.entries(o).map(([k, x]) => [substitute(k, params) as string, substitute(x, params)]),
        );
    return v;
}

/**
 * `template` executed as a Go template with each parameter set (and the git generator's `values`), in one run of
 * the toolchain's appset-template with the set's `goTemplateOptions`: one result a set, its value or its error.
 */
export function executeGoTemplates(
    template: Obj,
    params: Obj[],
    spec: Obj,
    values: Record<string, string> | undefined,
    ctx: RenderContext,
    who: string,
): { app?: Obj; error?: string }[] {
    const options = list(spec.goTemplateOptions).filter((x): x is string => typeof x === "string");
    const input = JSON.stringify({ template, params, options, ...(values ? { values } : {}) });
    const out = runTool("appset-template", [], `${who} (goTemplate)`, ctx, { cwd: ctx.repoRoot, input });
    return (JSON.parse(out) as { results: { app?: Obj; error?: string }[] }).results;
}
