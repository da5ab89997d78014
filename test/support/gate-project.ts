/**
 * The user's project the gate's real-toolchain specs run on, outside this repository: a git repository in a
 * temporary folder with the Pulumi program in infra/ (Pulumi.yaml, index.ts, this repository's node_modules
 * linked) and an isolated stack `dev` (harness/throwaway-stacks.ts). Call it inside a `describe`: it registers the
 * suite's `before` (which needs the toolchain: requireToolchain) and `after` (which removes the folder).
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { CLI_ENTRY, REPO_ROOT } from "../../support/paths";
import { StackRef } from "../../engine/pulumi-cli";
import { initIsolatedStack } from "../../harness/throwaway-stacks";
import { requireToolchain } from "./helpers";

/** The installed command, as `bin` runs it. */
export const CLI = CLI_ENTRY;

export interface GateProject {
    /** The repository's root (a temporary folder holding `.git`). */
    root: string;
    /** The program's folder, root/infra. */
    infra: string;
    /** The stack `dev`, set up by the suite's `before`: its environment runs the Pulumi CLI against it. */
    stack: StackRef;
}

export function gateProject(o: {
    prefix: string;
    name: string;
    program: string;
    setup?: (root: string) => void;
}): GateProject {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), `pko-guard-${o.prefix}-`));
    const project = { root, infra: path.join(root, "infra") } as GateProject;
    before(async function () {
        const toolchain = requireToolchain(this);
        fs.mkdirSync(path.join(root, ".git"));
        fs.mkdirSync(project.infra);
        fs.writeFileSync(path.join(project.infra, "Pulumi.yaml"), `name: ${o.name}\nruntime: nodejs\n`);
        fs.writeFileSync(path.join(project.infra, "index.ts"), o.program);
        fs.symlinkSync(path.join(REPO_ROOT, "node_modules"), path.join(project.infra, "node_modules"));
        o.setup?.(root);
        const s = await initIsolatedStack(toolchain, project.infra, path.join(root, ".pulumi-tmp"), "dev", [], 300000);
        if ("error" in s) throw new Error(s.error);
        project.stack = s;
    });
    after(() => fs.rmSync(root, { recursive: true, force: true }));
    return project;
}
