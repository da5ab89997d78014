/**
 * Evaluating loaded manifests: the pack's own policies run in-process (evaluation/evaluate.ts) over every object,
 * and each row is located at the object's file, and the line and column of the field it is about. Shared by
 * `pko-guard check` and the harness's manifest leg.
 */
import { MessageFacts } from "../../policies/model/message";
import { EvalRow, evaluatePack } from "../../evaluation/evaluate";
import { PackConfig } from "../../evaluation/pack-config";
import { Row, sortRows } from "../../evaluation/rows";
import { STDIN_FILE } from "./files";
import { LoadResult, ManifestObject, evalResources } from "./manifest-objects";
import { duplicateRows } from "./scopes";

/**
 * The field a row points at: the one its rule gave as data (`RuleFinding.field`), else none (the object's line).
 * Never read from the message: a message names fields as advice too ("use spec.secretsRef"), and quotes input.
 */
export function rowField(r: EvalRow): string | undefined {
    return r.field || undefined;
}

/** A row as reports give it: at its object's file and the line and column of its field (as is when no object is known). */
export type LocatedRow = Row & { facts: MessageFacts };

/** Where a row's field is in its object (the object's own line when the row names no field). */
export function rowPosition(
    r: EvalRow,
    obj: Pick<ManifestObject, "line" | "column" | "locate">,
    field = rowField(r),
): { line: number; column: number } {
    return field ? obj.locate(field) : { line: obj.line, column: obj.column };
}

/** A row at its object's file, line and column (`at`: from rowPosition, here or in the thread that read the object). */
export function locatedRow(
    r: EvalRow,
    obj: (Pick<ManifestObject, "repoPath" | "abs" | "syncedBy"> & { file?: string }) | undefined,
    at: { line: number; column: number } | undefined,
    field = obj && at ? rowField(r) : undefined,
): LocatedRow {
    const { field: _field, ...plain } = r;
    if (!obj || !at) return plain;
    // Repository-relative, else a fetched source's `<url>@<resolved>/<path>`, else absolute, else standard input
    // (the location rule of reports/location.ts).
    // Set as spreading them would (appended, or in place when the row has the key), on the row's own copy:
    // not a spread literal (support/shapes.ts).
    const located: LocatedRow = plain;
    located.file = obj.repoPath ?? (/^[a-z][a-z0-9+.-]*:\/\//i.test(obj.file ?? "") ? obj.file : obj.abs) ?? STDIN_FILE;
    located.line = at.line;
    located.column = at.column;
    if (field) located.field = field;
    if (obj.syncedBy) located.syncedBy = obj.syncedBy;
    return located;
}

/** Evaluates loaded manifests with a reconciled config; rows located at file:line:column, with their findings' facts. */
export function evaluateManifests(load: LoadResult, config: PackConfig): LocatedRow[] {
    return locateRows(load, evaluatePack(evalResources(load.objects), config));
}

/** The pack's rows over a load, and a finding for each object defined twice, sorted and located. */
export function locateRows(load: LoadResult, judged: EvalRow[]): LocatedRow[] {
    const byUrn = new Map<string, ManifestObject>(load.objects.map((o) => [o.urn, o]));
    const rows = [...judged, ...duplicateRows(load.duplicates ?? [])];
    return sortRows<LocatedRow>(
        rows.map((r) => {
            const obj = byUrn.get(r.urn);
            if (!obj) return locatedRow(r, obj, undefined);
            const field = rowField(r);
            return locatedRow(r, obj, rowPosition(r, obj, field), field);
        }),
    );
}
