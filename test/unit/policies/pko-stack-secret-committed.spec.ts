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
    describe("SOPS-encrypted Secrets", () => {
        // Made-up ciphertext in SOPS's value format; the metadata as `sops --encrypt` writes it (age recipient).
        const enc = (data: string) =>
            `ENC[AES256_GCM,data:${data},iv:V0gvOVc4Y0lQbEZ0eGVNQkJqeTRtZz09,tag:c2VjcmV0LXRhZy0wMDAwMDA=,type:str]`;
        const SOPS = {
            age: [
                {
                    recipient: "age1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq",
                    enc: "-----BEGIN AGE ENCRYPTED FILE-----\n",
                },
            ],
            lastmodified: "2026-11-30T10:00:00Z",
            mac: enc("bWFjLW9mLXRoZS10cmVl"),
            encrypted_regex: "^(data|stringData)$",
            version: "3.9.4",
        };
        it("passes a Secret whose every value is SOPS-encrypted and that carries SOPS metadata, in data or stringData", () => {
            for (const origin of ["check", "configgroup"] as const) {
                for (const values of [
                    { stringData: { accessToken: enc("cHVsLWFiY2RlZg==") } },
                    { data: { accessToken: enc("Y0hWc0xXRmlZMlJsWmc9PQ==") } },
                    { data: { accessToken: enc("eA==") }, stringData: { github: enc("Z2hwXw==") } },
                ]) {
                    const r = runStackPolicy(policy, [stack, secretFrom(origin, { ...values, sops: SOPS })]);
                    assert.deepStrictEqual(r, [], JSON.stringify(values));
                }
            }
        });
        it("reports the values SOPS left in the clear (unencrypted_suffix, encrypted_regex), naming only those keys", () => {
            const s = secretFrom("check", {
                stringData: { accessToken: enc("cHVsLWFiY2RlZg=="), user_unencrypted: "bot", github: TOKEN },
                sops: { ...SOPS, unencrypted_suffix: "_unencrypted" },
            });
            const r = runStackPolicy(policy, [stack, s]);
            assertFindings(
                r,
                one(
                    "Secret/pulumi/pulumi-access-token",
                    /\(keys "github", "user_unencrypted"; SOPS encrypted its other values but left these in the clear\)/,
                ),
            );
            assert.ok(!r[0].message.includes('"accessToken"'), r[0].message);
        });
        it("counts ENC-looking values without SOPS metadata (or with metadata but no mac) as written", () => {
            for (const sops of [undefined, {}, { version: "3.9.4" }, { ...SOPS, mac: "" }]) {
                const s = secretFrom("check", {
                    stringData: { accessToken: enc("cHVsLWFiY2RlZg==") },
                    ...(sops ? { sops } : {}),
                });
                assertFindings(
                    runStackPolicy(policy, [stack, s]),
                    one("Secret/pulumi/pulumi-access-token", /\(key "accessToken"\); anyone/),
                );
            }
            // Metadata does not make a plain value encrypted, nor does a value that only starts like one.
            for (const value of [TOKEN, "ENC[AES256_GCM,data:not base64!,iv:x,tag:y,type:str]", `${enc("eA==")}x`]) {
                const s = secretFrom("check", { stringData: { accessToken: value }, sops: SOPS });
                assertFindings(
                    runStackPolicy(policy, [stack, s]),
                    one("Secret/pulumi/pulumi-access-token", /\(key "accessToken"\); anyone/),
                );
            }
        });
        it("passes a data value that is a whole SOPS-encrypted file (a secretGenerator over one), in every format", () => {
            const files = [
                `accessToken=${enc("cHVs")}\nsops_mac=${enc("bWFj")}\nsops_version=3.9.4\n`,
                `accessToken: ${enc("cHVs")}\nsops:\n    mac: ${enc("bWFj")}\n    version: 3.9.4\n`,
                `{\n\t"data": "${enc("cHVs")}",\n\t"sops": {\n\t\t"mac": "${enc("bWFj")}"\n\t}\n}`,
                `[default]\naccessToken = ${enc("cHVs")}\n\n[sops]\nmac = ${enc("bWFj")}\n`,
            ];
            for (const file of files) {
                const data = { "token.env": Buffer.from(file).toString("base64") };
                assert.deepStrictEqual(runStackPolicy(policy, [stack, secretFrom("check", { data })]), [], file);
            }
            // A plain file generated into data is committed; so is a marker in stringData (read as written).
            const plainFile = { "token.env": Buffer.from(`accessToken=${TOKEN}\n`).toString("base64") };
            assertFindings(
                runStackPolicy(policy, [stack, secretFrom("check", { data: plainFile })]),
                one("Secret/pulumi/pulumi-access-token", /\(key "token\.env"\)/),
            );
            assertFindings(
                runStackPolicy(policy, [stack, secretFrom("check", { stringData: { "token.env": files[0] } })]),
                one("Secret/pulumi/pulumi-access-token", /\(key "token\.env"\)/),
            );
        });
        it("passes the keys a secretGenerator makes of an encrypted dotenv file, its sops_* keys included", () => {
            const b64 = (v: string) => Buffer.from(v).toString("base64");
            const data = {
                accessToken: b64(enc("cHVs")),
                sops_mac: b64(enc("bWFj")),
                sops_version: b64("3.9.4"),
                sops_age__list_0__map_recipient: b64("age1qqqq"),
            };
            assert.deepStrictEqual(runStackPolicy(policy, [stack, secretFrom("check", { data })]), []);
            // A key SOPS left in the clear (unencrypted_suffix) is committed; without sops_mac nothing is encrypted.
            const partly = { ...data, user_unencrypted: b64("bot") };
            assertFindings(
                runStackPolicy(policy, [stack, secretFrom("check", { data: partly })]),
                one(
                    "Secret/pulumi/pulumi-access-token",
                    /\(key "user_unencrypted"; SOPS encrypted its other values but left this one in the clear\)/,
                ),
            );
            const { sops_mac: _mac, ...noMac } = data;
            assertFindings(
                runStackPolicy(policy, [stack, secretFrom("check", { data: noMac })]),
                one(
                    "Secret/pulumi/pulumi-access-token",
                    /\(keys "accessToken", "sops_age__list_0__map_recipient", "sops_version"\); anyone/,
                ),
            );
        });
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
