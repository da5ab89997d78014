/**
 * The policy pack config check the gate and the harness run before any preview: unknown property
 * names rejected with the closest valid name, patterns RE2 cannot run rejected, the settings policy
 * not disabled under rules that read it, and a file that is not JSON reported without its content.
 */
import Ajv from "ajv";
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { BadInputError, BadInputsError } from "../../../support/errors";
import { loadPackConfig, packPolicies, parsePackConfig, reconcilePackConfig } from "../../../evaluation/pack-config";
import { REPO_ROOT } from "../../../support/paths";

function check(doc: unknown): void {
    reconcilePackConfig(packPolicies(), parsePackConfig(JSON.stringify(doc), "cfg.json"), "cfg.json");
}

function rejects(doc: unknown, message: RegExp): void {
    assert.throws(
        () => check(doc),
        (e: unknown) => e instanceof BadInputError && message.test(e.message) && !e.message.includes("\n"),
    );
}

describe("policy config check", () => {
    it("accepts the shipped profiles and the pack-wide production settings", () => {
        for (const f of ["default.json", "strict.json"]) {
            check(JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "examples", "profiles", f), "utf8")));
        }
        check({ "pko-guard-production": { productionNamespaces: ["payments"], productionLabels: { tier: ["prod"] } } });
    });

    it("every policy's schema defaults are valid under its schema (a run without a config file does not validate them)", () => {
        const ajv = new Ajv({ allErrors: true, strict: false, useDefaults: false });
        for (const p of packPolicies()) {
            if (!p.configSchema) continue;
            const defaults = reconcilePackConfig(packPolicies(), {}, "default config")[p.name].properties ?? {};
            const validate = ajv.compile({ type: "object", ...p.configSchema });
            assert.ok(validate(defaults), `${p.name}: ${JSON.stringify(validate.errors?.[0])}`);
            // The same defaults, given explicitly, pass the run-time check too.
            check({ [p.name]: { ...defaults } });
        }
    });

    it("rejects an unknown property name, naming the closest valid one", () => {
        rejects(
            { "pko-guard-production": { productionNamespace: ["payments"] } },
            /^cfg\.json: pko-guard-production: unknown property "productionNamespace" \(did you mean productionNamespaces\?\)$/,
        );
        rejects(
            { "pko-stack-prod-pinned-commit": { allowUnpinnedSources: true } },
            /did you mean allowUnpinnableSources\?/,
        );
        // Besides enforcementLevel, a rule without settings of its own takes only the waiver keys every policy takes.
        rejects(
            { "pko-stack-name-length": { maxLength: 40 } },
            /unknown property "maxLength" \(valid: waivers, allowAnnotationWaivers\)/,
        );
    });

    it("names the nearest policy for a misspelt one, and reports every problem of the file at once", () => {
        const run = (config: object) => () =>
            reconcilePackConfig(packPolicies(), parsePackConfig(JSON.stringify(config), "cfg.json"), "cfg.json");
        assert.throws(run({ "pko-stack-resync-flor": "mandatory" }), {
            message:
                "cfg.json: pko-stack-resync-flor is not a policy of this pack (did you mean pko-stack-resync-floor?)",
        });
        assert.throws(
            run({
                "pko-stack-resync-flor": "mandatory",
                "pko-stack-resync-floor": { minResyncFrequencySecond: 30 },
                "pko-stack-prod-pinned-commit": { waivers: [{ resource: "a", reason: "b", expires: "2026-02-30" }] },
            }),
            (e: unknown) =>
                e instanceof BadInputsError &&
                e.summary === "cfg.json: 3 problems in the policy config" &&
                e.problems.length === 3 &&
                /did you mean pko-stack-resync-floor\?/.test(e.problems[0]) &&
                /unknown property "minResyncFrequencySecond" \(did you mean minResyncFrequencySeconds\?\)/.test(
                    e.problems[1],
                ) &&
                /waivers\[0\]\.expires is not a calendar date/.test(e.problems[2]),
        );
        // A date the schema's pattern refuses is one problem, one line (not also "not a calendar date").
        const dates = [
            { resource: "a", reason: "b", expires: "9999-99-99" },
            { resource: "c", reason: "d", expires: "2026-04-31" },
        ];
        assert.throws(
            run({ "pko-stack-prod-pinned-commit": { waivers: dates } }),
            (e: unknown) =>
                e instanceof BadInputsError &&
                e.problems.length === 2 &&
                /\/waivers\/0\/expires must match pattern/.test(e.problems[0]) &&
                /waivers\[1\]\.expires is not a calendar date/.test(e.problems[1]),
        );
    });

    it("says where the production settings moved when a rule is given them", () => {
        rejects(
            { "pko-stack-prod-pinned-commit": { productionNamespaces: ["payments"] } },
            /productionNamespaces is set once for the whole pack, under pko-guard-production/,
        );
    });

    it("rejects patterns RE2 cannot run (no lookaround, no backreferences), before any preview", () => {
        rejects(
            { "pko-guard-production": { productionStackPatterns: ["(?!dev)prod"] } },
            /productionStackPatterns entry "\(\?!dev\)prod" is not a valid RE2 regular expression/,
        );
        rejects({ "pko-stack-repo-allowlist": { allowedRepoPatterns: ["(a)\\1"] } }, /allowedRepoPatterns entry/);
        rejects(
            { "pko-stack-credentials-from-secrets": { extraCredentialNames: ["["] } },
            /extraCredentialNames entry "\[" is not a valid RE2/,
        );
        rejects(
            { "pko-stack-preview-only-nonprod": { previewOnlyStackPatterns: ["(?<=pr-)\\d+"] } },
            /previewOnlyStackPatterns entry/,
        );
        // Catastrophic for a backtracking engine, linear for RE2: accepted.
        check({ "pko-guard-production": { productionStackPatterns: ["^(a+)+$", "(a|aa)+$", "(.*a){20}"] } });
    });

    it("rejects disabling the settings policy while a production-aware rule is enabled", () => {
        rejects(
            { "pko-guard-production": "disabled" },
            /pko-guard-production is disabled but pko-stack-destroy-on-finalize-nonprod, .* read its production settings; set it to advisory or mandatory/,
        );
        rejects(
            { all: "disabled", "pko-stack-prod-refresh": "advisory" },
            /pko-guard-production is disabled but pko-stack-prod-refresh reads/,
        );
        check({ all: "disabled", "pko-stack-credentials-from-secrets": "mandatory" });
    });

    describe("a file that is not valid JSON is reported without echoing its bytes", () => {
        const secret = "pul-0123456789abcdef0123456789abcdef01234567";
        const files: Record<string, string> = {
            "credentials (INI)": `[default]\naws_access_key_id = AKIAABCDEFGHIJKLMNOP\naws_secret_access_key = ${secret}\n`,
            "a key file": `-----BEGIN RSA PRIVATE KEY-----\n${secret}\n-----END RSA PRIVATE KEY-----\n`,
            YAML: `pko-stack-prod-pinned-commit:\n  token: ${secret}\n`,
            "truncated JSON": `{"pko-guard-production": {"token": "${secret}"`,
            "a bare token": secret,
        };
        for (const [what, content] of Object.entries(files)) {
            it(what, () => {
                const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-config-"));
                try {
                    const file = path.join(dir, "cfg.json");
                    fs.writeFileSync(file, content);
                    assert.throws(
                        () => loadPackConfig(file),
                        (e: unknown) =>
                            e instanceof BadInputError &&
                            /cfg\.json: not valid JSON( at line \d+, column \d+)? \(a policy pack config is a JSON object/.test(
                                e.message,
                            ) &&
                            !e.message.includes(secret) &&
                            !e.message.includes("AKIA") &&
                            !e.message.includes("BEGIN") &&
                            !e.message.includes("\n"),
                    );
                } finally {
                    fs.rmSync(dir, { recursive: true, force: true });
                }
            });
        }

        it("nor echoes an odd policy name or a bad level", () => {
            assert.throws(
                () => check({ [secret]: "mandatory" }),
                (e: Error) => /is not a policy of this pack/.test(e.message) && !e.message.includes(secret),
            );
            assert.throws(
                () => parsePackConfig(JSON.stringify({ "pko-stack-prod-refresh": secret }), "cfg.json"),
                (e: Error) => !e.message.includes(secret),
            );
            assert.throws(
                () =>
                    parsePackConfig(
                        JSON.stringify({ "pko-stack-prod-refresh": { enforcementLevel: secret } }),
                        "cfg.json",
                    ),
                (e: Error) => !e.message.includes(secret),
            );
        });
    });
});

