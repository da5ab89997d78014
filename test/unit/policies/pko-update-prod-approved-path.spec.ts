import * as assert from "assert";
import { rule as policy } from "../../../policies/pko-update-prod-approved-path";
import {
    ExpectedFinding,
    goodSpec,
    stackResource,
    TestResource,
    UNKNOWN_WIRE,
    assertFindings,
    messagesOn,
    runResourcePolicy,
} from "../../support/helpers";

const UPDATE = "kubernetes:auto.pulumi.com/v1alpha1:Update";

const update = (spec: Record<string, unknown>, metadata: Record<string, unknown> = {}): TestResource => ({
    type: UPDATE,
    name: "u",
    props: {
        apiVersion: "auto.pulumi.com/v1alpha1",
        kind: "Update",
        metadata: { name: "u", namespace: "pulumi", ...metadata },
        spec: { workspaceName: "webapp", stackName: "acme/webapp/production", ...spec },
    },
});
const run = (r: TestResource, config: Record<string, unknown> = {}, settings: Record<string, unknown> | null = {}) =>
    runResourcePolicy(policy, r, config, settings);
const check = (...a: Parameters<typeof run>) => messagesOn(run(...a), policy.name, "mandatory", "u");
const one = (message: RegExp): ExpectedFinding[] => [
    { policy: policy.name, level: "mandatory", resource: "u", message },
];

describe("pko-update-prod-approved-path", () => {
    it("refuses a destroy or up Update of a production stack, saying how it is production", () => {
        assertFindings(
            run(update({ type: "destroy" })),
            one(
                /^Update "u" runs `pulumi destroy` on stack "acme\/webapp\/production", production by spec\.stackName "acme\/webapp\/production" \(pattern .*\); change production through its Stack, or create the Update in a namespace listed in approvedUpdateNamespaces\.$/,
            ),
        );
        assertFindings(
            run(update({ type: "destroy", remove: true })),
            one(/pulumi destroy` on stack "acme\/webapp\/production" and removes the stack and its configuration,/),
        );
        assertFindings(run(update({ type: "up", target: ["urn:x"] })), one(/runs `pulumi up` on stack/));
        assertFindings(
            run(update({ type: "destroy", stackName: "dev" }), {}, { productionNamespaces: ["pulumi"] }),
            one(/production by namespace "pulumi"/),
        );
        assertFindings(
            run(update({ type: "destroy", stackName: "dev" }, { labels: { env: "prod" } })),
            one(/production by label env="prod"/),
        );
    });

    it("passes previews and refreshes, non-production stacks, other kinds, and the approved namespaces", () => {
        assert.deepStrictEqual(check(update({ type: "preview" })), []);
        assert.deepStrictEqual(check(update({ type: "refresh", runProgram: true })), []);
        assert.deepStrictEqual(check(update({ type: "destroy", stackName: "acme/webapp/dev" })), []);
        assert.deepStrictEqual(check(update({ type: "destroy" }), { approvedUpdateNamespaces: ["pulumi"] }), []);
        assert.deepStrictEqual(check(update({ type: "bogus" })), []);
        const stack: TestResource = {
            type: "kubernetes:pulumi.com/v1:Stack",
            name: "u",
            props: { metadata: { name: "u" }, spec: { stack: "a/b/prod", type: "destroy" } },
        };
        assert.deepStrictEqual(check(stack), []);
        // A typed wrapper under another token is read by its GVK.
        assert.strictEqual(check({ ...update({ type: "destroy" }), type: "kubernetes:acme:Update" }).length, 1);
    });

    it("fails closed when the stack name, the type, the spec or the settings cannot tell", () => {
        assertFindings(
            run(update({ type: "destroy", stackName: undefined })),
            one(
                /names no stack \(spec\.stackName\), so whether it targets production cannot be told; the rule fails closed/,
            ),
        );
        assertFindings(
            run(update({ type: "up", stackName: UNKNOWN_WIRE })),
            one(
                /runs `pulumi up` on its stack, and spec\.stackName is unknown during preview, so the stack may be production; the rule fails closed/,
            ),
        );
        assertFindings(
            run(update({ type: UNKNOWN_WIRE })),
            one(/may change stack "acme\/webapp\/production" \(spec\.type is unknown during preview\)/),
        );
        assertFindings(
            run({ ...update({}), props: { ...(update({}).props as object), spec: UNKNOWN_WIRE } }),
            one(/spec is unknown during preview/),
        );
        assertFindings(
            run(update({ type: "destroy" }), {}, null),
            one(/cannot decide whether it is production: the settings policy/),
        );
        // A namespace unknown during preview is not an approved one.
        assert.strictEqual(
            check(update({ type: "destroy" }, { namespace: UNKNOWN_WIRE }), { approvedUpdateNamespaces: ["pulumi"] })
                .length,
            1,
        );
    });

    it("refuses a production or preview Stack's updateTemplate that replaces the operation or the stack", () => {
        const stack = (spec: Record<string, unknown>) => stackResource("u", goodSpec(spec));
        assertFindings(
            run(stack({ updateTemplate: { spec: { type: "destroy", ttlAfterCompleted: "1h" } } })),
            one(
                /^Stack "u" \(stack "acme\/app\/prod"\) is production by spec\.stack .* sets spec\.updateTemplate\.spec\.type, which replaces the operation/,
            ),
        );
        assertFindings(
            run(stack({ stack: "acme/app/pr-7", preview: true, updateTemplate: { spec: { type: "up" } } })),
            one(/is a preview Stack but sets spec\.updateTemplate\.spec\.type/),
        );
        assertFindings(
            run(stack({ updateTemplate: { spec: { stackName: "acme/app/dev", workspaceName: "w" } } })),
            one(/sets spec\.updateTemplate\.spec\.stackName, spec\.updateTemplate\.spec\.workspaceName/),
        );
        assertFindings(
            run(stack({ stack: UNKNOWN_WIRE, updateTemplate: { spec: { type: "up" } } })),
            one(/spec\.stack is unknown during preview.*the rule fails closed/),
        );
        assertFindings(
            run(stack({ updateTemplate: UNKNOWN_WIRE })),
            one(/spec\.updateTemplate is unknown during preview/),
        );
        assert.deepStrictEqual(check(stack({ updateTemplate: { spec: { ttlAfterCompleted: "1h" } } })), []);
        assert.deepStrictEqual(
            check(stack({ stack: "acme/app/dev", updateTemplate: { spec: { type: "destroy" } } })),
            [],
        );
    });
});
