/**
 * SARIF 2.1.0: one run of the pko-guard tool, its rules taken from the pack's own metadata (stable
 * ruleId = policy name), one result per violation row, located at the program file with the resource's
 * URN as a logical location. Mandatory is `error`, advisory `warning`.
 */
import { SarifBuilder, SarifResultBuilder, SarifRuleBuilder, SarifRunBuilder } from "node-sarif-builder";
import { ReportSubject, ruleCatalogue, subjectRows } from "./subject";

import * as fs from "fs";
import * as path from "path";
import { REPO_ROOT } from "../paths";

const VERSION: string = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")).version;

export function renderSarif(subjects: ReportSubject[]): string {
    const run = new SarifRunBuilder().initSimple({
        toolDriverName: "pko-guard",
        toolDriverVersion: VERSION,
        url: "https://github.com/pulumi/pulumi-kubernetes-operator",
    });
    for (const r of ruleCatalogue()) {
        const rule = new SarifRuleBuilder().initSimple({
            ruleId: r.id,
            shortDescriptionText: r.description,
            fullDescriptionText: `${r.description} Fix: ${r.remediation ?? ""}`.trim(),
            helpUri: r.url,
        });
        rule.rule.help = { text: r.remediation ?? r.description };
        rule.rule.defaultConfiguration = { level: r.level === "mandatory" ? "error" : "warning" };
        rule.rule.properties = { severity: r.severity ?? "medium", tags: ["pulumi", "crossguard", "kubernetes"] };
        run.addRule(rule);
    }
    for (const s of subjects) {
        for (const row of subjectRows(s)) {
            const result = new SarifResultBuilder().initSimple({
                level: row.level === "mandatory" ? "error" : "warning",
                messageText: `${row.resource ? `${row.resource}: ` : ""}${row.message}`,
                ruleId: row.policy,
                fileUri: s.programFile,
                startLine: 1,
            });
            const location = result.result.locations?.[0];
            if (location && row.urn) {
                location.logicalLocations = [{ name: row.resource, fullyQualifiedName: row.urn, kind: "resource" }];
            }
            result.result.properties = { subject: s.name, resourceType: row.type };
            run.addResult(result);
        }
    }
    const builder = new SarifBuilder();
    builder.addRun(run);
    return builder.buildSarifJsonString({ indent: true }) + "\n";
}
