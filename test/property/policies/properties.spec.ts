/**
 * Property tests (fast-check) over generated PKO Stacks, RBAC objects and S3 resources: random shapes,
 * wrong types, missing fields, secret-wrapped and unknown values. Every policy returns without throwing
 * (through the SDK's own unknown-checking proxy, so reading an unknown value would throw), is
 * deterministic, and never puts a secret canary into a message. 1,000 cases per rule
 * (PKO_GUARD_PROPERTY_RUNS sets more; the property tier, test/tiers/property.js).
 */
import * as assert from "assert";
import fc from "fast-check";
import { ResourceValidationPolicy, StackValidationPolicy } from "@pulumi/policy";
import { policies } from "../../../policies";
import { decodeMessage, encodeMessage } from "../../../policies/model/message";
import { COULD_NOT_EVALUATE, ReportedFinding } from "../../../policies/model/policy";
import { TestResource, UNKNOWN_WIRE, runResourcePolicy, runStackPolicy, secret } from "../../support/helpers";

const RUNS = Number(process.env.PKO_GUARD_PROPERTY_RUNS ?? 1000);
const CANARY = "CANARY-5e3d1f0b9a7c4e21";

/**
 * Any value a resource property can hold on the wire, secrets and unknowns included. The canary goes
 * only into secret-bearing fields (below); identifiers such as names and namespaces may be echoed.
 */
const anyValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
    value: fc.oneof(
        { depthSize: "small", withCrossShrink: true },
        fc.string({ maxLength: 12 }),
        fc.integer(),
        fc.boolean(),
        fc.constant(null),
        fc.constant(UNKNOWN_WIRE),
        fc.array(tie("value"), { maxLength: 3 }),
        fc.dictionary(fc.string({ maxLength: 8 }), tie("value"), { maxKeys: 3 }),
        tie("value").map(secret),
    ),
})).value;

/** A well-shaped value most of the time; otherwise secret-wrapped, garbage, unknown or missing. */
const maybe = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<unknown> =>
    fc.oneof(
        { arbitrary: arb, weight: 6 },
        { arbitrary: arb.map(secret), weight: 1 },
        { arbitrary: anyValue, weight: 1 },
        { arbitrary: fc.constant(UNKNOWN_WIRE), weight: 1 },
        { arbitrary: fc.constant(undefined), weight: 1 },
    );

