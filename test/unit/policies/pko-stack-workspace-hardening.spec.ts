import * as assert from "assert";
import { rule as policy } from "../../../policies/pko-stack-workspace-hardening";
import { UNKNOWN_WIRE, goodSpec, runResourcePolicy, stackResource } from "../../support/helpers";

const withPod = (spec: unknown) => goodSpec({ workspaceTemplate: { spec: { podTemplate: { spec } } } });
const check = (spec: unknown) => runResourcePolicy(policy, stackResource("app", spec)).map((r) => r.message);
const container = (securityContext: unknown) => ({ containers: [{ name: "pulumi", securityContext }] });

describe("pko-stack-workspace-hardening", () => {
    it("passes Stacks without a template and restricted templates", () => {
        assert.deepStrictEqual(check(goodSpec()), []);
        assert.deepStrictEqual(
            check(withPod(container({ allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } }))),
            [],
        );
        assert.deepStrictEqual(check(goodSpec({ workspaceTemplate: { spec: { serviceAccountName: "x" } } })), []);
    });
    it("flags each dangerous setting once", () => {
        assert.strictEqual(check(withPod({ hostNetwork: true, hostPID: true, hostIPC: true })).length, 3);
        assert.strictEqual(
            check(
                withPod({
                    volumes: [
                        { name: "h", hostPath: { path: "/" } },
                        { name: "e", emptyDir: {} },
                    ],
                }),
            ).length,
            1,
        );
        assert.strictEqual(
            check(
                withPod(
                    container({
                        privileged: true,
                        allowPrivilegeEscalation: true,
                        capabilities: { add: ["SYS_ADMIN"] },
                    }),
                ),
            ).length,
            3,
        );
        assert.strictEqual(
            check(withPod({ initContainers: [{ name: "i", securityContext: { privileged: "true" } }] })).length,
            1,
        );
    });
    it("fails closed on unknown settings", () => {
        assert.strictEqual(check(withPod(container({ privileged: UNKNOWN_WIRE }))).length, 1);
        assert.strictEqual(check(withPod(container(UNKNOWN_WIRE))).length, 1);
        assert.strictEqual(check(withPod({ hostNetwork: UNKNOWN_WIRE })).length, 1);
        assert.strictEqual(check(goodSpec({ workspaceTemplate: UNKNOWN_WIRE })).length, 1);
        assert.strictEqual(check(withPod({ containers: UNKNOWN_WIRE })).length, 1);
    });
});
