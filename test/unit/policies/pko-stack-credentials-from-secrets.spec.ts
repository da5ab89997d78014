import * as assert from "assert";
import { rule as policy } from "../../../policies/pko-stack-credentials-from-secrets";
import {
    ExpectedFinding,
    UNKNOWN_WIRE,
    assertFindings,
    goodSpec,
    messagesOn,
    onlyMessage,
    runResourcePolicy,
    secret,
    stackResource,
} from "../../support/helpers";

const CANARY = "pul-c0ffeec0ffeec0ffeec0ffeec0ffeec0ffee0000"; // shaped like a real Pulumi token

function run(spec: unknown, config: Record<string, unknown> = {}) {
    const reported = runResourcePolicy(policy, stackResource("app", spec), config);
    for (const r of reported) assert.ok(!r.message.includes(CANARY), `message echoes a secret: ${r.message}`);
    return reported;
}
/** The messages of an evaluation, which may only be this policy's mandatory findings on the Stack. */
const check = (...a: Parameters<typeof run>) => messagesOn(run(...a), policy.name, "mandatory", "app");
/** The one finding an input should produce. */
const one = (message: RegExp): ExpectedFinding[] => [
    { policy: policy.name, level: "mandatory", resource: "app", message },
];

const literal = (value: unknown) => ({ type: "Literal", literal: { value } });