/** Values of secret-bearing fields: each carries the canary (alone or inside a realistic token). */
const secretValue = fc.constantFrom(
    CANARY,
    `pul-0123456789abcdef ${CANARY}`,
    `-----BEGIN RSA PRIVATE KEY----- ${CANARY}`,
    // Credentials by shape (credential-shapes.ts), whatever the field is called.
    `postgres://app:${CANARY}@db/app`,
    `https://hooks.example.com/x?token=${CANARY}`,
    `eyJ${CANARY}.eyJ${CANARY}.${CANARY}${CANARY}`,
    JSON.stringify({ type: "service_account", private_key: CANARY }),
);
const envName = fc.constantFrom(
    "PULUMI_ACCESS_TOKEN",
    "AWS_SECRET_ACCESS_KEY",
    "DB_PASSWORD",
    "LOG_LEVEL",
    "GITHUB_TOKEN",
    "X",
);
const ref = fc.record(
    {
        type: maybe(fc.constantFrom("Secret", "Literal", "Env", "FS", "Vault")),
        secret: maybe(
            fc.record({
                name: maybe(fc.constantFrom("pulumi-access-token", "x", "")),
                key: maybe(fc.string({ maxLength: 6 })),
            }),
        ),
        literal: maybe(fc.record({ value: maybe(secretValue) })),
        env: maybe(fc.record({ name: fc.constant(CANARY) })),
        filesystem: maybe(fc.record({ path: fc.constant(CANARY) })),
    },
    { requiredKeys: [] },
);
const envVar = fc.record(
    {
        name: maybe(envName),
        value: maybe(secretValue),
        valueFrom: maybe(fc.record({ secretKeyRef: anyValue, configMapKeyRef: anyValue })),
    },
    { requiredKeys: [] },
);
const container = fc.record(
    {
        env: maybe(fc.array(envVar, { maxLength: 2 })),
        ports: maybe(fc.array(maybe(fc.record({ hostPort: maybe(fc.constantFrom(0, 8080)) })), { maxLength: 1 })),
        securityContext: maybe(fc.record({ privileged: maybe(fc.boolean()) })),
    },
    { requiredKeys: [] },
);
/** A Workspace spec (auto.pulumi.com), also a Stack's spec.workspaceTemplate.spec. */
const workspaceSpec = fc.record(
    {
        serviceAccountName: maybe(fc.constantFrom("ws", "deployer")),
        env: maybe(fc.array(envVar, { maxLength: 2 })),
        git: maybe(
            fc.record({ url: maybe(fc.constantFrom("https://github.com/a/b", `https://u:${CANARY}@github.com/a/b`)) }),
        ),
        stacks: maybe(
            fc.array(
                maybe(
                    fc.record({
                        secretsProvider: maybe(
                            fc.constantFrom("passphrase", `azurekeyvault://v?client_secret=${CANARY}`),
                        ),
                        config: maybe(
                            fc.array(
                                maybe(
                                    fc.record(
                                        {
                                            key: maybe(fc.constantFrom("app:password", "app:region")),
                                            value: maybe(secretValue),
                                            secret: maybe(fc.boolean()),
                                        },
                                        { requiredKeys: [] },
                                    ),
                                ),
                                { maxLength: 2 },
                            ),
                        ),
                    }),
                ),
                { maxLength: 1 },
            ),
        ),
        podTemplate: maybe(
            fc.record({
                spec: maybe(
                    fc.record(
                        {
                            serviceAccountName: maybe(fc.constantFrom("root-sa", "deployer", "")),
                            serviceAccount: maybe(fc.constant("root-sa")),
                            hostNetwork: maybe(fc.boolean()),
                            containers: maybe(fc.array(maybe(container), { maxLength: 2 })),
                            initContainers: maybe(fc.array(maybe(container), { maxLength: 1 })),
                        },
                        { requiredKeys: [] },
                    ),
                ),
            }),
        ),
    },
    { requiredKeys: [] },
);
const spec = fc.record(
    {
        stack: maybe(fc.constantFrom("acme/app/prod", "acme/app/dev", "prod", "a/b/production-eu", "")),
        projectRepo: maybe(
            fc.constantFrom("https://github.com/a/b", `https://u:${CANARY}@github.com/a/b`, `https://${CANARY}@x.io/r`),
        ),
        backend: maybe(fc.constantFrom("s3://bucket", `https://u:${CANARY}@state`)),
        commit: maybe(fc.oneof(fc.stringMatching(/^[0-9a-f]{40}$/), fc.stringMatching(/^[0-9a-f]{1,12}$/))),
        branch: maybe(fc.constantFrom("main", "release", "")),
        destroyOnFinalize: maybe(fc.boolean()),
        refresh: maybe(fc.boolean()),
        serviceAccountName: maybe(fc.constantFrom("deployer", "default")),
        envRefs: maybe(fc.dictionary(envName, maybe(ref), { maxKeys: 3 })),
        envs: maybe(fc.dictionary(envName, secretValue, { maxKeys: 2 })),
        secrets: maybe(fc.dictionary(fc.string({ maxLength: 6 }), secretValue, { maxKeys: 2 })),
        secretsRef: maybe(fc.dictionary(fc.string({ maxLength: 6 }), maybe(ref), { maxKeys: 2 })),
        config: maybe(
            fc.dictionary(fc.constantFrom("app:password", "app:replicas", "apiToken"), secretValue, { maxKeys: 2 }),
        ),
        gitAuth: maybe(
            fc.record({
                accessToken: maybe(ref),
                sshAuth: maybe(fc.record({ sshPrivateKey: maybe(ref), password: maybe(ref) })),
                basicAuth: maybe(fc.record({ userName: maybe(ref), password: maybe(ref) })),
                githubApp: maybe(fc.record({ appID: maybe(ref), installationID: maybe(ref), privateKey: maybe(ref) })),
            }),
        ),
        configRef: maybe(
            fc.dictionary(
                fc.constantFrom("app:password", "app:region", "apiToken"),
                maybe(fc.record({ name: maybe(fc.constant("cm")), key: maybe(fc.constant("k")) })),
                { maxKeys: 2 },
            ),
        ),
        secretsProvider: maybe(
            fc.constantFrom("awskms://alias/x?region=us-east-1", `hashivault://u:${CANARY}@vault/key`),
        ),
        fluxSource: maybe(anyValue),
        programRef: maybe(anyValue),
        workspaceTemplate: maybe(fc.record({ spec: maybe(workspaceSpec) })),
    },
    { requiredKeys: [] },
);
const waveAnnotations = maybe(
    fc.record({ "argocd.argoproj.io/sync-wave": maybe(fc.constantFrom("0", "1", "2", "-1", "x")) }),
);
/** Where a core object was written: program code, or YAML manifests (read by `pko-guard check`, or a program's ConfigGroup). */
const origin = fc.constantFrom("code", "check", "configgroup");
const coreResource: fc.Arbitrary<TestResource> = fc
    .tuple(
        fc.record({
            type: fc.constantFrom("kubernetes:core/v1:Secret", "kubernetes:core/v1:ServiceAccount"),
            name: fc.constantFrom("tok", "sa"),
            props: fc.record({
                metadata: maybe(
                    fc.record({
                        name: maybe(
                            fc.constantFrom("pulumi-access-token", "pulumi-access-token", "deployer", "default"),
                        ),
                        namespace: maybe(fc.constantFrom("pulumi", "default")),
                        annotations: waveAnnotations,
                    }),
                ),
                stringData: maybe(fc.record({ token: secretValue })),
                data: maybe(
                    fc.dictionary(fc.constantFrom("accessToken", "password"), maybe(secretValue), { maxKeys: 2 }),
                ),
            }),
        }),
        origin,
    )
    .map(([r, o]) =>
        o === "code"
            ? r
            : {
                  ...r,
                  urn:
                      o === "check"
                          ? `urn:pulumi:check::manifests::${r.type}::${r.name}`
                          : `urn:pulumi:dev::test::kubernetes:yaml/v2:ConfigGroup$${r.type}::${r.name}`,
              },
    );
