import * as assert from "assert";
import { rule as policy } from "../../../policies/pko-workspace-program-objects";
import { rule as noClusterAdmin } from "../../../policies/pko-stack-no-cluster-admin";
import {
    ExpectedFinding,
    TestResource,
    UNKNOWN_WIRE,
    assertFindings,
    messagesOn,
    onlyMessage,
    runResourcePolicy,
    runStackPolicy,
} from "../../support/helpers";
import { ReportedFinding } from "../../../policies/model/policy";

const WS = "kubernetes:auto.pulumi.com/v1alpha1:Workspace";
const PROGRAM = "kubernetes:pulumi.com/v1:Program";
const pw = ["pa", "55", "w0rd!"].join("");

const workspace = (spec: unknown, name = "ws"): TestResource => ({
    type: WS,
    name,
    props: { apiVersion: "auto.pulumi.com/v1alpha1", kind: "Workspace", metadata: { name, namespace: "pulumi" }, spec },
});
const program = (body: unknown): TestResource => ({
    type: PROGRAM,
    name: "prog",
    props: { apiVersion: "pulumi.com/v1", kind: "Program", metadata: { name: "prog" }, program: body },
});

function check(r: TestResource): string[] {
    const out = messagesOn(runResourcePolicy(policy, r), policy.name, "mandatory", r.name);
    for (const m of out) assert.ok(!m.includes(pw), `echoes a value: ${m}`);
    return out;
}

