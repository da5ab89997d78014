/**
 * The subject a command reports when it could not judge: gate, check and audit each say what they ran on, and
 * the one builder (reports/subject.ts errorProjectSubject) adds the rest: no findings, the outcome "error",
 * the message and the time. Each renders as a valid JSON report.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { auditErrorSubject } from "../../../cli/audit";
import { checkErrorSubject } from "../../../cli/check";
import { errorSubject } from "../../../cli/gate";
import { renderJson } from "../../../reports/json";
import { ProjectSubject } from "../../../reports/subject";
import { jsonReportErrors } from "../../support/validators";

describe("the subject of a command that could not judge", () => {
    let dir: string;
    beforeEach(() => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-error-subject-"));
    });
    afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

    const tail = { findings: [], outcome: "error", error: "why", durationMs: 7 };
    const valid = (s: ProjectSubject) => assert.deepStrictEqual(jsonReportErrors(JSON.parse(renderJson([s]))), []);

    it("gate names the project by its Pulumi.yaml, or by its folder when that is what is wrong", () => {
        fs.writeFileSync(path.join(dir, "Pulumi.yaml"), "name: shop\nruntime: nodejs\nmain: src/index.ts\n");
        const named = errorSubject({ projectDir: dir, stack: "dev" }, "why", 7);
        assert.deepStrictEqual(named, {
            kind: "project",
            name: "shop",
            stack: "dev",
            description: "pko-guard gate of shop (stack dev)",
            programFile: path.join(dir, "src/index.ts"),
            ...tail,
        });
        valid(named);
        fs.rmSync(path.join(dir, "Pulumi.yaml"));
        const base = path.basename(dir);
        assert.deepStrictEqual(errorSubject({ projectDir: dir, stack: "dev" }, "why", 7), {
            kind: "project",
            name: base,
            stack: "dev",
            description: `pko-guard gate of ${base} (stack dev)`,
            programFile: path.join(dir, "Pulumi.yaml"),
            ...tail,
        });
    });

    it("check names the paths it was given, and the repository root when given one", () => {
        const s = checkErrorSubject(["-", "m/a.yaml"], "why", 7, dir);
        assert.deepStrictEqual(s, {
            kind: "project",
            name: "manifests",
            stack: "",
            description: "pko-guard check of - m/a.yaml",
            programFile: path.resolve("m/a.yaml"),
            root: dir,
            ...tail,
        });
        valid(s);
        assert.ok(!("root" in checkErrorSubject(["-"], "why", 7)));
        assert.strictEqual(checkErrorSubject(["-"], "why", 7).programFile, "manifests");
    });

    it("audit names the context and kubeconfig, or the current context", () => {
        const s = auditErrorSubject({ kubeconfig: "/k", context: "prod" }, "why", 7);
        assert.deepStrictEqual(s, {
            kind: "project",
            name: "cluster",
            stack: "prod",
            description: "pko-guard audit of context prod of /k",
            programFile: "/k",
            ...tail,
        });
        valid(s);
        assert.deepStrictEqual(auditErrorSubject({}, "why", 7), {
            kind: "project",
            name: "cluster",
            stack: "",
            description: "pko-guard audit of the current context",
            programFile: "cluster",
            ...tail,
        });
    });
});
