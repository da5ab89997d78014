import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { rewriteKsops, rewriteNestedKsops } from "../../../../gitops/render/ksops";
import { kustomizationFile } from "../../../../gitops/render/kustomize";

describe("ksops: KSOPS generators as the encrypted objects they decrypt", () => {
    let tmp: string;
    const write = (rel: string, text: string) => {
        fs.mkdirSync(path.dirname(path.join(tmp, rel)), { recursive: true });
        fs.writeFileSync(path.join(tmp, rel), text);
    };
    beforeEach(() => {
        tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-ksops-"));
    });
    afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

    it("turns files into resources and secretFrom into secretGenerators, keeping other generators", () => {
        write(
            "gen.yaml",
            "apiVersion: viaduct.ai/v1\nkind: ksops\nmetadata: {name: g}\nfiles: [./a.enc.yaml]\nsecretFrom:\n" +
                "  - metadata: {name: s1, namespace: ns, labels: {app: x}}\n    type: Opaque\n    files: [k=./c.enc]\n    binaryFiles: [./b.enc]\n" +
                '  - metadata: {name: s2, annotations: {kustomize.config.k8s.io/needs-hash: "true"}}\n    envs: [./e.enc.env]\n',
        );
        write("other.yaml", "apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata: {name: o}\n");
        const k: Record<string, unknown> = {
            resources: ["stack.yaml"],
            generators: ["gen.yaml", "other.yaml"],
        };
        assert.strictEqual(rewriteKsops(k, tmp), true);
        assert.deepStrictEqual(k, {
            resources: ["stack.yaml", "./a.enc.yaml"],
            generators: ["other.yaml"],
            secretGenerator: [
                {
                    name: "s1",
                    namespace: "ns",
                    type: "Opaque",
                    files: ["k=./c.enc", "./b.enc"],
                    options: { disableNameSuffixHash: true, labels: { app: "x" } },
                },
                {
                    name: "s2",
                    envs: ["./e.enc.env"],
                    options: {
                        disableNameSuffixHash: false,
                        annotations: { "kustomize.config.k8s.io/needs-hash": "true" },
                    },
                },
            ],
        });
        const none: Record<string, unknown> = { generators: ["other.yaml", "missing.yaml"] };
        assert.strictEqual(rewriteKsops(none, tmp), false);
        assert.deepStrictEqual(none, { generators: ["other.yaml", "missing.yaml"] });
    });

    it("rewrites the bases below a build and puts their files back, never a folder outside the root", () => {
        write("app/kustomization.yaml", "resources: [base, ../../outside]\n");
        const base = "resources: [stack.yaml]\ngenerators: [gen.yaml]\n";
        write("app/base/kustomization.yaml", base);
        write(
            "app/base/gen.yaml",
            "apiVersion: viaduct.ai/v1\nkind: ksops\nmetadata: {name: g}\nfiles: [t.enc.yaml]\n",
        );
        const restore = rewriteNestedKsops(
            path.join(tmp, "app"),
            path.join(tmp, "app"),
            { resources: ["base", "../../outside"] },
            kustomizationFile,
        );
        const rewritten = JSON.parse(fs.readFileSync(path.join(tmp, "app/base/kustomization.yaml"), "utf8")) as unknown;
        assert.deepStrictEqual(rewritten, { resources: ["stack.yaml", "t.enc.yaml"] });
        restore();
        assert.strictEqual(fs.readFileSync(path.join(tmp, "app/base/kustomization.yaml"), "utf8"), base);
    });
});
