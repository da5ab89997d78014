import * as assert from "assert";
import { rule as policy } from "../../../policies/pko-stack-secret-committed";
import { fromManifests } from "../../../policies/model/origin";
import {
    ExpectedFinding,
    TestResource,
    UNKNOWN_WIRE,
    assertFindings,
    goodSpec,
    runStackPolicy,
    secret,
    stackResource,
} from "../../support/helpers";

const TOKEN = "pul-0123456789abcdef0123456789abcdef01234567";
const SECRET_TYPE = "kubernetes:core/v1:Secret";

/** A Secret as `pko-guard check` reads it from a file, or as a program's YAML component declares it. */
function secretFrom(
    origin: "check" | "configgroup" | "code",
    props: Record<string, unknown>,
    name = "pulumi-access-token",
    namespace = "pulumi",
): TestResource {
    const urn = {
        check: `urn:pulumi:check::manifests::${SECRET_TYPE}::Secret/${namespace}/${name}`,
        configgroup: `urn:pulumi:dev::test::kubernetes:yaml/v2:ConfigGroup$${SECRET_TYPE}::${namespace}/${name}`,
        code: `urn:pulumi:dev::test::${SECRET_TYPE}::${name}`,
    }[origin];
    return {
        type: SECRET_TYPE,
        name,
        urn,
        props: { apiVersion: "v1", kind: "Secret", metadata: { name, namespace }, ...props },
    };
}

const stack = stackResource("app", goodSpec());
/** The one (advisory) finding, on the Secret `resource` (its URN's name). */
const one = (resource: string, message: RegExp): ExpectedFinding[] => [
    { policy: policy.name, level: "advisory", resource, message },
];

