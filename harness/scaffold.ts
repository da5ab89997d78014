/**
 * `pko-guard test --init DIR`: a fixture from an existing program (or manifest folder) with its current verdict,
 * for the user to review: the program runs through the mock leg (a manifest folder through the manifest leg; a
 * program that is not Node through the real leg) with the run's packs and config, and expect.yaml lists exactly
 * what was reported (policy, resource, count, level), under the versioned header. Never overwrites an existing
 * expect.yaml. `pko-guard test --migrate`: expect.yaml files of the format from before versioning get the header
 * (nothing else changes; comments stay).
 */
import * as fs from "fs";
import * as path from "path";
import * as YAML from "yaml";
import { Row } from "../evaluation/rows";
import { BadInputError, ToolError } from "../support/errors";
import { FIXTURE_SCHEMA, migratedText, versionedHeader } from "./expect-file";
import { MOCK_RUNTIMES, bareFixture, discoverFixtures } from "./expect";
import { PackSpec } from "./packs";
import { LegChoice, runFixtures } from "./runner";

/** The schema path as the file's editor comment names it: relative to the file's folder, `/`-separated. */
export function schemaPathFrom(dir: string): string {
    return path.relative(dir, FIXTURE_SCHEMA).split(path.sep).join("/");
}

/** Rows grouped as expectations: one per policy and resource, with the count and the level they share. */
function expectations(rows: Row[]): { policy: string; resource: string; count: number; level?: string }[] {
    const groups = new Map<string, Row[]>();
    for (const r of rows) {
        const key = `${r.policy}\u0000${r.resource}`;
        groups.set(key, [...(groups.get(key) ?? []), r]);
    }
    return [...groups.values()]
        .map((g) => ({
            policy: g[0].policy,
            resource: g[0].resource,
            count: g.length,
            ...(g.every((r) => r.level === g[0].level) && (g[0].level === "mandatory" || g[0].level === "advisory")
                ? { level: g[0].level }
                : {}),
        }))
        .sort((a, b) => (a.policy + a.resource < b.policy + b.resource ? -1 : 1));
}

export interface InitResult {
    file: string;
    violations: number;
    leg: string;
}

/** Writes DIR/expect.yaml from the program's current verdict; bad input when it exists or the program fails. */
export async function scaffoldFixture(
    dir: string,
    o: { packs: PackSpec[]; config?: string; timeoutMs: number },
): Promise<InitResult> {
    const file = path.join(path.resolve(dir), "expect.yaml");
    if (fs.existsSync(file)) throw new BadInputError(`${dir}: expect.yaml exists already (review or remove it)`);
    const fixture = bareFixture(dir, { policyConfig: o.config });
    const leg: LegChoice = fixture.manifestsDir
        ? "manifest"
        : MOCK_RUNTIMES.includes(fixture.runtime)
          ? "mock"
          : "real";
    const onlyDefault = o.packs.length === 1 && o.packs[0].builtin;
    const chosen: LegChoice = leg === "manifest" && !onlyDefault ? "mock" : leg;
    const [verdict] = await runFixtures([fixture], { leg: chosen, timeoutMs: o.timeoutMs, packs: o.packs, jobs: 1 });
    const ran = verdict.legs.find((l) => l.status === "ran");
    if (!ran || ran.status !== "ran") {
        const why = verdict.legs.map((l) =>
            l.status === "error" ? l.message : l.status === "skipped" ? l.reason : "",
        );
        throw new ToolError(`${dir}: the ${chosen} leg could not run it: ${why.filter(Boolean).join("; ")}`);
    }
    const violations = expectations(ran.rows);
    const body = new YAML.Document({
        description: `${path.basename(path.resolve(dir))}: scaffolded by pko-guard test --init; review each violation`,
        ...(!MOCK_RUNTIMES.includes(fixture.runtime) && !fixture.manifestsDir
            ? { realOnly: `a ${fixture.runtime} program: the mock leg runs Node and Go programs only` }
            : {}),
        violations,
    });
    fs.writeFileSync(file, versionedHeader(schemaPathFrom(path.dirname(file))) + body.toString({ lineWidth: 0 }));
    return { file, violations: violations.length, leg: ran.leg };
}

/** Adds the versioned header to every expect.yaml under `paths` that lacks it; answers what it did. */
export function migrateFixtures(paths: string[]): { migrated: string[]; current: number } {
    const dirs = paths.flatMap((p) =>
        fs.existsSync(path.join(p, "expect.yaml")) ? [path.resolve(p)] : discoverFixtures(p),
    );
    if (dirs.length === 0) throw new BadInputError("no fixtures found");
    const migrated: string[] = [];
    let current = 0;
    for (const dir of dirs) {
        const file = path.join(dir, "expect.yaml");
        const text = migratedText(file, schemaPathFrom(dir));
        if (text === undefined) {
            current++;
            continue;
        }
        const tmp = `${file}.${process.pid}.tmp`;
        fs.writeFileSync(tmp, text);
        fs.renameSync(tmp, file);
        migrated.push(file);
    }
    return { migrated, current };
}