describe("pko-stack-credentials-from-secrets", () => {
    it("passes a Stack whose token comes from a Secret", () => {
        assert.deepStrictEqual(check(goodSpec()), []);
    });

    it("passes a Stack with no credentials at all (OIDC / ESC)", () => {
        assert.deepStrictEqual(
            check({ stack: "a/b/dev", projectRepo: "https://x/y", branch: "main", environment: ["aws"] }),
            [],
        );
    });

    it("ignores resources that are not PKO Stacks", () => {
        const r = runResourcePolicy(policy, {
            type: "kubernetes:core/v1:Secret",
            name: "s",
            props: { stringData: { PULUMI_ACCESS_TOKEN: CANARY } },
        });
        assert.deepStrictEqual(r, []);
    });

    it("flags a Literal access token, naming the field, without the value", () => {
        const m = check(goodSpec({ envRefs: { PULUMI_ACCESS_TOKEN: literal(CANARY) } }));
        assert.strictEqual(m.length, 1);
        assert.match(m[0], /^spec\.envRefs\.PULUMI_ACCESS_TOKEN .*Literal.*type: Secret/);
    });

    it("flags a secret-wrapped Literal the same way and never echoes it", () => {
        const m = check(goodSpec({ envRefs: { PULUMI_ACCESS_TOKEN: literal(secret(CANARY)) } }));
        assert.strictEqual(m.length, 1);
    });

    it("flags a whole secret-wrapped spec with a Literal token", () => {
        const m = check(secret(goodSpec({ envRefs: { PULUMI_ACCESS_TOKEN: literal(CANARY) } })));
        assert.strictEqual(m.length, 1);
    });

    for (const [name, ref] of [
        ["Env", { type: "Env", env: { name: "X" } }],
        ["FS", { type: "FS", filesystem: { path: "/x" } }],
        ["malformed", { type: "Vault" }],
        ["a string", "pul-notaref"],
        ["a Secret without key", { type: "Secret", secret: { name: "s" } }],
    ] as const) {
        it(`flags a credential given as ${name}`, () => {
            assert.match(
                onlyMessage(check(goodSpec({ envRefs: { AWS_SECRET_ACCESS_KEY: ref } }))),
                /^spec\.envRefs\.AWS_SECRET_ACCESS_KEY /,
            );
        });
    }

    it("recognises credential-looking names and leaves others alone", () => {
        const names = [
            "GITHUB_TOKEN",
            "DB_PASSWORD",
            "STRIPE_SECRET_KEY",
            "SIGNING_KEY",
            "AWS_ACCESS_KEY_ID",
            "PULUMI_CONFIG_PASSPHRASE",
            "ARM_CLIENT_SECRET",
        ];
        for (const n of names) {
            assert.match(
                onlyMessage(check(goodSpec({ envRefs: { [n]: literal("x") } }))),
                new RegExp(`^spec\\.envRefs\\.${n} `),
            );
        }
        for (const n of ["LOG_LEVEL", "AWS_REGION", "KEYCLOAK_URL", "TOKEN_URL"]) {
            assert.strictEqual(check(goodSpec({ envRefs: { [n]: literal("x") } })).length, 0, n);
        }
    });

    it("flags a Literal whose value looks like a credential whatever its name", () => {
        assert.match(
            onlyMessage(check(goodSpec({ envRefs: { SOMETHING: literal(CANARY) } }))),
            /^spec\.envRefs\.SOMETHING /,
        );
    });

    it("honours extraCredentialNames", () => {
        const spec = goodSpec({ envRefs: { MY_HUSH: literal("x") } });
        assert.strictEqual(check(spec).length, 0);
        assert.match(onlyMessage(check(spec, { extraCredentialNames: ["MY_HU.*"] })), /^spec\.envRefs\.MY_HUSH /);
    });

    it("flags the plaintext secrets field, secret config keys and non-Secret secretsRef", () => {
        assert.match(onlyMessage(check(goodSpec({ secrets: { "app:password": CANARY } }))), /^spec\.secrets/);
        assert.match(
            onlyMessage(check(goodSpec({ config: { "app:dbPassword": CANARY, "app:replicas": "2" } }))),
            /^spec\.config\.app:dbPassword /,
        );
        assert.match(
            onlyMessage(check(goodSpec({ secretsRef: { "app:key": literal(CANARY) } }))),
            /^spec\.secretsRef\.app:key /,
        );
        assert.strictEqual(
            check(goodSpec({ secretsRef: { "app:key": { type: "Secret", secret: { name: "s", key: "k" } } } })).length,
            0,
        );
    });

    it("flags plaintext credentials in spec.envs", () => {
        assert.match(
            onlyMessage(check(goodSpec({ envs: { PULUMI_ACCESS_TOKEN: CANARY, REGION: "eu" } }))),
            /^spec\.envs\.PULUMI_ACCESS_TOKEN /,
        );
    });

    it("checks every git auth credential", () => {
        const gitAuth = {
            accessToken: literal(CANARY),
            sshAuth: { sshPrivateKey: { type: "Env", env: { name: "K" } }, password: literal(CANARY) },
            basicAuth: { userName: literal("bot"), password: { type: "FS", filesystem: { path: "/p" } } },
        };
        const m = check(goodSpec({ gitAuth }));
        assert.strictEqual(m.length, 4);
        assert.ok(m.every((x) => x.startsWith("spec.gitAuth.")));
    });

    it("flags credentials embedded in projectRepo or backend URLs", () => {
        assert.match(
            onlyMessage(check(goodSpec({ projectRepo: `https://bot:${CANARY}@github.com/a/b` }))),
            /^spec\.projectRepo embeds credentials/,
        );
        assert.match(
            onlyMessage(check(goodSpec({ backend: `https://user:${CANARY}@state.example.com` }))),
            /^spec\.backend embeds credentials/,
        );
        assert.strictEqual(check(goodSpec({ projectRepo: "git@github.com:a/b.git" })).length, 0);
        assert.strictEqual(check(goodSpec({ projectRepo: "https://github.com/a/b.git?ref=main" })).length, 0);
        for (const q of ["access_token", "private_token", "password", "sig"]) {
            const m = check(goodSpec({ projectRepo: `https://github.com/a/b.git?${q}=${CANARY}` }));
            assert.strictEqual(m.length, 1, q);
            assert.match(m[0], /spec\.projectRepo embeds credentials in its URL \(a query parameter\)/);
            assert.ok(!m[0].includes(CANARY));
        }
        assertFindings(
            run(goodSpec({ backend: `https://user:${CANARY}@state.example.com` })),
            one(/\(the user-info part\)/),
        );
    });

    it("checks the workspace template's container env", () => {
        const env = [
            { name: "AWS_SECRET_ACCESS_KEY", value: CANARY },
            { name: "GITHUB_TOKEN", valueFrom: { configMapKeyRef: { name: "c", key: "k" } } },
            { name: "NPM_TOKEN", valueFrom: { secretKeyRef: { name: "c", key: "k" } } },
        ];
        const spec = goodSpec({
            workspaceTemplate: { spec: { podTemplate: { spec: { containers: [{ name: "pulumi", env }] } } } },
        });
        assert.strictEqual(check(spec).length, 2);
    });

    it("flags a credential by shape anywhere else in the workspace pod template: args, command, probes", () => {
        const POD = "spec.workspaceTemplate.spec.podTemplate";
        const container = {
            name: "pulumi",
            args: ["--token", CANARY],
            command: ["sh", "-c", `PULUMI_ACCESS_TOKEN=${CANARY} pulumi up`],
            env: [{ name: "AWS_SECRET_ACCESS_KEY", value: CANARY }],
            readinessProbe: { httpGet: { path: "/", port: 80, httpHeaders: [{ name: "A", value: CANARY }] } },
        };
        const spec = goodSpec({
            workspaceTemplate: {
                spec: {
                    podTemplate: {
                        metadata: { annotations: { a: CANARY } },
                        spec: { containers: [container], initContainers: [{ name: "i", args: [CANARY] }] },
                    },
                },
            },
        });
        const fields = check(spec).map((m) => m.split(" ")[0]);
        assert.deepStrictEqual(fields.sort(), [
            `${POD}.metadata.annotations.a`,
            `${POD}.spec.containers[0].args[1]`,
            `${POD}.spec.containers[0].command[2]`,
            `${POD}.spec.containers[0].env[0]`,
            `${POD}.spec.containers[0].readinessProbe.httpGet.httpHeaders[0].value`,
            `${POD}.spec.initContainers[0].args[0]`,
        ]);
        assert.deepStrictEqual(
            check(
                goodSpec({
                    workspaceTemplate: {
                        spec: { podTemplate: { spec: { containers: [{ name: "p", args: ["--x"] }] } } },
                    },
                }),
            ),
            [],
        );
    });

    it("fails closed when a credential's reference or the spec is unknown", () => {
        assertFindings(
            run(goodSpec({ envRefs: { PULUMI_ACCESS_TOKEN: { type: UNKNOWN_WIRE } } })),
            one(/unknown during preview/),
        );
        assertFindings(run(goodSpec({ envRefs: UNKNOWN_WIRE })), one(/spec\.envRefs is unknown/));
        assertFindings(run(UNKNOWN_WIRE), one(/spec is unknown/));
    });

    it("does not fail on an unknown secret name when the type is known to be Secret", () => {
        const m = check(
            goodSpec({
                envRefs: { PULUMI_ACCESS_TOKEN: { type: "Secret", secret: { name: UNKNOWN_WIRE, key: "k" } } },
            }),
        );
        assert.deepStrictEqual(m, []);
    });

    describe("file-pointer variables (GOOGLE_APPLICATION_CREDENTIALS, KUBECONFIG, *_FILE, ...)", () => {
        const JSON_KEY = `{"type":"service_account","private_key":"-----BEGIN PRIVATE KEY-----\\n${CANARY}"}`;
        const names = [
            "GOOGLE_APPLICATION_CREDENTIALS",
            "AWS_SHARED_CREDENTIALS_FILE",
            "AWS_CONFIG_FILE",
            "KUBECONFIG",
            "PULUMI_CONFIG_PASSPHRASE_FILE",
            "AWS_WEB_IDENTITY_TOKEN_FILE",
            "ARM_CLIENT_CERTIFICATE_PATH",
        ];
        const paths = [
            "/var/run/secrets/gcp/key.json",
            "./creds/config",
            "~/.aws/credentials",
            "/etc/kube/a:/etc/kube/b",
        ];
        const inline = [
            JSON_KEY,
            CANARY,
            "c2VjcmV0LXRva2VuLXZhbHVl",
            "relative/key.json",
            "/path with spaces",
            "/etc/a:not-a-path",
        ];

        it("pass as a literal path: envRefs Literal, spec.envs and workspace pod env value", () => {
            for (const name of names) {
                for (const path of paths) {
                    assert.deepStrictEqual(
                        check(goodSpec({ envRefs: { ...(goodSpec().envRefs as object), [name]: literal(path) } })),
                        [],
                        `${name}=${path}`,
                    );
                    assert.deepStrictEqual(check(goodSpec({ envs: { [name]: path } })), [], `${name}=${path}`);
                    const ws = {
                        spec: {
                            env: [{ name, value: path }],
                            podTemplate: { spec: { containers: [{ name: "pulumi", env: [{ name, value: path }] }] } },
                        },
                    };
                    assert.deepStrictEqual(check(goodSpec({ workspaceTemplate: ws })), [], `${name}=${path}`);
                }
            }
        });

        it("fail with inline content (a JSON key, a token, anything not path-shaped), without echoing it", () => {
            for (const name of names) {
                for (const value of inline) {
                    const refs = check(
                        goodSpec({ envRefs: { ...(goodSpec().envRefs as object), [name]: literal(value) } }),
                    );
                    assert.strictEqual(refs.length, 1, `${name}=${value}`);
                    assert.match(
                        refs[0],
                        new RegExp(
                            `spec\\.envRefs\\.${name} \\(a Literal\\) names a credential file but holds inline content, not a file path`,
                        ),
                    );
                    assert.match(
                        onlyMessage(check(goodSpec({ envs: { [name]: value } }))),
                        new RegExp(`^spec\\.envs\\.${name} `),
                    );
                    const pod = check(
                        goodSpec({
                            workspaceTemplate: {
                                spec: {
                                    podTemplate: { spec: { containers: [{ name: "pulumi", env: [{ name, value }] }] } },
                                },
                            },
                        }),
                    );
                    assert.strictEqual(pod.length, 1, `${name}=${value}`);
                    assert.match(
                        pod[0],
                        /containers\[0\]\.env\[0\] \(".*"\) value names a credential file but holds inline content/,
                    );
                }
            }
        });

        it("fail closed on a value unknown during preview; pass Secret, Env and FS refs and valueFrom", () => {
            assertFindings(
                run(goodSpec({ envRefs: { KUBECONFIG: literal(UNKNOWN_WIRE) } })),
                one(/unknown during preview, so it cannot be verified to be a file path/),
            );
            assertFindings(run(goodSpec({ envRefs: { KUBECONFIG: UNKNOWN_WIRE } })), one(/unknown during preview/));
            assert.deepStrictEqual(
                check(
                    goodSpec({
                        envRefs: {
                            KUBECONFIG: { type: "Secret", secret: { name: "kube", key: "path" } },
                            AWS_CONFIG_FILE: { type: "Env", env: { name: "X" } },
                            GOOGLE_APPLICATION_CREDENTIALS: { type: "FS", filesystem: { path: "/p" } },
                        },
                    }),
                ),
                [],
            );
            const ws = {
                spec: {
                    env: [
                        {
                            name: "GOOGLE_APPLICATION_CREDENTIALS",
                            valueFrom: { configMapKeyRef: { name: "paths", key: "gcp" } },
                        },
                    ],
                },
            };
            assert.deepStrictEqual(check(goodSpec({ workspaceTemplate: ws })), []);
        });

        it("the variable the file points at is still a credential, and extraCredentialNames can claim a *_FILE name", () => {
            assert.match(
                onlyMessage(check(goodSpec({ envs: { GOOGLE_CREDENTIALS: "/not/a/pointer" } }))),
                /^spec\.envs\.GOOGLE_CREDENTIALS /,
            );
            assert.match(
                onlyMessage(
                    check(goodSpec({ envs: { MY_TOKEN_FILE: "/var/run/token" } }), {
                        extraCredentialNames: ["MY_TOKEN_FILE"],
                    }),
                ),
                /^spec\.envs\.MY_TOKEN_FILE /,
            );
        });
    });

    it("reports an extraCredentialNames entry RE2 cannot run instead of ignoring it", () => {
        const m = check(goodSpec(), { extraCredentialNames: ["(?=X)TOKEN"] });
        assert.strictEqual(m.length, 1);
        assert.match(m[0], /extraCredentialNames entry "\(\?=X\)TOKEN" is not a valid RE2 regular expression/);
    });
});

