/**
 * `pko-guard check --report policyreport=FILE`, run as users run it (the built command, from a manifest
 * repository), validated against the published wgpolicyk8s.io/v1alpha2 CRDs (schemas/policyreport, copied from
 * the Kyverno module the Go module proxy serves; provenance next to them): every document against its CRD's
 * OpenAPI v3 schema with a real validator, and every field declared by the schema (the API server would prune
 * or, under strict field validation, reject an undeclared one). Results are per rule and object.
 */
import Ajv from "ajv";
import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as YAML from "yaml";
import { decodeKubeYaml } from "../../../gitops/decode/kube-yaml";
import { CLI_ENTRY, REPO_ROOT } from "../../../support/paths";
import { renderPolicyReport } from "../../../reports/policyreport";
import { ProjectSubject } from "../../../reports/subject";
import { writeReports } from "../../../reports/write";

const CRDS = path.join(REPO_ROOT, "schemas", "policyreport", "v1alpha2");
const BIN = CLI_ENTRY;

type Schema = {
    type?: string;
    properties?: Record<string, Schema>;
    items?: Schema;
    additionalProperties?: unknown;
    "x-kubernetes-preserve-unknown-fields"?: boolean;
};

function crdSchema(file: string): { kind: string; scope: string; schema: Schema } {
    const crd = YAML.parse(fs.readFileSync(path.join(CRDS, file), "utf8"));
    const version = crd.spec.versions.find((v: { name: string }) => v.name === "v1alpha2");
    return { kind: crd.spec.names.kind, scope: crd.spec.scope, schema: version.schema.openAPIV3Schema };
}

/** Fields the structural schema does not declare (what the API server prunes). */
function undeclared(value: unknown, schema: Schema, at = ""): string[] {
    if (schema["x-kubernetes-preserve-unknown-fields"]) return [];
    if (Array.isArray(value))
        return schema.items ? value.flatMap((v, i) => undeclared(v, schema.items!, `${at}[${i}]`)) : [];
    if (value === null || typeof value !== "object") return [];
    if (!schema.properties) return [];
    return Object.entries(value).flatMap(([k, v]) =>
        schema.properties![k] ? undeclared(v, schema.properties![k], `${at}.${k}`) : [`${at}.${k}`],
    );
}

function validator(): Ajv {
    const ajv = new Ajv({ strict: false, allErrors: true });
    ajv.addFormat("int32", {
        type: "number",
        validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31,
    });
    ajv.addFormat("int64", { type: "number", validate: (n: number) => Number.isSafeInteger(n) });
    return ajv;
}

