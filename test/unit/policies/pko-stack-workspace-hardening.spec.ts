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
    it("flags a Windows host process, of a container and of the pod, as Pod Security's baseline does", () => {
        const messages = check(
            withPod({
                securityContext: { windowsOptions: { hostProcess: true } },
                ...container({ windowsOptions: { hostProcess: true } }),
            }),
        );
        assert.deepStrictEqual(
            messages.map((m) => m.split(" is true")[0]),
            [
                "spec.workspaceTemplate.spec.podTemplate.spec.securityContext.windowsOptions.hostProcess",
                "spec.workspaceTemplate.spec.podTemplate.spec.containers[0].securityContext.windowsOptions.hostProcess",
            ],
        );
        assert.deepStrictEqual(check(withPod(container({ windowsOptions: { hostProcess: false } }))), []);
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
    it("says a container list is malformed, not unknown during preview, when an item is not an object", () => {
        const pod = "spec.workspaceTemplate.spec.podTemplate.spec";
        assert.deepStrictEqual(check(withPod({ containers: ["pulumi"] })), [
            `${pod}.containers holds an item that is not an object; the rule fails closed.`,
        ]);
        assert.deepStrictEqual(check(withPod({ initContainers: [UNKNOWN_WIRE] })), [
            `${pod}.initContainers is unknown during preview; the rule fails closed.`,
        ]);
    });
    it("fails closed on unknown settings", () => {
        assert.strictEqual(check(withPod(container({ privileged: UNKNOWN_WIRE }))).length, 1);
        assert.strictEqual(check(withPod(container(UNKNOWN_WIRE))).length, 1);
        assert.strictEqual(check(withPod({ hostNetwork: UNKNOWN_WIRE })).length, 1);
        assert.strictEqual(check(goodSpec({ workspaceTemplate: UNKNOWN_WIRE })).length, 1);
        assert.strictEqual(check(withPod({ containers: UNKNOWN_WIRE })).length, 1);
    });
    it("allows NET_BIND_SERVICE with drop ALL, as the restricted profile does, and nothing more", () => {
        const caps = (capabilities: unknown) => check(withPod(container({ capabilities })));
        assert.deepStrictEqual(caps({ add: ["NET_BIND_SERVICE"], drop: ["ALL"] }), []);
        const field = "spec.workspaceTemplate.spec.podTemplate.spec.containers[0].securityContext.capabilities";
        assert.deepStrictEqual(caps({ add: ["NET_BIND_SERVICE"] }), [
            `${field}.add adds NET_BIND_SERVICE without capabilities.drop: [ALL]; the restricted Pod Security profile allows it only when every other capability is dropped: add drop: [ALL].`,
        ]);
        assert.deepStrictEqual(caps({ add: ["NET_BIND_SERVICE", "NET_RAW"], drop: ["ALL"] }), [
            `${field}.add adds Linux capabilities beyond NET_BIND_SERVICE (the only one the restricted Pod Security profile allows); remove them, keep drop: [ALL].`,
        ]);
        assert.match(
            caps({ add: ["NET_BIND_SERVICE"], drop: UNKNOWN_WIRE })[0],
            /drop is unknown during preview.*fails closed/,
        );
        assert.match(caps({ add: UNKNOWN_WIRE, drop: ["ALL"] })[0], /add is unknown during preview.*fails closed/);
        assert.ok(caps({ add: ["SYS_ADMIN"] }).every((m) => !m.includes("drop ALL instead")));
    });
});
