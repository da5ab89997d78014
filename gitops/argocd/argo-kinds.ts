/**
 * Which objects are Argo CD's Applications and ApplicationSets, apart from what renders them (./applications.ts), so
 * that reading a repository can tell whether it needs Argo CD's code at all without loading it.
 */
type Obj = Record<string, unknown>;

export function isApplication(o: Obj): boolean {
    return o.kind === "Application" && typeof o.apiVersion === "string" && o.apiVersion.startsWith("argoproj.io/");
}
export function isApplicationSet(o: Obj): boolean {
    return o.kind === "ApplicationSet" && typeof o.apiVersion === "string" && o.apiVersion.startsWith("argoproj.io/");
}