/** The token Secret the common Stack shape reads, written in YAML manifests, with or without values. */
const tokenSecret: fc.Arbitrary<TestResource> = fc
    .record({
        metadata: fc.record({
            name: fc.constant("pulumi-access-token"),
            namespace: maybe(fc.constantFrom("pulumi", "default")),
        }),
        stringData: maybe(fc.record({ token: maybe(secretValue) })),
        data: maybe(fc.dictionary(fc.constantFrom("token", "other"), maybe(secretValue), { maxKeys: 2 })),
    })
    .chain((props) =>
        fc.constantFrom(
            {
                type: "kubernetes:core/v1:Secret",
                name: "tok",
                props,
                urn: "urn:pulumi:check::manifests::kubernetes:core/v1:Secret::Secret/tok",
            },
            {
                type: "kubernetes:core/v1:Secret",
                name: "tok",
                props,
                urn: "urn:pulumi:dev::test::kubernetes:yaml/v2:ConfigGroup$kubernetes:core/v1:Secret::tok",
            },
        ),
    );
/** What `pko-guard check` writes on an Application or ApplicationSet it could not render (policies/model/origin.ts NOT_RENDERED). */
const notRendered = maybe(
    fc.record({
        "pko-guard/not-rendered": maybe(
            fc.constantFrom(
                "",
                'spec.source is chart "c" from a Helm repository, which check does not read',
                'spec.sources[1].path "x" is not a folder of this repository\nspec.generators[0] ("clusters" generator) is not expanded by check',
                7 as unknown as string,
            ),
        ),
    }),
);
const argoSource = fc.record(
    {
        repoURL: maybe(fc.constantFrom("https://charts.example", "https://github.com/acme/x.git")),
        chart: maybe(fc.constant("c")),
        path: maybe(fc.constant("x")),
    },
    { requiredKeys: [] },
);
const applicationResource: fc.Arbitrary<TestResource> = fc.record({
    type: fc.constantFrom(
        "kubernetes:argoproj.io/v1alpha1:Application",
        "kubernetes:argoproj.io/v1alpha1:ApplicationSet",
    ),
    name: fc.constant("app"),
    props: fc.record({
        metadata: maybe(fc.record({ name: maybe(fc.constant("app")), annotations: notRendered })),
        spec: maybe(
            fc.record({
                destination: maybe(fc.record({ namespace: maybe(fc.constantFrom("pulumi", "default")) })),
                syncPolicy: maybe(fc.record({ automated: maybe(fc.record({ prune: maybe(fc.boolean()) })) })),
                source: maybe(argoSource),
                sources: maybe(fc.array(maybe(argoSource), { maxLength: 3 })),
            }),
        ),
    }),
});
const stackType = fc.constantFrom(
    "kubernetes:pulumi.com/v1:Stack",
    "kubernetes:pulumi.com/v1alpha1:Stack",
    "kubernetes:pulumi.com/v1:StackPatch",
    "kubernetes:other/v1:Thing",
);
const stackResource: fc.Arbitrary<TestResource> = fc.record({
    type: stackType,
    name: fc.constantFrom("app", "s"),
    props: fc.oneof(
        fc.record({
            apiVersion: maybe(fc.constant("pulumi.com/v1")),
            kind: maybe(fc.constant("Stack")),
            metadata: maybe(
                fc.record({
                    name: maybe(fc.string({ maxLength: 5 })),
                    namespace: maybe(fc.constantFrom("pulumi", "default")),
                    labels: maybe(
                        fc.dictionary(
                            fc.constantFrom("env", "environment", "app.kubernetes.io/instance"),
                            maybe(fc.constantFrom("prod", "dev", "app")),
                        ),
                    ),
                    annotations: waveAnnotations,
                }),
            ),
            spec: maybe(spec),
        }),
        anyValue,
        // The common shape: the token from a Secret, which the program may also declare (coreResource).
        fc.record({
            apiVersion: fc.constant("pulumi.com/v1"),
            kind: fc.constant("Stack"),
            metadata: fc.record({ name: fc.constant("app"), namespace: fc.constantFrom("pulumi", "default") }),
            spec: fc.record({
                stack: maybe(fc.constantFrom("acme/app/prod", "acme/app/dev")),
                envRefs: fc.record({
                    PULUMI_ACCESS_TOKEN: maybe(
                        fc.constant({ type: "Secret", secret: { name: "pulumi-access-token", key: "token" } }),
                    ),
                }),
            }),
        }),
    ),
});

