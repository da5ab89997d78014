/**
 * Pack-wide settings reach the rules through one small module (policies/model/settings.ts), published per
 * request: nothing published under one configuration survives another, and an in-process evaluation starts
 * and ends with nothing published.
 */
import * as assert from "assert";
import { evaluatePack } from "../../../../evaluation/evaluate";
import { packPolicies, reconcilePackConfig } from "../../../../evaluation/pack-config";
import { productionSettings } from "../../../../policies/model/production";
import { RequestSettings } from "../../../../policies/model/settings";
import { runResourcePolicy, stackResource } from "../../../support/helpers";
import { policy as destroyOnFinalize } from "../../../../policies/pko-stack-destroy-on-finalize-nonprod";

describe("request settings (policies/model/settings.ts)", () => {
    it("publish, read and reset per request; a new configuration forgets what the old one published", () => {
        const s = new RequestSettings<string>();
        s.publish("urn:a", "config-1", "A");
        s.publish("urn:b", "config-1", "B");
        assert.strictEqual(s.read("urn:a"), "A");
        s.reset("urn:a");
        assert.strictEqual(s.read("urn:a"), undefined);
        assert.strictEqual(s.read("urn:b"), "B");
        s.publish("urn:c", "config-2", "C");
        assert.strictEqual(s.read("urn:b"), undefined, "stale settings of the first configuration");
        assert.strictEqual(s.read("urn:c"), "C");
        s.reset();
        assert.strictEqual(s.read("urn:c"), undefined);
        assert.strictEqual(s.read(undefined), undefined);
    });

    it("a rule reads the settings of its own configuration, whatever was published before", () => {
        const stack = stackResource(
            "app",
            {
                stack: "acme/app/dev",
                projectRepo: "https://github.com/acme/app",
                branch: "main",
                destroyOnFinalize: true,
            },
            { namespace: "payments" },
        );
        // Production by namespace under the first configuration, not under the second one (same URN).
        assert.strictEqual(
            runResourcePolicy(destroyOnFinalize, stack, {}, { productionNamespaces: ["payments"] }).length,
            1,
        );
        assert.strictEqual(
            runResourcePolicy(destroyOnFinalize, stack, {}, { productionNamespaces: ["other"] }).length,
            0,
        );
        assert.strictEqual(
            runResourcePolicy(destroyOnFinalize, stack, {}, { productionNamespaces: ["payments"] }).length,
            1,
        );
    });

    it("in-process evaluations are requests of their own: reconfigured, they never see each other's settings", () => {
        const resource = {
            type: "kubernetes:pulumi.com/v1:Stack",
            name: "Stack/payments/app",
            urn: "urn:pulumi:check::manifests::kubernetes:pulumi.com/v1:Stack::Stack/payments/app",
            props: {
                apiVersion: "pulumi.com/v1",
                kind: "Stack",
                metadata: { name: "app", namespace: "payments" },
                spec: {
                    stack: "acme/app/dev",
                    projectRepo: "https://github.com/acme/app",
                    branch: "main",
                    destroyOnFinalize: true,
                },
            },
        };
        const config = (namespaces: string[]) =>
            reconcilePackConfig(
                packPolicies(),
                { "pko-guard-production": { properties: { productionNamespaces: namespaces } } },
                "test",
            );
        const destroy = (namespaces: string[]) =>
            evaluatePack([resource], config(namespaces)).filter((r) => r.policy === destroyOnFinalize.name);
        assert.strictEqual(destroy(["payments"]).length, 1);
        assert.strictEqual(
            productionSettings.read(resource.urn),
            undefined,
            "settings left published after the evaluation",
        );
        assert.strictEqual(destroy(["other"]).length, 0);
        assert.strictEqual(destroy(["payments"]).length, 1);
    });
});
