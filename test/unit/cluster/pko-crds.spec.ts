/**
 * The committed PKO v2.9.0 CRDs (schemas/pko/v2.9.0) are what their PROVENANCE.md says they are, and
 * every security-relevant-looking field they declare is listed in the field table of docs/contributing/architecture.md.
 */
import * as assert from "assert";
import * as crypto from "crypto";
import * as fs from "fs";
import * as path from "path";
import { PKO_CRD_DIR, PKO_CRD_FILES, loadPkoCrds } from "../../../cluster/pko-crds";
import * as YAML from "yaml";
import { REPO_ROOT } from "../../../support/paths";

describe("PKO v2.9.0 API as data", () => {
    const provenance = fs.readFileSync(path.join(PKO_CRD_DIR, "PROVENANCE.md"), "utf8");

    it("each committed CRD matches the SHA-256 PROVENANCE.md records, and names the controller-gen it pins", () => {
        for (const file of PKO_CRD_FILES) {
            const text = fs.readFileSync(path.join(PKO_CRD_DIR, file), "utf8");
            const sum = crypto.createHash("sha256").update(text).digest("hex");
            assert.ok(
                provenance.includes(`${sum}  ${file}`),
                `${file}: SHA-256 ${sum} is not the one PROVENANCE.md records`,
            );
            const crd = YAML.parse(text);
            assert.strictEqual(crd.metadata.annotations["controller-gen.kubebuilder.io/version"], "v0.16.5", file);
            assert.ok(!text.includes("description:"), `${file} carries descriptions (generate with maxDescLen=0)`);
        }
        assert.ok(provenance.includes("b713fae5a35041d899b0f64151a151f3df068ad1"));
    });

    it("serves Stack v1 and v1alpha1, Program v1, Workspace and Update v1alpha1", () => {
        const served = [...loadPkoCrds()]
            .filter(([, v]) => v.served)
            .map(([k]) => k)
            .sort();
        assert.deepStrictEqual(served, [
            "auto.pulumi.com/v1alpha1/Update",
            "auto.pulumi.com/v1alpha1/Workspace",
            "pulumi.com/v1/Program",
            "pulumi.com/v1/Stack",
            "pulumi.com/v1alpha1/Stack",
        ]);
    });

    describe("the field table of docs/contributing/architecture.md", () => {
        const SECURITY_LOOKING = /token|secret|key|password|passwd|auth|serviceaccount|privileged|^host/i;
        const page = fs.readFileSync(path.join(REPO_ROOT, "docs", "contributing", "architecture.md"), "utf8");
        const table = page.slice(page.indexOf("<!-- pko-fields:start -->"), page.indexOf("<!-- pko-fields:end -->"));
        const patterns = table
            .split("\n")
            .filter((l) => l.startsWith("| `"))
            .flatMap((l) => [...l.split("|")[1].matchAll(/`([^`]+)`/g)].map((m) => m[1]));
        const glob = (p: string) =>
            new RegExp(
                "^" +
                    p
                        .split(/(\*\*|\*)/)
                        .map((part) =>
                            part === "**"
                                ? ".*"
                                : part === "*"
                                  ? "[^.\\[\\]]*"
                                  : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"),
                        )
                        .join("") +
                    "$",
            );
        const expand = (p: string, workspacePrefix: string) =>
            p.replace(/^P\./, "W.podTemplate.spec.").replace(/^W\./, workspacePrefix);
        const byKind: Record<string, RegExp[]> = {
            Stack: patterns
                .filter((p) => !p.startsWith("program.") && !p.startsWith("update."))
                .map((p) => glob(expand(p, "spec.workspaceTemplate.spec."))),
            Workspace: patterns.filter((p) => /^[WP]\./.test(p)).map((p) => glob(expand(p, "spec."))),
            Program: patterns.filter((p) => p.startsWith("program.")).map(glob),
            Update: patterns.filter((p) => p.startsWith("update.")).map((p) => glob(p.slice("update.".length))),
        };

        /** Paths of every declared field whose name looks security-relevant (maps as `*`, list items as `[]`). */
        function securityLookingFields(schema: Record<string, unknown>): string[] {
            const out = new Set<string>();
            const walk = (s: Record<string, unknown> | undefined, at: string) => {
                if (!s || typeof s !== "object") return;
                for (const [k, c] of Object.entries((s.properties as Record<string, Record<string, unknown>>) ?? {})) {
                    const p = at ? `${at}.${k}` : k;
                    if (p !== "status" && !p.startsWith("status.") && SECURITY_LOOKING.test(k)) out.add(p);
                    if (p !== "status") walk(c, p);
                }
                if (s.items) walk(s.items as Record<string, unknown>, `${at}[]`);
                if (s.additionalProperties && typeof s.additionalProperties === "object")
                    walk(s.additionalProperties as Record<string, unknown>, `${at}.*`);
            };
            walk(schema, "");
            return [...out];
        }
        const unlisted = (kind: string, fields: string[]) =>
            fields.filter((f) => !byKind[kind].some((re) => re.test(f)));

        it("lists every security-relevant-looking field of the committed PKO v2.9.0 schemas", () => {
            let checked = 0;
            for (const crd of loadPkoCrds().values()) {
                const fields = securityLookingFields(crd.schema);
                checked += fields.length;
                assert.deepStrictEqual(
                    unlisted(crd.kind, fields),
                    [],
                    `${crd.apiVersion}/${crd.kind}: fields missing from the field table of docs/contributing/architecture.md`,
                );
            }
            assert.ok(checked > 300, `only ${checked} fields were checked`);
        });

        it("lists every spec field of the Update: each is an operation, its stack or its options", () => {
            const update = [...loadPkoCrds().values()].find((c) => c.kind === "Update")!;
            const spec = (update.schema.properties as Record<string, { properties: Record<string, unknown> }>).spec;
            const fields = Object.keys(spec.properties).map((k) => `spec.${k}`);
            assert.ok(fields.includes("spec.type") && fields.length >= 14, fields.join(", "));
            assert.deepStrictEqual(unlisted("Update", fields), []);
        });

        it("would catch a new field: a made-up token or auth field is not covered by the table", () => {
            assert.deepStrictEqual(
                unlisted("Stack", [
                    "spec.gitAuth.oidcToken",
                    "spec.pulumiAuth",
                    "spec.workspaceTemplate.spec.hostToken",
                ]),
                ["spec.gitAuth.oidcToken", "spec.pulumiAuth", "spec.workspaceTemplate.spec.hostToken"],
            );
            assert.deepStrictEqual(
                unlisted("Workspace", ["spec.git.auth.token", "spec.podTemplate.spec.hostNetwork"]),
                [],
            );
        });
    });
});
