/**
 * The cluster `check` tells Helm about (gitops/render/capabilities.ts): PKO's APIs exactly as the committed
 * v2.9.0 CRDs define them, Argo CD's normalization of a Kubernetes version, and the shapes `--api-versions`
 * takes. The rendering itself is proven with the real Helm in render.spec.ts.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import * as YAML from "yaml";
import { REPO_ROOT } from "../../../../support/paths";
import { BadInputError } from "../../../../support/errors";
import {
    OPERATOR_API_VERSIONS,
    checkApiVersion,
    clusterCapabilities,
    normalizeKubeVersion,
} from "../../../../gitops/render/capabilities";

describe("cluster capabilities for Helm", () => {
    it("lists every served version and kind of PKO's committed CRDs, as Argo CD lists a cluster's APIs", () => {
        const dir = path.join(REPO_ROOT, "schemas", "pko", "v2.9.0");
        const fromCrds: string[] = [];
        for (const f of fs.readdirSync(dir).filter((x) => x.endsWith(".yaml"))) {
            const crd = YAML.parse(fs.readFileSync(path.join(dir, f), "utf8")) as {
                spec: { group: string; names: { kind: string }; versions: { name: string; served: boolean }[] };
            };
            for (const v of crd.spec.versions.filter((x) => x.served))
                fromCrds.push(`${crd.spec.group}/${v.name}`, `${crd.spec.group}/${v.name}/${crd.spec.names.kind}`);
        }
        assert.ok(fromCrds.length >= 8, "the CRDs were read");
        const pko = OPERATOR_API_VERSIONS.filter((v) => /^(auto\.)?pulumi\.com\//.test(v));
        assert.deepStrictEqual([...new Set(pko)].sort(), [...new Set(fromCrds)].sort());
        for (const k of ["Application", "ApplicationSet", "AppProject"])
            assert.ok(OPERATOR_API_VERSIONS.includes(`argoproj.io/v1alpha1/${k}`), k);
    });

    it("normalizes a version as Argo CD does before Helm sees it, and refuses what is not one", () => {
        assert.strictEqual(normalizeKubeVersion("v1.31.4-eks-1a2b", "x"), "1.31.4");
        assert.strictEqual(normalizeKubeVersion("1.30", "x"), "1.30.0");
        assert.strictEqual(normalizeKubeVersion(" v1.29.0+k3s1 ", "x"), "1.29.0");
        for (const bad of ["", "latest", "1", "v1.x", "1.2.3.4", "1.31; rm -rf /"])
            assert.throws(
                () => normalizeKubeVersion(bad, "--kube-version"),
                (e: Error) =>
                    e instanceof BadInputError &&
                    e.message === "--kube-version: not a Kubernetes version (expected e.g. 1.31 or v1.31.4)",
                bad,
            );
    });

    it("takes group/version and group/version/Kind, adds them to the defaults once, and refuses other shapes without echoing them", () => {
        for (const good of ["v1", "example.com/v1", "example.com/v1beta1/Widget", "policy/v1/PodDisruptionBudget"])
            assert.strictEqual(checkApiVersion(good, "x"), good);
        for (const bad of [
            "",
            "example.com",
            "Example.com/v1",
            "example.com/v1/",
            "example.com/v1/Widget/x",
            "--set=x",
            "a b/v1",
        ]) {
            assert.throws(
                () => checkApiVersion(bad, "--api-versions"),
                (e: Error) =>
                    e instanceof BadInputError &&
                    e.message ===
                        "--api-versions: not an API version (expected group/version or group/version/Kind, e.g. example.com/v1/Widget)",
                bad,
            );
        }
        const c = clusterCapabilities({ kubeVersion: "v1.32.1", apiVersions: ["example.com/v1", "pulumi.com/v1"] });
        assert.strictEqual(c.kubeVersion, "1.32.1");
        assert.deepStrictEqual(c.apiVersions, [...OPERATOR_API_VERSIONS, "example.com/v1"]);
        assert.deepStrictEqual(clusterCapabilities({}), {
            kubeVersion: undefined,
            apiVersions: [...OPERATOR_API_VERSIONS],
        });
    });
});
