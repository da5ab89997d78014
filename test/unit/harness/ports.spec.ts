/**
 * The test API server starts on free ports even when another process takes one between freePort releasing it
 * and the server binding it (harness/ports.ts onFreePorts): a start that fails on an address in use is made
 * again on other ports; any other failure is the start's.
 */
import * as assert from "assert";
import { onFreePorts } from "../../../harness/ports";

describe("harness/apiserver: starting on free ports", () => {
    const counter = () => {
        let next = 40000;
        return async () => next++;
    };

    it("starts again on other ports when a port was taken meanwhile", async () => {
        const tried: number[][] = [];
        const started = await onFreePorts(
            2,
            async (ports) => {
                tried.push(ports);
                if (tried.length < 3)
                    throw new Error("kube-apiserver exited: listen tcp 127.0.0.1:1: bind: address already in use");
                return ports;
            },
            5,
            counter(),
        );
        assert.deepStrictEqual(tried, [
            [40000, 40001],
            [40002, 40003],
            [40004, 40005],
        ]);
        assert.deepStrictEqual(started, [40004, 40005]);
    });

    it("gives up after its attempts, and never retries another failure", async () => {
        let calls = 0;
        const inUse = () => {
            calls++;
            throw new Error("bind: address already in use");
        };
        await assert.rejects(
            onFreePorts(1, async () => inUse(), 3, counter()),
            /address already in use/,
        );
        assert.strictEqual(calls, 3);
        calls = 0;
        await assert.rejects(
            onFreePorts(
                1,
                async () => {
                    calls++;
                    throw new Error("etcd exited: permission denied");
                },
                3,
                counter(),
            ),
            /permission denied/,
        );
        assert.strictEqual(calls, 1);
    });
});
