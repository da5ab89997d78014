/** The fetch a kustomization's `helmCharts` entry asks for. */
import * as assert from "assert";
import { helmChartRequest } from "../../../../gitops/render/kustomize-helm";

describe("helmChartRequest", () => {
    it("asks a Helm repository or an OCI registry for the entry's chart at its version", () => {
        assert.deepStrictEqual(
            helmChartRequest({ name: "ledger", repo: "https://charts.example.com", version: "1.2.0" }),
            {
                kind: "helm",
                url: "https://charts.example.com",
                chart: "ledger",
                version: "1.2.0",
            },
        );
        assert.deepStrictEqual(helmChartRequest({ name: "ledger", repo: "oci://registry.example.com/charts/" }), {
            kind: "oci",
            url: "oci://registry.example.com/charts/ledger",
            version: "",
        });
    });

    it("asks for nothing without a repository (a chart already in the chart home) or a name", () => {
        assert.strictEqual(helmChartRequest({ name: "ledger" }), undefined);
        assert.strictEqual(helmChartRequest({ repo: "https://charts.example.com" }), undefined);
    });
});
