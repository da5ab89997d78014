import * as assert from "assert";
import * as os from "os";
import { splitBySize, threadsFor } from "../../../evaluation/threads";

describe("evaluation/threads", () => {
    it("splits inputs into contiguous parts by bytes, the first smaller, and starts no thread for a small repository or a busy machine unless it is very large", () => {
        const files = Array.from({ length: 20 }, (_, i) => i);
        const parts = splitBySize(files, Array(20).fill(100), 2);
        assert.deepStrictEqual(parts.flat(), files);
        assert.deepStrictEqual(
            parts.map((p) => p.length),
            [9, 11],
        );
        assert.deepStrictEqual(splitBySize([1, 2], [1000, 1], 2), [[1], [2]]);
        assert.ok(splitBySize(files, Array(20).fill(100), 4).every((p) => p.length > 0));
        assert.strictEqual(threadsFor(4 * 1024 * 1024, undefined, 1), 1);
        assert.strictEqual(threadsFor(100 * 1024, "3"), 3);
        // A large repository on a machine with an idle core uses it; with every core busy, none.
        const cores = os.availableParallelism();
        assert.strictEqual(threadsFor(20 * 1024 * 1024, undefined, 1), Math.min(cores, 2));
        assert.strictEqual(threadsFor(20 * 1024 * 1024, undefined, cores + 1), 1);
        // A very large one uses them anyway (two heaps collect faster than one twice their size).
        assert.strictEqual(threadsFor(64 * 1024 * 1024, undefined, cores + 1), Math.min(cores, 4));
    });
});