function validateDocs(text: string): Record<string, unknown>[] {
    const ajv = validator();
    const crds = ["wgpolicyk8s.io_policyreports.yaml", "wgpolicyk8s.io_clusterpolicyreports.yaml"].map(crdSchema);
    // Decoded as the API server and kubectl decode it (YAML 1.1: a plain `on` is true; gitops/decode/kube-yaml.ts).
    const docs = decodeKubeYaml(text)
        .map((d) => d.value as Record<string, unknown>)
        .filter((d) => d !== null);
    for (const doc of docs) {
        assert.strictEqual(doc.apiVersion, "wgpolicyk8s.io/v1alpha2");
        const crd = crds.find((c) => c.kind === doc.kind);
        assert.ok(crd, `kind ${String(doc.kind)}`);
        const validate = ajv.compile(crd.schema);
        assert.ok(validate(doc), `${String(doc.kind)}: ${ajv.errorsText(validate.errors)}`);
        assert.deepStrictEqual(
            undeclared(doc, crd.schema),
            [],
            `${String(doc.kind)} has fields its CRD does not declare`,
        );
        const meta = doc.metadata as { name: string; namespace?: string };
        assert.match(meta.name, /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
        assert.strictEqual(meta.namespace !== undefined, crd.scope === "Namespaced", `${String(doc.kind)} namespace`);
    }
    return docs;
}

describe("PolicyReport output", function () {
    this.timeout(120000);
    let tmp: string;
    before(() => (tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-policyreport-"))));
    after(() => fs.rmSync(tmp, { recursive: true, force: true }));

    it("the checked-in CRDs are the ones PROVENANCE.md names (unchanged copies)", () => {
        const provenance = fs.readFileSync(path.join(CRDS, "PROVENANCE.md"), "utf8");
        assert.match(provenance, /github\.com\/kyverno\/kyverno@v\d+\.\d+\.\d+/);
        const crypto = require("crypto") as typeof import("crypto");
        for (const f of ["wgpolicyk8s.io_policyreports.yaml", "wgpolicyk8s.io_clusterpolicyreports.yaml"]) {
            const sum = crypto
                .createHash("sha256")
                .update(fs.readFileSync(path.join(CRDS, f)))
                .digest("hex");
            assert.ok(provenance.includes(sum), `${f}: sha256 ${sum} not in PROVENANCE.md`);
        }
    });

    it("the validation catches what the API server would refuse or prune", () => {
        const base = {
            apiVersion: "wgpolicyk8s.io/v1alpha2",
            kind: "ClusterPolicyReport",
            metadata: { name: "x" },
            results: [{ policy: "p", result: "pass" }],
        };
        assert.doesNotThrow(() => validateDocs(YAML.stringify(base)));
        assert.throws(
            () => validateDocs(YAML.stringify({ ...base, results: [{ policy: "p", result: "bogus" }] })),
            /must be equal to one of the allowed values/,
        );
        assert.throws(
            () => validateDocs(YAML.stringify({ ...base, results: [{ policy: "p", result: "pass", status: "x" }] })),
            /does not declare/,
        );
        assert.throws(
            () =>
                validateDocs(
                    YAML.stringify({
                        ...base,
                        results: [{ policy: "p", result: "pass", timestamp: { seconds: 1.5, nanos: 0 } }],
                    }),
                ),
            /must match format/,
        );
    });

    it("check writes PolicyReports per namespace and a ClusterPolicyReport, valid against the published CRDs, with fail/pass per rule and object", () => {
        const repo = path.join(tmp, "repo");
        fs.cpSync(path.join(REPO_ROOT, "fixtures", "gitops-guide-example", "manifests"), repo, { recursive: true });
        spawnSync("git", ["init", "-q", "."], { cwd: repo });
        spawnSync("git", ["remote", "add", "origin", "https://github.com/myorg/webapp-manifests.git"], { cwd: repo });
        const out = path.join(tmp, "reports", "policyreport.yaml");
        const r = spawnSync(
            process.execPath,
            [BIN, "check", "manifests", "applications", "--report", `policyreport=${out}`],
            { cwd: repo, encoding: "utf8", env: { ...process.env, GITHUB_ACTIONS: "" } },
        );
        assert.strictEqual(r.status, 1, r.stderr);
        const docs = validateDocs(fs.readFileSync(out, "utf8"));
        const kinds = docs
            .map((d) => `${String(d.kind)}/${(d.metadata as { namespace?: string }).namespace ?? ""}`)
            .sort();
        assert.deepStrictEqual(kinds, ["ClusterPolicyReport/", "PolicyReport/argocd", "PolicyReport/pulumi"]);
        type R = {
            policy: string;
            result: string;
            severity?: string;
            resources?: { kind: string; name: string; namespace?: string }[];
        };
        const results = docs.flatMap((d) => d.results as R[]);
        const find = (policy: string, name: string) =>
            results.filter((x) => x.policy === policy && x.resources?.[0]?.name === name).map((x) => x.result);
        assert.deepStrictEqual(find("pko-stack-prod-pinned-commit", "webapp-production"), ["fail"]);
        assert.deepStrictEqual(find("pko-stack-prod-pinned-commit", "webapp-staging"), ["pass"]);
        assert.deepStrictEqual(find("pko-stack-no-cluster-admin", "webapp:cluster-admin"), ["fail", "fail", "fail"]);
        assert.strictEqual(results.find((x) => x.policy === "pko-stack-no-cluster-admin")!.severity, "critical");
        for (const d of docs) {
            const s = d.summary as Record<string, number>;
            const rs = d.results as R[];
            for (const k of ["pass", "fail", "warn", "skip"])
                assert.strictEqual(s[k], rs.filter((x) => x.result === k).length, `${String(d.kind)} summary.${k}`);
        }
    });

    it("names, namespaces, messages and fields that YAML 1.1 reads as booleans or numbers stay strings as the API server decodes them", () => {
        // Valid Kubernetes names and free text that a plain YAML 1.1 scalar would turn into true, false, a number or null.
        const words = [
            "on",
            "y",
            "no",
            "off",
            "1_000",
            "0b101",
            "0o17",
            "017",
            "1e3",
            "null",
            "~",
            "2001-12-14",
            "1:20",
            "<<",
            "yes: no",
            "- x",
        ];
        const findings = words.map((w) => ({
            policy: "pko-stack-prod-refresh",
            resource: `Stack/${/^[a-z0-9]+$/.test(w) ? w : "ns"}/${w}`,
            urn: "",
            type: "",
            level: "advisory" as const,
            message: w,
            status: "advisory" as const,
            field: w,
            file: w,
            line: 1,
            syncedBy: w,
        }));
        const subject: ProjectSubject = {
            kind: "project",
            name: "x",
            stack: "",
            description: "",
            programFile: "",
            outcome: "pass",
            durationMs: 1,
            findings,
        };
        const text = renderPolicyReport([subject]);
        const docs = validateDocs(text);
        type R = {
            message: string;
            resources: { name: string; namespace: string }[];
            properties: Record<string, string>;
        };
        const results = docs.flatMap((d) =>
            (d.results as R[]).map((r) => ({ ns: (d.metadata as { namespace: string }).namespace, r })),
        );
        assert.deepStrictEqual(results.map((x) => x.r.message).sort(), [...words].sort());
        for (const { ns, r } of results) {
            for (const v of [r.message, r.resources[0].name, r.properties.field, r.properties.syncedBy, ns])
                assert.strictEqual(typeof v, "string", JSON.stringify(r));
            assert.strictEqual(r.properties.location, `${r.message}:1`);
        }
    });

    it("a report of many megabytes is written piece by piece, the same bytes as rendered whole", () => {
        const findings = Array.from({ length: 20000 }, (_, i) => ({
            policy: i % 2 ? "pko-stack-prod-refresh" : "pko-stack-prod-pinned-commit",
            resource: `Stack/team-${i % 37}/app-${i}`,
            urn: "",
            type: "",
            level: "mandatory" as const,
            message: `finding ${i}: ${"x".repeat(i % 300)}`,
            status: "blocking" as const,
        }));
        const subject: ProjectSubject = {
            kind: "project",
            name: "big",
            stack: "",
            description: "",
            programFile: "",
            outcome: "fail",
            durationMs: 1,
            findings,
        };
        const file = path.join(tmp, "big", "policyreport.yaml");
        const now = Date.now();
        writeReports([{ format: "policyreport", file }], [subject]);
        const written = fs.readFileSync(file, "utf8");
        assert.ok(written.length > 4 << 20, `${written.length} bytes: more than one write`);
        // The same second as the write (its timestamp), else the next one.
        const whole = [now, now + 1000].map((t) => renderPolicyReport([subject], new Date(t)));
        assert.ok(whole.includes(written), "the pieces written are the report rendered whole");
        assert.strictEqual(validateDocs(written).length, 37);
    });

    it("advisory findings are warn, waived ones skip with the waiver, findings without a Kubernetes object go to the ClusterPolicyReport", () => {
        const subject: ProjectSubject = {
            kind: "project",
            name: "Shop App",
            stack: "dev",
            description: "",
            programFile: "index.ts",
            outcome: "pass",
            durationMs: 1,
            findings: [
                {
                    policy: "pko-stack-prod-refresh",
                    resource: "Stack/pulumi/shop",
                    urn: "",
                    type: "",
                    level: "advisory",
                    message: "set refresh",
                    status: "advisory",
                },
                {
                    policy: "pko-stack-prod-pinned-commit",
                    resource: "Stack/pulumi/shop",
                    urn: "",
                    type: "",
                    level: "advisory",
                    message: "tracks a branch",
                    status: "waived",
                    waiver: { reason: "moving: in Q1", expires: "2099-12-31" },
                },
                {
                    policy: "aws-s3-no-public-acl",
                    resource: "assets",
                    urn: "urn:pulumi:dev::shop::aws:s3/bucketAcl:BucketAcl::assets",
                    type: "aws:s3/bucketAcl:BucketAcl",
                    level: "mandatory",
                    message: "public",
                    status: "blocking",
                },
            ],
        };
        const docs = validateDocs(renderPolicyReport([subject]));
        const ns = docs.find((d) => d.kind === "PolicyReport")!;
        assert.strictEqual((ns.metadata as { name: string }).name, "pko-guard-shop-app-dev");
        const results = ns.results as { policy: string; result: string; properties?: Record<string, string> }[];
        assert.strictEqual(results.find((r) => r.policy === "pko-stack-prod-refresh")!.result, "warn");
        const waived = results.find((r) => r.policy === "pko-stack-prod-pinned-commit")!;
        assert.strictEqual(waived.result, "skip");
        assert.deepStrictEqual(
            [waived.properties!.waiverReason, waived.properties!.waiverExpires],
            ["moving: in Q1", "2099-12-31"],
        );
        const cluster = docs.find((d) => d.kind === "ClusterPolicyReport")!;
        assert.deepStrictEqual(
            (cluster.results as { result: string; resources: { kind: string }[] }[]).map((r) => [
                r.result,
                r.resources[0].kind,
            ]),
            [["fail", "BucketAcl"]],
        );
    });
});
