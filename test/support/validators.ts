/** Real validators for the report formats, shared by the harness and gate tests. */
import Ajv from "ajv";
import AjvDraft04 from "ajv-draft-04";
import * as fs from "fs";
import * as path from "path";
import { validateXML } from "xmllint-wasm";
import { REPO_ROOT } from "../../support/paths";

/** JUnit XML against test/data/schemas/junit.xsd, with libxml2. Returns the errors (empty when valid). */
export async function junitErrors(xml: string): Promise<string[]> {
    const result = await validateXML({
        xml: [{ fileName: "report.xml", contents: xml }],
        schema: [
            {
                fileName: "junit.xsd",
                contents: fs.readFileSync(path.join(REPO_ROOT, "test", "data", "schemas", "junit.xsd"), "utf8"),
            },
        ],
    });
    return result.valid ? [] : result.errors.map((e) => e.rawMessage);
}

/** SARIF against the official SARIF 2.1.0 (rtm.5) JSON schema. */
export function sarifErrors(sarif: unknown): string[] {
    const schema = JSON.parse(
        fs.readFileSync(
            path.join(
                REPO_ROOT,
                "node_modules",
                "@microsoft",
                "jest-sarif",
                "lib",
                "schemas",
                "sarif-2.1.0-rtm.5.json",
            ),
            "utf8",
        ),
    );
    // The official schema has a pattern that is invalid under the `u` flag; read its patterns as plain RegExps.
    const validate = new AjvDraft04({
        allErrors: true,
        strict: false,
        validateFormats: false,
        unicodeRegExp: false,
    }).compile(schema);
    return validate(sarif) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
}

/** The JSON report against its documented schema. */
export function jsonReportErrors(report: unknown): string[] {
    const schema = JSON.parse(
        fs.readFileSync(path.join(REPO_ROOT, "schemas", "pko-guard", "report.schema.json"), "utf8"),
    );
    const validate = new Ajv({ allErrors: true, strict: false, validateFormats: false }).compile(schema);
    return validate(report) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
}