const subject = fc.record({
    kind: maybe(fc.constantFrom("ServiceAccount", "Group", "User")),
    name: maybe(
        fc.constantFrom(
            "deployer",
            "default",
            "ci-bot",
            "system:serviceaccounts",
            "system:serviceaccounts:pulumi",
            "system:masters",
            "system:serviceaccount:pulumi:deployer",
        ),
    ),
    namespace: maybe(fc.constantFrom("pulumi", "default", "ci")),
});
const rbacResource: fc.Arbitrary<TestResource> = fc.record({
    type: fc.constantFrom(
        "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding",
        "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding",
        "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole",
        "kubernetes:rbac.authorization.k8s.io/v1:Role",
    ),
    name: fc.constantFrom("b1", "b2", "r1"),
    props: fc.record({
        metadata: maybe(
            fc.record({
                name: maybe(fc.constantFrom("cluster-admin", "everything", "r1")),
                namespace: maybe(fc.constantFrom("pulumi", "default")),
            }),
        ),
        roleRef: maybe(
            fc.record({
                kind: maybe(fc.constantFrom("ClusterRole", "ClusterRole", "Role")),
                name: maybe(fc.constantFrom("cluster-admin", "cluster-admin", "everything", "r1", "view")),
            }),
        ),
        subjects: maybe(fc.array(maybe(subject), { maxLength: 3 })),
        rules: maybe(
            fc.array(
                maybe(
                    fc.record(
                        {
                            apiGroups: maybe(
                                fc.array(fc.constantFrom("*", "", "rbac.authorization.k8s.io", "apps"), {
                                    maxLength: 2,
                                }),
                            ),
                            verbs: maybe(
                                fc.array(
                                    fc.constantFrom(
                                        "*",
                                        "get",
                                        "list",
                                        "watch",
                                        "create",
                                        "update",
                                        "patch",
                                        "delete",
                                        "deletecollection",
                                        "bind",
                                        "escalate",
                                        "impersonate",
                                    ),
                                    { maxLength: 4 },
                                ),
                            ),
                            resources: maybe(
                                fc.array(
                                    fc.constantFrom(
                                        "*",
                                        "pods",
                                        "roles",
                                        "clusterroles",
                                        "users",
                                        "groups",
                                        "serviceaccounts",
                                        "serviceaccounts/token",
                                        "deployments",
                                    ),
                                    { maxLength: 3 },
                                ),
                            ),
                            resourceNames: maybe(
                                fc.array(fc.constantFrom("cluster-admin", "system:masters", "view"), { maxLength: 1 }),
                            ),
                        },
                        { requiredKeys: [] },
                    ),
                ),
                { maxLength: 3 },
            ),
        ),
    }),
});
const s3Resource: fc.Arbitrary<TestResource> = fc.record({
    type: fc.constantFrom(
        "aws:s3/bucket:Bucket",
        "aws:s3/bucketV2:BucketV2",
        "aws:s3/bucketAcl:BucketAcl",
        "aws:s3/bucketObjectv2:BucketObjectv2",
    ),
    name: fc.constant("b"),
    props: fc.oneof(
        fc.record({
            acl: maybe(fc.constantFrom("private", "public-read", "authenticated-read")),
            grants: maybe(
                fc.array(
                    maybe(
                        fc.record({
                            type: maybe(fc.constant("Group")),
                            uri: maybe(fc.constantFrom("http://acs.amazonaws.com/groups/global/AllUsers", CANARY)),
                        }),
                    ),
                    { maxLength: 2 },
                ),
            ),
            accessControlPolicy: maybe(
                fc.record({
                    grants: maybe(
                        fc.array(
                            maybe(
                                fc.record({
                                    grantee: maybe(
                                        fc.record({
                                            uri: maybe(
                                                fc.constant(
                                                    "http://acs.amazonaws.com/groups/global/AuthenticatedUsers",
                                                ),
                                            ),
                                        }),
                                    ),
                                }),
                            ),
                            { maxLength: 2 },
                        ),
                    ),
                }),
            ),
        }),
        anyValue,
    ),
});
/** PKO Workspace, Program and Update objects declared directly. */
const pkoObjectResource: fc.Arbitrary<TestResource> = fc.oneof(
    fc.record({
        type: fc.constant("kubernetes:auto.pulumi.com/v1alpha1:Update"),
        name: fc.constant("u"),
        props: fc.oneof(
            fc.record({
                apiVersion: fc.constant("auto.pulumi.com/v1alpha1"),
                kind: fc.constant("Update"),
                metadata: maybe(
                    fc.record({
                        name: maybe(fc.constant("u")),
                        namespace: maybe(fc.constantFrom("pulumi", "break-glass")),
                    }),
                ),
                spec: maybe(
                    fc.record(
                        {
                            stackName: maybe(fc.constantFrom("acme/webapp/production", "acme/app/dev")),
                            workspaceName: maybe(fc.constant("webapp")),
                            type: maybe(fc.constantFrom("destroy", "up", "preview", "refresh")),
                            remove: maybe(fc.boolean()),
                        },
                        { requiredKeys: [] },
                    ),
                ),
            }),
            anyValue,
        ),
    }),
    fc.record({
        type: fc.constantFrom("kubernetes:auto.pulumi.com/v1alpha1:Workspace", "kubernetes:other/v1:Thing"),
        name: fc.constant("ws"),
        props: fc.oneof(
            fc.record({
                apiVersion: maybe(fc.constant("auto.pulumi.com/v1alpha1")),
                kind: maybe(fc.constant("Workspace")),
                metadata: maybe(
                    fc.record({
                        name: maybe(fc.constant("ws")),
                        namespace: maybe(fc.constantFrom("pulumi", "default")),
                    }),
                ),
                spec: maybe(workspaceSpec),
            }),
            anyValue,
        ),
    }),
    fc.record({
        type: fc.constant("kubernetes:pulumi.com/v1:Program"),
        name: fc.constant("prog"),
        props: fc.oneof(
            fc.record({
                metadata: maybe(fc.record({ name: maybe(fc.constant("prog")) })),
                program: maybe(
                    fc.record(
                        {
                            configuration: maybe(
                                fc.dictionary(
                                    fc.constantFrom("dbPassword", "region"),
                                    maybe(fc.record({ default: maybe(secretValue) })),
                                    { maxKeys: 2 },
                                ),
                            ),
                            variables: maybe(
                                fc.dictionary(fc.constantFrom("a", "b"), maybe(fc.oneof(secretValue, anyValue)), {
                                    maxKeys: 2,
                                }),
                            ),
                            resources: maybe(anyValue),
                        },
                        { requiredKeys: [] },
                    ),
                ),
            }),
            anyValue,
        ),
    }),
);
const anyResource = fc.oneof(
    stackResource,
    rbacResource,
    s3Resource,
    coreResource,
    applicationResource,
    pkoObjectResource,
);
/** Whole programs for stack-level rules: mostly RBAC objects and Stacks. */
const program = fc.array(
    fc.oneof(
        { arbitrary: rbacResource, weight: 3 },
        { arbitrary: stackResource, weight: 3 },
        { arbitrary: coreResource, weight: 2 },
        { arbitrary: tokenSecret, weight: 1 },
        { arbitrary: applicationResource, weight: 1 },
        { arbitrary: s3Resource, weight: 1 },
    ),
    { minLength: 1, maxLength: 6 },
);
/** The pack-wide production settings (pko-guard-production) and each policy's own settings. */
const config = fc.record({
    settings: fc.oneof(
        fc.constant({}),
        fc.record(
            {
                productionStackPatterns: maybe(
                    fc.array(fc.constantFrom("prod$", "(", "^live", "^(a+)+$"), { maxLength: 2 }),
                ),
                productionNamespaces: maybe(fc.array(fc.constant("pulumi"))),
                productionLabels: maybe(fc.constant({ env: ["prod"] })),
            },
            { requiredKeys: [] },
        ),
    ),
    own: fc.oneof(
        fc.constant({}),
        fc.record(
            {
                allowUnpinnableSources: maybe(fc.boolean()),
                extraCredentialNames: maybe(fc.array(fc.constantFrom("MY_.*", "[", "(?=X)"))),
                allowedRepoPatterns: maybe(fc.array(fc.constantFrom("^https://github\\.com/", "(a|aa)+$"))),
                previewOnlyStackPatterns: maybe(fc.array(fc.constantFrom("preview$", "("))),
                sourcesJudgedElsewhere: maybe(fc.array(fc.constantFrom("^https://charts\\.example$", "acme", "(?=x)"))),
            },
            { requiredKeys: [] },
        ),
    ),
});
type GeneratedConfig = { settings: Record<string, unknown>; own: Record<string, unknown> };

