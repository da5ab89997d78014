/**
 * Pack-wide settings reach the rules through an explicit channel (policies/index.ts `buildPolicies`,
 * policies/model/production.ts `productionChannel`, policies/model/settings.ts): the pack places the settings
 * policy first and builds every rule around one channel of its own; what is published lasts for one request
 * (its turn of the event loop, its configuration), so a rule never reads the settings of another request or
 * another pack, and an in-process evaluation is a pack of its own.
 */
import * as assert from "assert";
import { ResourceValidationPolicy } from "@pulumi/policy";
import { evaluatePack } from "../../../../evaluation/evaluate";
import { packPolicies, reconcilePackConfig } from "../../../../evaluation/pack-config";
import { RULES, buildPolicies, policies } from "../../../../policies";
import { SETTINGS_POLICY } from "../../../../policies/model/production";
import { RequestSettings } from "../../../../policies/model/settings";
import { runResourcePolicy, stackResource } from "../../../support/helpers";
import { rule as destroyOnFinalize } from "../../../../policies/pko-stack-destroy-on-finalize-nonprod";

const analyzerPb = require("@pulumi/pulumi/proto/analyzer_pb");
const structPb = require("google-protobuf/google/protobuf/struct_pb");
const sdkServer = require("@pulumi/policy/server");

const endOfTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A development Stack in namespace `payments` that sets destroyOnFinalize: production only by its namespace. */
const payments = (name = "app") =>
    stackResource(
        name,
        {
            stack: "acme/app/dev",
            projectRepo: "https://github.com/acme/app",
            branch: "main",
            destroyOnFinalize: true,
        },
        { namespace: "payments" },
    );
const PAYMENTS_ARE_PRODUCTION = { productionNamespaces: ["payments"] };
const DISABLED = /pko-guard-production is disabled \(or did not run\)/;

/** Calls a built resource policy's hook as the analyzer does, with `config` as its config; returns its messages. */
function call(policy: unknown, r: ReturnType<typeof payments>, config: Record<string, unknown> = {}): string[] {
    const out: string[] = [];
    const validate = (policy as ResourceValidationPolicy).validateResource as (args: never, report: never) => void;
    validate(
        {
            type: r.type,
            name: r.name,
            urn: `urn:pulumi:dev::test::${r.type}::${r.name}`,
            props: r.props,
            getConfig: () => config,
            notApplicable: () => undefined,
        } as never,
        ((m: string) => out.push(m)) as never,
    );
    return out;
}

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

    it("forgets what was published when the turn of the event loop ends (a later request is another request)", async () => {
        const s = new RequestSettings<string>();
        s.publish("urn:a", "config-1", "A");
        await Promise.resolve();
        assert.strictEqual(s.read("urn:a"), "A", "the request's own later policies (microtasks) still read it");
        await endOfTurn();
        assert.strictEqual(s.read("urn:a"), undefined);
        s.publish("urn:a", "config-1", "A again");
        assert.strictEqual(s.read("urn:a"), "A again");
    });

    it("a rule reads the settings of its own configuration, whatever was published before", () => {
        // The catalogue pack: one channel for every call, all in this turn; only the configuration differs.
        const destroy = policies.find((p) => p.name === destroyOnFinalize.name) as ResourceValidationPolicy;
        assert.strictEqual(runResourcePolicy(destroy, payments(), {}, PAYMENTS_ARE_PRODUCTION).length, 1);
        assert.strictEqual(runResourcePolicy(destroy, payments(), {}, { productionNamespaces: ["other"] }).length, 0);
        assert.strictEqual(runResourcePolicy(destroy, payments(), {}, PAYMENTS_ARE_PRODUCTION).length, 1);
    });
});

describe("the pack's settings channel (policies/index.ts buildPolicies)", () => {
    it("places the settings policy first, then every rule in catalogue order", () => {
        assert.deepStrictEqual(
            buildPolicies().map((p) => p.name),
            [SETTINGS_POLICY, ...RULES.map((r) => r.name)],
        );
        assert.ok(!RULES.some((r) => r.name === SETTINGS_POLICY), "the settings policy is placed by the builder");
    });

    it("gives each rule the settings its own pack's settings policy published, never another pack's", () => {
        const [settingsA, ...rulesA] = buildPolicies();
        const rulesB = buildPolicies().slice(1);
        const ruleA = rulesA.find((p) => p.name === destroyOnFinalize.name);
        const ruleB = rulesB.find((p) => p.name === destroyOnFinalize.name);
        call(settingsA, payments(), PAYMENTS_ARE_PRODUCTION);
        assert.match(call(ruleA, payments()).join("\n"), /production by namespace "payments"/);
        const [other] = call(ruleB, payments());
        assert.match(other, DISABLED, "pack B's rule read pack A's settings");
    });

    it("a rule never reads the settings of an earlier request: without its settings policy it cannot classify", async () => {
        const [settings, ...rules] = buildPolicies();
        const rule = rules.find((p) => p.name === destroyOnFinalize.name);
        call(settings, payments(), PAYMENTS_ARE_PRODUCTION);
        assert.match(call(rule, payments()).join("\n"), /production by namespace "payments"/);
        // A later request about the same resource, the settings policy disabled meanwhile (not called).
        await endOfTurn();
        const [later] = call(rule, payments());
        assert.match(later, DISABLED);
    });

    it("in the SDK's own Analyze handler, a request's rules read what its settings policy published", async () => {
        // The SDK calls a request's policies one after another, awaiting each: the settings must survive that.
        const pack = buildPolicies();
        const analyze = sdkServer.makeAnalyzeRpcFun("pko-guard", "0.1.0", "advisory", pack);
        const r = stackResource("app-prod", {
            stack: "acme/app/prod",
            projectRepo: "https://github.com/acme/app",
            commit: "2b0889718d3e63feeb6079ccd5e4488d8601e353",
            destroyOnFinalize: true,
        });
        const req = new analyzerPb.AnalyzeRequest();
        req.setType(r.type);
        req.setName(r.name);
        req.setUrn(`urn:pulumi:dev::test::${r.type}::${r.name}`);
        req.setProperties(structPb.Struct.fromJavaScript(r.props));
        req.setOptions(new analyzerPb.AnalyzerResourceOptions());
        const res = await new Promise<any>((resolve, reject) =>
            analyze({ request: req }, (err: unknown, out: unknown) => (err ? reject(err) : resolve(out))),
        );
        const messages = res
            .getDiagnosticsList()
            .filter((d: any) => d.getPolicyname() === destroyOnFinalize.name)
            .map((d: any) => d.getMessage());
        assert.strictEqual(messages.length, 1, messages.join("\n"));
        assert.match(messages[0], /production by spec\.stack "acme\/app\/prod"/);
    });

    it("in-process evaluations are packs of their own: reconfigured, they never see each other's settings", () => {
        const r = payments();
        const resource = { ...r, urn: `urn:pulumi:check::manifests::${r.type}::${r.name}`, props: r.props as never };
        const config = (production: Record<string, unknown>) =>
            reconcilePackConfig(packPolicies(), { [SETTINGS_POLICY]: production }, "test");
        const destroy = (production: Record<string, unknown>) =>
            evaluatePack([resource], config(production)).filter((x) => x.policy === destroyOnFinalize.name);
        assert.strictEqual(destroy({ properties: PAYMENTS_ARE_PRODUCTION }).length, 1);
        assert.strictEqual(destroy({ properties: { productionNamespaces: ["other"] } }).length, 0);
        assert.strictEqual(destroy({ properties: PAYMENTS_ARE_PRODUCTION }).length, 1);
    });
});
