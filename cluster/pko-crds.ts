/**
 * The PKO API as data: the structural CustomResourceDefinitions of Stack, Program (pulumi.com), Workspace
 * and Update (auto.pulumi.com), generated from PKO v2.9.0's Go API types by controller-gen and committed
 * under schemas/pko/<version>/ (see its PROVENANCE.md and schemas/pko/generate.sh).
 */
import * as fs from "fs";
import * as path from "path";
import * as YAML from "yaml";
import { BadInputError } from "../support/errors";
import { REPO_ROOT } from "../support/paths";

/** The PKO release the committed CRDs were generated from. */
export const PKO_API_VERSION = "v2.9.0";
export const PKO_CRD_DIR = path.join(REPO_ROOT, "schemas", "pko", PKO_API_VERSION);
export const PKO_CRD_FILES: readonly string[] = [
    "pulumi.com_stacks.yaml",
    "pulumi.com_programs.yaml",
    "auto.pulumi.com_workspaces.yaml",
    "auto.pulumi.com_updates.yaml",
];

export type Schema = Record<string, unknown>;

export interface PkoCrdVersion {
    /** `group/version`, as in an object's apiVersion. */
    apiVersion: string;
    kind: string;
    served: boolean;
    schema: Schema;
}

interface Crd {
    kind?: string;
    spec?: {
        group?: string;
        names?: { kind?: string };
        versions?: { name?: string; served?: boolean; schema?: { openAPIV3Schema?: Schema } }[];
    };
}

/** Every version of every committed PKO CRD, keyed `apiVersion/kind` (e.g. `pulumi.com/v1/Stack`). */
export function loadPkoCrds(dir: string = PKO_CRD_DIR): Map<string, PkoCrdVersion> {
    const out = new Map<string, PkoCrdVersion>();
    for (const file of PKO_CRD_FILES) {
        const full = path.join(dir, file);
        if (!fs.existsSync(full))
            throw new BadInputError(`PKO CRD ${full} not found (regenerate with schemas/pko/generate.sh)`);
        for (const [gvk, v] of loadCrdVersions(full)) out.set(gvk, v);
    }
    return out;
}

/** Every version of the CustomResourceDefinition in `file` (a committed one: PKO's, Argo CD's), keyed `apiVersion/kind`. */
export function loadCrdVersions(file: string): Map<string, PkoCrdVersion> {
    const out = new Map<string, PkoCrdVersion>();
    const crd = YAML.parse(fs.readFileSync(file, "utf8")) as Crd;
    const group = crd?.spec?.group;
    const kind = crd?.spec?.names?.kind;
    if (crd?.kind !== "CustomResourceDefinition" || !group || !kind)
        throw new BadInputError(`${file} is not a CustomResourceDefinition`);
    for (const v of crd.spec?.versions ?? []) {
        const schema = v.schema?.openAPIV3Schema;
        if (!v.name || !schema) throw new BadInputError(`${file}: version ${String(v.name)} has no openAPIV3Schema`);
        out.set(`${group}/${v.name}/${kind}`, {
            apiVersion: `${group}/${v.name}`,
            kind,
            served: v.served === true,
            schema,
        });
    }
    return out;
}