/** Only the settings a policy's schema declares (the others would be rejected as unknown properties). */
function ownConfig(
    p: { configSchema?: { properties?: Record<string, unknown> } },
    c: GeneratedConfig,
): Record<string, unknown> {
    const names = Object.keys(p.configSchema?.properties ?? {});
    return Object.fromEntries(Object.entries(c.own).filter(([k]) => names.includes(k)));
}

function messages(reported: { message: string; urn?: string }[]): string[] {
    return reported.map((r) => `${r.urn ?? ""} ${r.message}`);
}

describe(`properties (${RUNS.toLocaleString("en")} generated cases per rule)`, function () {
    this.timeout(600000);
    for (const p of policies) {
        it(`${p.name} never throws, is deterministic and never echoes a secret`, () => {
            // A policy may be both (Stack rules judge patches of Stacks at program level).
            const isStack = "validateStack" in p;
            const isResource = "validateResource" in p;
            const run = (rs: TestResource[], c: GeneratedConfig) => [
                ...(isResource
                    ? rs.flatMap((r) =>
                          messages(runResourcePolicy(p as ResourceValidationPolicy, r, ownConfig(p, c), c.settings)),
                      )
                    : []),
                ...(isStack
                    ? messages(runStackPolicy(p as StackValidationPolicy, rs, ownConfig(p, c), c.settings))
                    : []),
            ];
            fc.assert(
                fc.property(
                    isStack ? program : fc.array(anyResource, { minLength: 1, maxLength: 1 }),
                    config,
                    (rs, c) => {
                        const first = run(rs, c as GeneratedConfig);
                        const second = run(rs, c as GeneratedConfig);
                        assert.deepStrictEqual(second, first);
                        for (const m of first) {
                            assert.ok(!m.includes(CANARY), `message echoes a secret: ${m}`);
                            // The wrappers turn a throw into a fail-closed violation: that must never be needed.
                            assert.ok(!m.includes(COULD_NOT_EVALUATE), `the rule threw: ${m}`);
                            assert.ok(m.length > 0 && m.length < 2000);
                        }
                    },
                ),
                { numRuns: RUNS },
            );
        });
    }

    it("generators reach violations for every rule (the property is not vacuous)", () => {
        for (const p of policies) {
            const isStack = "validateStack" in p;
            const isResource = "validateResource" in p;
            // The settings policy reports only invalid settings: sample it with some.
            const settings = p.name === "pko-guard-production" ? { productionStackPatterns: ["(?=x)"] } : {};
            const samples = fc.sample(isStack ? program : fc.array(anyResource, { minLength: 1, maxLength: 1 }), {
                numRuns: 3000,
                seed: 42,
            });
            const hits = samples.filter(
                (rs) =>
                    (isResource &&
                        rs.some(
                            (r) => runResourcePolicy(p as ResourceValidationPolicy, r, settings, settings).length > 0,
                        )) ||
                    (isStack && runStackPolicy(p as StackValidationPolicy, rs, {}, settings).length > 0),
            ).length;
            assert.ok(hits > 10, `${p.name}: only ${hits} of 3000 samples produce a violation`);
        }
    });

    it("PKO v2 fields fail closed: an unknown pod template, Workspace spec, Program or configRef is a violation", () => {
        const byName = (n: string) => policies.find((x) => x.name === n)!;
        const ws = (spec: unknown) => ({
            type: "kubernetes:auto.pulumi.com/v1alpha1:Workspace",
            name: "ws",
            props: { metadata: { name: "ws" }, spec },
        });
        const objects = byName("pko-workspace-program-objects") as ResourceValidationPolicy;
        for (const spec of [
            UNKNOWN_WIRE,
            { podTemplate: UNKNOWN_WIRE },
            { podTemplate: { spec: UNKNOWN_WIRE } },
            { stacks: UNKNOWN_WIRE },
            { env: UNKNOWN_WIRE },
        ]) {
            assert.ok(runResourcePolicy(objects, ws(spec)).length > 0, JSON.stringify(spec));
        }
        assert.ok(
            runResourcePolicy(objects, {
                type: "kubernetes:pulumi.com/v1:Program",
                name: "p",
                props: { program: UNKNOWN_WIRE },
            }).length > 0,
        );
        const creds = byName("pko-stack-credentials-from-secrets") as ResourceValidationPolicy;
        const stack = (s: unknown) => ({
            type: "kubernetes:pulumi.com/v1:Stack",
            name: "s",
            props: {
                apiVersion: "pulumi.com/v1",
                kind: "Stack",
                metadata: { name: "s" },
                spec: { stack: "a/b/dev", ...(s as object) },
            },
        });
        for (const s of [
            { configRef: UNKNOWN_WIRE },
            { gitAuth: { githubApp: { privateKey: UNKNOWN_WIRE } } },
            { workspaceTemplate: { spec: { stacks: [{ config: UNKNOWN_WIRE }] } } },
        ]) {
            assert.ok(runResourcePolicy(creds, stack(s)).length > 0, JSON.stringify(s));
        }
    });

    it("Stack rules reach patch violations too (the program-level companion is exercised)", () => {
        const withPatch = fc
            .sample(program, { numRuns: 3000, seed: 7 })
            .filter((rs) => rs.some((r) => r.type.endsWith(":StackPatch")));
        for (const name of [
            "pko-stack-destroy-on-finalize-nonprod",
            "pko-stack-credentials-from-secrets",
            "pko-stack-prod-pinned-commit",
        ]) {
            const p = policies.find((x) => x.name === name) as StackValidationPolicy;
            const hits = withPatch.filter((rs) => runStackPolicy(p, rs).length > 0).length;
            assert.ok(
                hits > 10,
                `${name}: only ${hits} of ${withPatch.length} programs with a patch produce a patch violation`,
            );
        }
    });
});

