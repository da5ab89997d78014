import * as assert from "assert";
import { policy } from "../../policies/pko-stack-esc-or-oidc-preferred";
import { goodSpec, runResourcePolicy, stackResource } from "../helpers";

const check = (spec: unknown) => runResourcePolicy(policy, stackResource("app", spec)).map((r) => r.message);
const secretRef = { type: "Secret", secret: { name: "aws", key: "k" } };

describe("pko-stack-esc-or-oidc-preferred", () => {
    it("passes OIDC Stacks with ESC environments", () => {
        assert.deepStrictEqual(check(goodSpec({ envRefs: undefined, environment: ["aws"] })), []);
        assert.deepStrictEqual(check(goodSpec({ envRefs: { AWS_ACCESS_KEY_ID: secretRef }, environment: ["aws"] })), []);
    });
    it("says when a Stack uses a static token, and which field", () => {
        assert.match(check(goodSpec())[0], /static Pulumi access token \(spec\.envRefs\.PULUMI_ACCESS_TOKEN/);
        assert.match(check(goodSpec({ envRefs: undefined, accessTokenSecret: "tok" }))[0], /spec\.accessTokenSecret/);
    });
    it("says when static cloud keys are used without ESC", () => {
        const m = check(goodSpec({ envRefs: { AWS_ACCESS_KEY_ID: secretRef, AWS_SECRET_ACCESS_KEY: secretRef } }));
        assert.strictEqual(m.length, 1);
        assert.match(m[0], /AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY/);
    });
});