describe("pko-workspace-program-objects", () => {
    const good = {
        serviceAccountName: "ws",
        git: { url: "https://github.com/acme/app", ref: "a".repeat(40) },
        stacks: [{ name: "dev", config: [{ key: "aws:region", value: "us-east-1" }] }],
    };

    it("passes a Workspace and a Program without credentials or privilege, and ignores other kinds", () => {
        assert.deepStrictEqual(check(workspace(good)), []);
        assert.deepStrictEqual(
            check(
                program({
                    variables: { region: "us-east-1" },
                    resources: { cm: { type: "kubernetes:core/v1:ConfigMap", properties: { data: { a: "b" } } } },
                }),
            ),
            [],
        );
        assert.deepStrictEqual(
            check({
                type: "kubernetes:core/v1:ConfigMap",
                name: "c",
                props: { data: { url: `postgres://a:${pw}@h/d` } },
            }),
            [],
        );
    });

    it("judges a Workspace's env, stacks' config, URLs and pod template like a Stack's workspace template", () => {
        const m = check(
            workspace({
                ...good,
                env: [{ name: "PULUMI_ACCESS_TOKEN", value: pw }],
                stacks: [
                    {
                        name: "dev",
                        config: [
                            { key: "app:dbPassword", value: pw },
                            { key: "app:url", value: `https://h/x?token=${pw}` },
                            { key: "app:apiKey", valueFrom: { env: "API_KEY" }, secret: true },
                        ],
                    },
                ],
                podTemplate: {
                    spec: {
                        hostNetwork: true,
                        containers: [{ name: "pulumi", securityContext: { privileged: true } }],
                    },
                },
            }),
        );
        assert.deepStrictEqual(m.map((x) => x.split(" ")[0]).sort(), [
            "spec.env[0]",
            "spec.podTemplate.spec.containers[0].securityContext.privileged",
            "spec.podTemplate.spec.hostNetwork",
            "spec.stacks[0].config[0]",
            "spec.stacks[0].config[1].value",
        ]);
        assert.match(
            m.find((x) => x.startsWith("spec.stacks[0].config[1]"))!,
            /a URL with a credential in its query/,
        );
        assert.match(onlyMessage(check(workspace(UNKNOWN_WIRE))), /unknown during preview/);
    });

    it("judges a Program's variables, resources, outputs and configuration defaults", () => {
        const m = check(
            program({
                configuration: {
                    dbPassword: { type: "String", default: "x" },
                    region: { type: "String", default: "us-east-1" },
                },
                variables: { conn: `mysql://root:${pw}@db/app`, plain: "hello" },
                resources: {
                    s: {
                        type: "kubernetes:core/v1:Secret",
                        properties: { stringData: { key: ["-----BEGIN ", "EC PRIVATE KEY-----"].join("") } },
                    },
                },
            }),
        );
        assert.deepStrictEqual(m.map((x) => x.split(" ")[0]).sort(), [
            "program.configuration.dbPassword",
            "program.resources.s.properties.stringData.key",
            "program.variables.conn",
        ]);
        assert.match(onlyMessage(check(program(UNKNOWN_WIRE))), /unknown during preview/);
    });

    it("judges a Program's properties named like a credential as a Stack's config keys, literals only", () => {
        const m = check(
            program({
                variables: { dbPassword: pw, region: "us-east-1", apiToken: "${secretToken}" },
                resources: {
                    db: {
                        type: "aws:rds:Instance",
                        properties: {
                            password: pw,
                            masterUserSecret: { "fn::secret": pw },
                            passwordFile: "/run/secrets/db",
                            tokenSecretRef: "db-token",
                            secretName: "db-creds",
                            username: "admin",
                            clientSecret: "${config.clientSecret}",
                            nested: [{ "app-secret": 12345 }],
                        },
                    },
                },
            }),
        );
        assert.deepStrictEqual(m.map((x) => x.split(" ")[0]).sort(), [
            "program.resources.db.properties.masterUserSecret",
            'program.resources.db.properties.nested[0]["app-secret"]',
            "program.resources.db.properties.password",
            "program.variables.dbPassword",
        ]);
        assert.ok(
            m.every((x) => /named like a credential and holds a literal.*spec\.secretsRef/.test(x)),
            m.join("\n"),
        );
        // A credential by shape under a credential's name is reported once, by its shape.
        const token = ["ghp_", "a".repeat(36)].join("");
        const one = check(program({ resources: { r: { type: "x:y:Z", properties: { token } } } }));
        assert.match(onlyMessage(one), /program\.resources\.r\.properties\.token holds a credential in plaintext \(/);
    });

    it("gives each finding the field it is about as data, not the spec.secretsRef its advice names", () => {
        const fields = (r: TestResource) => {
            const data: ReportedFinding[] = [];
            runResourcePolicy(policy, r, {}, {}, data);
            return data.map((f) => f.field).sort();
        };
        const body = {
            configuration: { dbPassword: { type: "String", default: "x" } },
            variables: { conn: `mysql://root:${pw}@db/app` },
            resources: { db: { type: "aws:rds:Instance", properties: { password: pw } } },
        };
        assert.deepStrictEqual(fields(program(body)), [
            "program.configuration.dbPassword.default",
            "program.resources.db.properties.password",
            "program.variables.conn",
        ]);
        const env = [{ name: "PULUMI_ACCESS_TOKEN", value: pw }];
        assert.deepStrictEqual(fields(workspace({ ...good, env })), ["spec.env[0].value"]);
    });

    it("a Workspace's account is judged by pko-stack-no-cluster-admin, its pod template's account first", () => {
        const crb = (sa: string): TestResource => ({
            type: "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding",
            name: "b",
            props: {
                metadata: { name: "b" },
                roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
                subjects: [{ kind: "ServiceAccount", name: sa, namespace: "pulumi" }],
            },
        });
        const ws = workspace({ ...good, podTemplate: { spec: { serviceAccountName: "root-sa" } } });
        const r = runStackPolicy(noClusterAdmin, [ws, crb("root-sa")]);
        const onB = (message: RegExp): ExpectedFinding[] => [
            { policy: noClusterAdmin.name, level: "mandatory", resource: "b", message },
        ];
        assertFindings(r, onB(/which Workspace "ws" runs as \(spec\.podTemplate\.spec\.serviceAccountName\)/));
        assert.strictEqual(runStackPolicy(noClusterAdmin, [ws, crb("ws")]).length, 0);
        assertFindings(
            runStackPolicy(noClusterAdmin, [workspace({}), crb("default")]),
            onB(/ServiceAccount pulumi\/default, which Workspace "ws"/),
        );
    });
});