describe("the message codec (policies/model/message.ts): findings through the engine read back as the data", function () {
    this.timeout(600000);
    /** Runs a rule both ways: the engine's messages, and the in-process findings as data. */
    function bothWays(
        p: (typeof policies)[number],
        rs: TestResource[],
        own: Record<string, unknown>,
        settings: Record<string, unknown>,
    ) {
        const isStack = "validateStack" in p;
        const isResource = "validateResource" in p;
        const engine: string[] = [];
        const data: ReportedFinding[] = [];
        if (isResource) {
            for (const r of rs) {
                engine.push(
                    ...runResourcePolicy(p as ResourceValidationPolicy, r, own, settings).map((x) => x.message),
                );
                runResourcePolicy(p as ResourceValidationPolicy, r, own, settings, data);
            }
        }
        if (isStack) {
            engine.push(...runStackPolicy(p as StackValidationPolicy, rs, own, settings).map((x) => x.message));
            runStackPolicy(p as StackValidationPolicy, rs, own, settings, data);
        }
        return { engine, data };
    }
    const failClosedByRule = new Map<string, number>();
    const facts = (f: ReportedFinding) => ({
        text: f.text,
        failClosed: f.failClosed,
        ...(f.waiver ? { waiver: f.waiver } : {}),
    });
    /** Reasons that stress the prefix: brackets, the expiry's own separator, escapes, line breaks. */
    const reason = fc
        .oneof(
            fc.string({ minLength: 1, maxLength: 40 }),
            fc.constantFrom(
                "needs ] fix",
                "a; until 2026-01-01",
                "x; until 2026-01-01] y",
                "back\\slash \\]",
                "two\nlines",
                "]",
                ";",
                "[waived: nested]",
            ),
        )
        .filter((s) => s.trim() !== "");
    const expires = fc.option(fc.constantFrom("2026-01-01", "2099-12-31"), { nil: undefined });

    for (const p of policies) {
        it(`${p.name}: every finding, fail-closed and waived ones included, decodes to the facts reported as data`, () => {
            let failClosed = 0;
            let waived = 0;
            fc.assert(
                fc.property(
                    "validateStack" in p ? program : fc.array(anyResource, { minLength: 1, maxLength: 1 }),
                    config,
                    fc.option(fc.record({ reason, expires }), { nil: undefined }),
                    (rs, c, w) => {
                        const own = {
                            ...ownConfig(p, c as GeneratedConfig),
                            ...(w
                                ? {
                                      waivers: [
                                          {
                                              resource: "*",
                                              reason: w.reason,
                                              ...(w.expires ? { expires: w.expires } : {}),
                                              allowFailClosed: true,
                                          },
                                      ],
                                  }
                                : {}),
                        };
                        const { engine, data } = bothWays(p, rs, own, (c as GeneratedConfig).settings);
                        assert.strictEqual(engine.length, data.length);
                        data.forEach((f, i) => {
                            assert.deepStrictEqual(decodeMessage(engine[i]), facts(f));
                            assert.strictEqual(encodeMessage(facts(f)), engine[i]);
                            if (f.failClosed) failClosed++;
                            if (f.waiver) {
                                waived++;
                                assert.deepStrictEqual(f.waiver, {
                                    reason: w!.reason,
                                    ...(w!.expires ? { expires: w!.expires } : {}),
                                });
                            }
                        });
                    },
                ),
                { numRuns: Math.min(RUNS, 1000), seed: 18 },
            );
            // Not vacuous: the settings policy reports only invalid settings, which these configs do not give it.
            if (p.name !== "pko-guard-production") assert.ok(waived > 0, `${p.name}: no waived finding generated`);
            failClosedByRule.set(p.name, failClosed);
        });
    }

    it("the generators reach fail-closed findings for most rules (the round-trip above is not vacuous)", () => {
        const reached = [...failClosedByRule].filter(([, n]) => n > 0).map(([name]) => name);
        assert.ok(reached.length >= 8, `fail-closed findings generated only for ${reached.join(", ")}`);
    });

    it("any text, fail-closed or waived with any reason and expiry, round-trips", () => {
        fc.assert(
            fc.property(
                fc.string({ maxLength: 80 }).filter((s) => !s.startsWith("[waived: ")),
                fc.boolean(),
                fc.option(fc.record({ reason, expires }), { nil: undefined }),
                (text, closed, w) => {
                    const waiver = w ? { reason: w.reason, ...(w.expires ? { expires: w.expires } : {}) } : undefined;
                    const decoded = decodeMessage(
                        encodeMessage({ text, failClosed: closed, ...(waiver ? { waiver } : {}) }),
                    );
                    if (closed) assert.strictEqual(decoded.failClosed, true);
                    assert.deepStrictEqual(decoded.waiver, waiver);
                    // The text reads back unless it says "fails closed" in words of its own without being so.
                    if (closed || !decoded.failClosed) assert.strictEqual(decoded.text, text);
                },
            ),
            { numRuns: 2 * RUNS, seed: 18 },
        );
    });
});