describe("pko-stack-secret-committed", () => {
    it("reports a Stack's token Secret committed with values, on the Secret, naming keys and the Stack but never a value", () => {
        for (const origin of ["check", "configgroup"] as const) {
            const s = secretFrom(origin, { stringData: { accessToken: TOKEN } });
            const r = runStackPolicy(policy, [stack, s]);
            assertFindings(
                r,
                one(
                    s.urn!.slice(s.urn!.lastIndexOf("::") + 2),
                    /Secret "pulumi\/pulumi-access-token", read by Stack "app".*\(key "accessToken"\)/,
                ),
            );
            assert.strictEqual(r[0].urn, s.urn);
            assert.ok(!r[0].message.includes(TOKEN), "the value is never shown");
        }
    });
    it("says what stringData is (plain text), and shows the namespace as the Secret's identity has it", () => {
        const r = runStackPolicy(policy, [stack, secretFrom("check", { stringData: { accessToken: TOKEN } })]);
        assert.match(r[0].message, /stringData plain text/);
        assert.ok(!/base64 is not encryption/.test(r[0].message), r[0].message);
        // Neither the Stack nor the Secret says a namespace: both are where they are applied ("default" here).
        const bare = stackResource("app", goodSpec(), { namespace: undefined });
        const s: TestResource = {
            type: SECRET_TYPE,
            name: "pulumi-access-token",
            urn: `urn:pulumi:check::manifests::${SECRET_TYPE}::Secret/pulumi-access-token`,
            props: { apiVersion: "v1", kind: "Secret", metadata: { name: "pulumi-access-token" }, data: { a: "eA==" } },
        };
        const out = runStackPolicy(policy, [bare, s]);
        assertFindings(
            out,
            one(
                "Secret/pulumi-access-token",
                /^Secret "pulumi-access-token" \(no metadata\.namespace: "default" assumed\), read by/,
            ),
        );
    });

    it("reads data as well as stringData, and a value that is unknown or secret-wrapped still counts", () => {
        const encoded = Buffer.from(TOKEN).toString("base64");
        for (const data of [
            { accessToken: encoded },
            { accessToken: UNKNOWN_WIRE },
            { accessToken: secret(encoded) },
        ]) {
            const r = runStackPolicy(policy, [stack, secretFrom("check", { data })]);
            assertFindings(
                r,
                one(
                    "Secret/pulumi/pulumi-access-token",
                    /Secret "pulumi\/pulumi-access-token", read by Stack "app".*\(key "accessToken"\)/,
                ),
            );
            assert.ok(!r[0].message.includes(encoded));
        }
    });
    it("passes a Secret with no values or empty placeholders, one no Stack reads, and one declared in program code", () => {
        assert.deepStrictEqual(runStackPolicy(policy, [stack, secretFrom("check", {})]), []);
        assert.deepStrictEqual(
            runStackPolicy(policy, [stack, secretFrom("check", { stringData: { accessToken: "" } })]),
            [],
        );
        assert.deepStrictEqual(
            runStackPolicy(policy, [stack, secretFrom("check", { stringData: { token: TOKEN } }, "unrelated")]),
            [],
        );
        assert.deepStrictEqual(
            runStackPolicy(policy, [
                stack,
                secretFrom("check", { stringData: { accessToken: TOKEN } }, "pulumi-access-token", "other"),
            ]),
            [],
        );
        assert.deepStrictEqual(
            runStackPolicy(policy, [stack, secretFrom("code", { stringData: { accessToken: TOKEN } })]),
            [],
        );
    });
    it("links git credentials and secretsRef too, and names every Stack that reads the Secret", () => {
        const git = stackResource(
            "git",
            goodSpec({
                gitAuth: { accessToken: { type: "Secret", secret: { name: "pulumi-access-token", key: "github" } } },
            }),
        );
        const r = runStackPolicy(policy, [
            stack,
            git,
            secretFrom("check", { stringData: { accessToken: TOKEN, github: "ghp_x" } }),
        ]);
        assertFindings(
            r,
            one(
                "Secret/pulumi/pulumi-access-token",
                /read by Stack "app" \(stack "acme\/app\/prod"\) and Stack "git" .*\(keys "accessToken", "github"\)/,
            ),
        );
    });
    it("a Secret from manifests is judged whatever comes before it, Secrets of program code included", () => {
        const code = secretFrom("code", { stringData: { accessToken: TOKEN } }, "in-code");
        const other = stackResource("other", goodSpec());
        const s = secretFrom("configgroup", { stringData: { accessToken: TOKEN } });
        const r = runStackPolicy(policy, [code, stack, other, code, s]);
        assertFindings(r, one(s.urn!.slice(s.urn!.lastIndexOf("::") + 2), /read by Stack "app" .*and Stack "other"/));
    });
    it("never throws on malformed input", () => {
        for (const props of [
            { data: "x" },
            { data: [1, 2] },
            { metadata: UNKNOWN_WIRE },
            { stringData: { a: { nested: true } } },
        ]) {
            assert.doesNotThrow(() => runStackPolicy(policy, [stack, secretFrom("check", props)]));
        }
        assert.doesNotThrow(() =>
            runStackPolicy(policy, [
                stackResource("bad", UNKNOWN_WIRE),
                secretFrom("check", { stringData: { accessToken: TOKEN } }),
            ]),
        );
    });
    it("tells manifests from program code by the URN", () => {
        assert.ok(fromManifests(`urn:pulumi:check::manifests::${SECRET_TYPE}::Secret/a/b`));
        assert.ok(fromManifests(`urn:pulumi:dev::p::kubernetes:yaml:ConfigFile$${SECRET_TYPE}::b`));
        assert.ok(fromManifests(`urn:pulumi:dev::p::my:Component$kubernetes:kustomize/v2:Directory$${SECRET_TYPE}::b`));
        assert.ok(!fromManifests(`urn:pulumi:dev::p::my:Component$${SECRET_TYPE}::b`));
        assert.ok(!fromManifests(`urn:pulumi:dev::p::kubernetes:yaml/v2:ConfigGroup::b`));
        assert.ok(!fromManifests(undefined));
    });
});
