import * as assert from "assert";
import { rule as policy } from "../../../policies/pko-stack-esc-or-oidc-preferred";
import { goodSpec, runResourcePolicy, stackResource, ExpectedFinding, assertFindings } from "../../support/helpers";
import { ReportedFinding } from "../../../policies/model/policy";

const run = (spec: unknown) => runResourcePolicy(policy, stackResource("app", spec));
/** The one finding an input should produce. */
const one = (message: RegExp): ExpectedFinding[] => [
    { policy: policy.name, level: "advisory", resource: "app", message },
];
const check = (...a: Parameters<typeof run>) => run(...a).map((r) => r.message);
const secretRef = { type: "Secret", secret: { name: "aws", key: "k" } };

describe("pko-stack-esc-or-oidc-preferred", () => {
    it("passes OIDC Stacks with ESC environments", () => {
        assert.deepStrictEqual(check(goodSpec({ envRefs: undefined, environment: ["aws"] })), []);
        assert.deepStrictEqual(
            check(goodSpec({ envRefs: { AWS_ACCESS_KEY_ID: secretRef }, environment: ["aws"] })),
            [],
        );
    });
    it("says when a Stack uses a static token, and which field", () => {
        assertFindings(run(goodSpec()), one(/static Pulumi access token \(spec\.envRefs\.PULUMI_ACCESS_TOKEN/));
        assertFindings(run(goodSpec({ envRefs: undefined, accessTokenSecret: "tok" })), one(/spec\.accessTokenSecret/));
    });
    it("says when static cloud keys are used without ESC", () => {
        const m = check(goodSpec({ envRefs: { AWS_ACCESS_KEY_ID: secretRef, AWS_SECRET_ACCESS_KEY: secretRef } }));
        assert.strictEqual(m.length, 1);
        assert.match(m[0], /AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY/);
    });
    it("gives each finding the field it is about as data: the token, else the first static key", () => {
        const fields = (spec: unknown) => {
            const data: ReportedFinding[] = [];
            runResourcePolicy(policy, stackResource("app", spec), {}, {}, data);
            return data.map((f) => f.field);
        };
        assert.deepStrictEqual(fields(goodSpec()), ["spec.envRefs.PULUMI_ACCESS_TOKEN"]);
        assert.deepStrictEqual(fields(goodSpec({ envRefs: undefined, accessTokenSecret: "tok" })), [
            "spec.accessTokenSecret",
        ]);
        assert.deepStrictEqual(fields(goodSpec({ envRefs: { AWS_ACCESS_KEY_ID: secretRef } })), [
            "spec.envRefs.AWS_ACCESS_KEY_ID",
        ]);
    });
});
