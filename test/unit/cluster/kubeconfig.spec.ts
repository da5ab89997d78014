/** audit and the webhook without a kubeconfig: "no kubeconfig found", naming where they looked. */
import * as assert from "assert";
import { SERVICE_ACCOUNT_TOKEN, noKubeconfig } from "../../../cluster/kubeconfig";

describe("no kubeconfig", () => {
    it("is said with every place looked at, unless one of them is there", () => {
        const none = () => false;
        assert.strictEqual(
            noKubeconfig({}, "/home/u", none),
            `no kubeconfig found: KUBECONFIG is not set, there is no /home/u/.kube/config, and no in-cluster service account (${SERVICE_ACCOUNT_TOKEN}); give --kubeconfig FILE`,
        );
        assert.strictEqual(noKubeconfig({ KUBECONFIG: "/k" }, "/home/u", none), undefined);
        assert.strictEqual(
            noKubeconfig({}, "/home/u", (f) => f === "/home/u/.kube/config"),
            undefined,
        );
        assert.strictEqual(
            noKubeconfig({}, "/home/u", (f) => f === SERVICE_ACCOUNT_TOKEN),
            undefined,
        );
    });
});