describe("pko-stack-credentials-from-secrets: PKO v2 fields and credentials by value", () => {
    const pw = ["s3cr", "et-", "Pa55"].join("");
    const checkNoEcho = (spec: unknown) => {
        const m = check(spec);
        for (const x of m) assert.ok(!x.includes(pw), `message echoes a value: ${x}`);
        return m;
    };

    it("flags a Literal whose value is a credential by its shape, naming field and shape, never the value", () => {
        const m = checkNoEcho(
            goodSpec({
                envRefs: { ...(goodSpec().envRefs as object), DATABASE_URL: literal(`postgres://app:${pw}@db/app`) },
            }),
        );
        assert.deepStrictEqual(m.length, 1);
        assert.match(
            m[0],
            /^spec\.envRefs\.DATABASE_URL is a Literal whose value is a credential \(a URL with a password in its user-info\)/,
        );
        assert.deepStrictEqual(
            checkNoEcho(
                goodSpec({
                    envRefs: { ...(goodSpec().envRefs as object), REPO: literal("ssh://git@github.com/acme/app.git") },
                }),
            ),
            [],
        );
    });

    it("flags credentials inside config values (JSON objects too) and secret-looking configRef keys", () => {
        const m = checkNoEcho(
            goodSpec({ config: { "app:db": { primary: `mysql://root:${pw}@db/x` }, "app:region": "us-east-1" } }),
        );
        assert.deepStrictEqual(m.length, 1);
        assert.match(
            m[0],
            /^spec\.config\.app:db\.primary holds a credential in plaintext \(a URL with a password in its user-info\)/,
        );
        const r = checkNoEcho(
            goodSpec({
                configRef: {
                    "app:dbPassword": { name: "app-config", key: "db" },
                    "app:region": { name: "app-config", key: "region" },
                },
            }),
        );
        assert.deepStrictEqual(r.length, 1);
        assert.match(r[0], /^spec\.configRef\.app:dbPassword takes a secret-looking config value from a ConfigMap/);
        assert.match(
            onlyMessage(checkNoEcho(goodSpec({ configRef: UNKNOWN_WIRE }))),
            /spec\.configRef is unknown during preview/,
        );
    });

    it("requires gitAuth.githubApp.privateKey (PKO 2.7+) to come from a Secret; app and installation ids may be literals", () => {
        const app = (privateKey: unknown) =>
            goodSpec({ gitAuth: { githubApp: { appID: literal("123"), installationID: literal("456"), privateKey } } });
        assert.match(
            onlyMessage(checkNoEcho(app(literal(pw)))),
            /^spec\.gitAuth\.githubApp\.privateKey \(a GitHub App private key\) is a Literal/,
        );
        assert.deepStrictEqual(checkNoEcho(app({ type: "Secret", secret: { name: "gh-app", key: "pem" } })), []);
        assert.match(onlyMessage(checkNoEcho(app(UNKNOWN_WIRE))), /githubApp\.privateKey .* unknown during preview/);
    });

    it("flags a workspace env value that is a credential by shape (JWT), in the template and in its containers", () => {
        const jwt = `eyJ${"a".repeat(20)}.eyJ${"b".repeat(30)}.${"c".repeat(43)}`;
        const m = checkNoEcho(
            goodSpec({
                workspaceTemplate: {
                    spec: {
                        env: [{ name: "HOOK", value: `Bearer ${jwt}` }],
                        podTemplate: {
                            spec: { containers: [{ name: "pulumi", env: [{ name: "OTHER", value: jwt }] }] },
                        },
                    },
                },
            }),
        );
        assert.deepStrictEqual(m.length, 2);
        for (const x of m) assert.match(x, /sets a credential as a literal value \(a JWT\)/);
        for (const x of m) assert.ok(!x.includes(jwt));
    });
});
