/**
 * The part of a threaded `check` that stays on the command's thread (evaluation/evaluate.ts evaluateFirstPart):
 * the resource hooks over the first resources and the stack hooks over all of them, in one request. Its rows are
 * what the two separate evaluations give (the resource hooks over the first part alone, the stack hooks over the
 * whole run), row for row and in order, wherever the part ends; and each kind is really there to compare.
 */
import * as assert from "assert";
import { EvalResource, evaluateFirstPart, evaluatePack } from "../../../evaluation/evaluate";
import { packConfig } from "../../../evaluation/pack-config";

const STACK = "kubernetes:pulumi.com/v1:Stack";
const BINDING = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding";

function stack(i: number): EvalResource {
    const name = `app-${i}`;
    return {
        type: STACK,
        name,
        urn: `urn:pulumi:check::first-part::${STACK}::${name}`,
        props: {
            apiVersion: "pulumi.com/v1",
            kind: "Stack",
            metadata: { name, namespace: "apps" },
            spec: {
                stack: `acme/${name}/${i % 2 === 0 ? "prod" : "dev"}`,
                projectRepo: "https://github.com/acme/app",
                branch: "main",
                destroyOnFinalize: true,
                serviceAccountName: `sa-${i}`,
            },
        },
    };
}

/** cluster-admin for the first Stack's account, read last: a stack-level finding about an object read first. */
function adminBinding(): EvalResource {
    const name = "sa-0-admin";
    return {
        type: BINDING,
        name,
        urn: `urn:pulumi:check::first-part::${BINDING}::${name}`,
        props: {
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "ClusterRoleBinding",
            metadata: { name },
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
            subjects: [{ kind: "ServiceAccount", name: "sa-0", namespace: "apps" }],
        },
    };
}

describe("the first part of a threaded check", () => {
    const resources = [...Array.from({ length: 6 }, (_, i) => stack(i)), adminBinding()];
    const config = packConfig();
    const stackRows = evaluatePack(resources, config, undefined, "stack");

    it("has stack-level rows to compare, one of them about the Stack read first", () => {
        assert.ok(stackRows.length > 0, "no stack-level rows");
        assert.ok(
            stackRows.some((r) => r.urn === resources[0].urn),
            stackRows.map((r) => `${r.policy} ${r.urn}`).join("\n"),
        );
    });

    for (const first of [0, 1, 3, 6, 7]) {
        it(`gives the separate evaluations' rows with the part ending after ${first} of 7`, () => {
            const got = evaluateFirstPart(resources, config, first);
            const resourceRows = evaluatePack(resources.slice(0, first), config, undefined, "resource");
            assert.strictEqual(resourceRows.length > 0, first > 0, `${resourceRows.length} resource rows`);
            assert.deepStrictEqual(got.resource, resourceRows);
            assert.deepStrictEqual(got.stack, stackRows);
        });
    }
});
