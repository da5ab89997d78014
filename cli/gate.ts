/**
 * The CI compliance gate for users' own Pulumi projects: a real `pulumi preview --policy-pack <pko-guard>`
 * of the project's stack (with the user's own backend and credentials), judged by enforcement level:
 * mandatory findings block, advisory ones block only with --fail-on-advisory.
 */
import * as fs from "fs";
import * as path from "path";
import * as YAML from "yaml";
import { policies } from "../policies";
import { BadInputError, ToolError } from "../support/errors";
import { locateRows } from "../engine/source-locations";
import { PACK_DIR } from "../support/paths";
import { packConfig, yamlErrorPosition } from "../evaluation/pack-config";
import { previewWithPack, userEnv } from "../engine/pulumi-cli";
import { ProjectSubject, errorProjectSubject } from "../reports/subject";
import { judgeRows, waiverNotices } from "../evaluation/judge";
import { findGateCli } from "../support/toolchain";

export interface GateOptions {
    projectDir: string;
    stack: string;
    config?: string;
    failOnAdvisory: boolean;
    timeoutMs: number;
}

function projectInfo(dir: string): { name: string; main: string } {
    const file = path.join(dir, "Pulumi.yaml");
    if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory())
        throw new BadInputError(`${dir}: no such project folder`);
    if (!fs.existsSync(file)) throw new BadInputError(`${dir}: no Pulumi.yaml (not a Pulumi project)`);
    let doc: { name?: unknown; main?: unknown; runtime?: unknown } | null;
    try {
        doc = YAML.parse(fs.readFileSync(file, "utf8"));
    } catch (e) {
        throw new BadInputError(`${file}: not valid YAML${yamlErrorPosition(e)}`);
    }
    if (typeof doc?.name !== "string") throw new BadInputError(`${file}: missing project name`);
    const runtime =
        typeof doc.runtime === "string" ? doc.runtime : (doc.runtime as { name?: unknown } | undefined)?.name;
    // A Pulumi YAML program is Pulumi.yaml itself.
    const main =
        typeof doc.main === "string"
            ? doc.main
            : runtime === "yaml"
              ? "Pulumi.yaml"
              : fs.existsSync(path.join(dir, "index.ts"))
                ? "index.ts"
                : "index.js";
    return { name: doc.name, main };
}

/** Previews the project's stack with the pack and judges the findings; the result is a report subject. */
export async function runGate(o: GateOptions): Promise<ProjectSubject> {
    const started = Date.now();
    const dir = path.resolve(o.projectDir);
    const project = projectInfo(dir);
    const config = packConfig(o.config);
    const cli = findGateCli();
    const preview = await previewWithPack(
        { cli, cwd: dir, env: userEnv(cli), stack: o.stack, timeoutMs: o.timeoutMs },
        {
            dir: PACK_DIR,
            config: o.config ? path.resolve(o.config) : undefined,
            descriptions: new Map(policies.map((p) => [p.name, p.description])),
        },
        // The event stream is read incrementally and only policy events are kept (however large the preview).
        { keepOutput: false },
    );
    if (preview.error) throw new ToolError(preview.error);
    const findings = locateRows(judgeRows(preview.rows, o.failOnAdvisory), dir, project.main);
    return {
        kind: "project",
        name: project.name,
        stack: o.stack,
        description: `pko-guard gate of ${project.name} (stack ${o.stack})`,
        programFile: path.join(dir, project.main),
        findings,
        notices: waiverNotices(config, findings),
        outcome: findings.some((f) => f.status === "blocking") ? "fail" : "pass",
        durationMs: Date.now() - started,
    };
}

/** The subject of a gate that could not run: every report still renders it, saying why. */
export function errorSubject(
    o: { projectDir: string; stack: string },
    message: string,
    durationMs: number,
): ProjectSubject {
    const dir = path.resolve(o.projectDir);
    let name = path.basename(dir) || dir;
    let main = "Pulumi.yaml";
    try {
        const p = projectInfo(dir);
        name = p.name;
        main = p.main;
    } catch {
        // the project itself is what is wrong: name it by its folder
    }
    return errorProjectSubject(
        {
            name,
            stack: o.stack,
            description: `pko-guard gate of ${name} (stack ${o.stack})`,
            programFile: path.join(dir, main),
        },
        message,
        durationMs,
    );
}