describe("YAML files that do not parse", () => {
    it("are reported with the error kind and position, never their content", () => {
        const YAML = require("yaml");
        const { yamlErrorPosition } = require("../../../evaluation/pack-config");
        for (const text of ["a: b: c: SECRET-A", 'key: "unterminated SECRET-B', "x: *SECRET-C\n", "{a: SECRET-D"]) {
            let shown = "";
            try {
                YAML.parse(text);
            } catch (e) {
                shown = yamlErrorPosition(e);
            }
            assert.match(shown, /^( \([a-z ]+\) at line \d+, column \d+)?$/, text);
            assert.ok(!shown.includes("SECRET"), shown);
        }
    });
});

describe("fixtures' policy config", () => {
    it("is checked against the pack when fixtures load, before any leg runs (a misspelt property is bad input)", () => {
        const { loadFixtures } = require("../../../harness/runner");
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-fixture-"));
        try {
            fs.writeFileSync(path.join(dir, "Pulumi.yaml"), "name: typo\nruntime: nodejs\n");
            fs.writeFileSync(path.join(dir, "index.ts"), "export {};\n");
            fs.writeFileSync(
                path.join(dir, "expect.yaml"),
                "apiVersion: pko-guard/v1\nkind: Fixture\ndescription: d\nviolations: []\n",
            );
            fs.writeFileSync(
                path.join(dir, "policy-config.json"),
                JSON.stringify({ "pko-guard-production": { productionNamespace: ["payments"] } }),
            );
            assert.throws(
                () => loadFixtures([dir]),
                (e: unknown) => e instanceof BadInputError && /did you mean productionNamespaces\?/.test(e.message),
            );
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });
});
