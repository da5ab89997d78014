/**
 * The mock leg's warm workers (harness/legs/mock-workers.ts): a program that fails, exits or overruns costs its
 * own fixture and its worker, never the next fixture; TypeScript set-ups never share a worker; idle workers
 * neither keep the harness alive nor outlive it. Each program writes the pid of the process that ran it to
 * worker.pid in its folder (its working directory), so each check names the worker it is about.
 */
import * as assert from "assert";
import { spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { Fixture } from "../../../../harness/expect";
import { runProgramUnderMocks } from "../../../../harness/legs/mock";
import { REPO_ROOT } from "../../../../support/paths";
import { alive, waitFor } from "../../../support/processes";
import { programFixture } from "../../../support/program-fixture";

const WRITE_PID = `require("fs").writeFileSync("worker.pid", String(process.pid));\n`;
const CONFIG_MAP = `import * as k8s from "@pulumi/kubernetes";\nnew k8s.core.v1.ConfigMap("cm", { metadata: { name: "cm" } });\n`;

describe("mock leg: warm workers", function () {
    this.timeout(120000);
    let root: string;
    before(() => (root = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-mockworkers-"))));
    after(() => fs.rmSync(root, { recursive: true, force: true }));

    /** A TypeScript program folder; `tsconfig` (its text) gives it a TypeScript set-up of its own. */
    function program(name: string, source: string, tsconfig?: string): Fixture {
        return programFixture(root, name, WRITE_PID + source, tsconfig);
    }

    const pidOf = (f: Fixture): number => Number(fs.readFileSync(path.join(f.dir, "worker.pid"), "utf8"));

    async function failure(f: Fixture, timeoutMs = 60000): Promise<string> {
        try {
            await runProgramUnderMocks(f, timeoutMs);
        } catch (e) {
            return (e as Error).message;
        }
        assert.fail(`${f.name} ran to the end`);
    }

    /** Runs a program that must succeed; resolves with the pid of the worker that ran it. */
    async function ranIn(f: Fixture): Promise<number> {
        const resources = await runProgramUnderMocks(f, 60000);
        assert.deepStrictEqual(
            resources.map((r) => r.name),
            [`${f.name}-dev`, "cm"],
        );
        return pidOf(f);
    }

    it("a program that throws or exits fails its fixture only; its worker ends, the next fixture gets a new one", async () => {
        await ranIn(program("ok-before", CONFIG_MAP));
        const threw = program("throws", `${CONFIG_MAP}throw new Error("planted failure");\n`);
        assert.strictEqual(await failure(threw), "program failed: planted failure");
        const first = pidOf(threw);
        await waitFor("the failed program's worker to end", () => !alive(first), 10000);
        const second = await ranIn(program("ok-after-throw", CONFIG_MAP));
        assert.notStrictEqual(second, first);

        const exited = program("exits", `${CONFIG_MAP}process.exit(7);\n`);
        assert.strictEqual(await failure(exited), "program runner exited with code 7");
        assert.strictEqual(pidOf(exited), second);
        assert.strictEqual(alive(second), false);
        const third = await ranIn(program("ok-after-exit", CONFIG_MAP));
        assert.ok(![first, second].includes(third), "a program ran in a worker that had failed");
    });

    it("gives a compiler error's paths from the program's folder, whichever folder the worker compiled first", async () => {
        await ranIn(program("compiled-first", CONFIG_MAP));
        const broken = program("broken", `const x = {;\n`);
        const message = await failure(broken);
        assert.match(message, /^program failed: ⨯ Unable to compile TypeScript: index\.ts\(2,\d+\): error TS\d+/);
        assert.ok(!message.includes(".."), message);
    });

    it("a program that overruns the timeout is killed with its worker, and the next fixture gets a new one", async () => {
        const spin = program("spins", `${CONFIG_MAP}for (;;) {}\n`);
        assert.strictEqual(await failure(spin, 5000), "program timed out after 5 s");
        const spun = pidOf(spin);
        await waitFor("the overrunning worker to be killed", () => !alive(spun), 10000);
        assert.notStrictEqual(await ranIn(program("ok-after-timeout", CONFIG_MAP)), spun);
    });

    it("programs of two TypeScript set-ups never share a worker; programs of one set-up do", async () => {
        const base = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "fixtures", "tsconfig.json"), "utf8"));
        delete base.include;
        // Distinct from every other spec's set-up, so that no worker left idle by them can take these.
        const a = JSON.stringify({ ...base, compilerOptions: { ...base.compilerOptions, removeComments: true } });
        const b = JSON.stringify({ ...base, compilerOptions: { ...base.compilerOptions, removeComments: false } });
        const a1 = await ranIn(program("setup-a1", CONFIG_MAP, a));
        const b1 = await ranIn(program("setup-b1", CONFIG_MAP, b));
        const b2 = await ranIn(program("setup-b2", CONFIG_MAP, b));
        const a2 = await ranIn(program("setup-a2", CONFIG_MAP, a));
        assert.notStrictEqual(a1, b1, "two TypeScript set-ups shared a worker");
        assert.deepStrictEqual([a2, b2], [a1, b1], "a program of the same set-up did not reuse its warm worker");
    });

    it("keeps at most the cores' count of workers idle, ending the one used longest ago", async () => {
        const cores = Math.max(1, os.availableParallelism?.() ?? os.cpus().length);
        const pids: number[] = [];
        for (let i = 0; i < cores + 2; i++) {
            const tsconfig = JSON.stringify({ compilerOptions: { strict: true }, "pko-guard-spec": `idle-${i}` });
            pids.push(await ranIn(program(`idle-cap-${i}`, CONFIG_MAP, tsconfig)));
        }
        assert.strictEqual(new Set(pids).size, pids.length, "set-ups shared a worker");
        const ended = pids.slice(0, 2);
        await waitFor("the workers used longest ago to end", () => ended.every((p) => !alive(p)), 10000);
        assert.deepStrictEqual(
            pids.slice(2).filter((p) => !alive(p)),
            [],
            "a worker used more recently was ended",
        );
    });

    for (const watchdog of [true, false]) {
        it(`a harness exits with its workers idle, and they end with it (${watchdog ? "with" : "without"} the watchdog)`, async () => {
            const f = program(`idle-${watchdog}`, CONFIG_MAP);
            // Returns without process.exit: it ends only if its idle worker does not hold it.
            const driver = path.join(root, `driver-${watchdog}.js`);
            fs.writeFileSync(
                driver,
                `const { runProgramUnderMocks } = require(${JSON.stringify(path.join(REPO_ROOT, "bin", "harness", "legs", "mock.js"))});
runProgramUnderMocks(${JSON.stringify(f)}, 60000).then((r) => process.stdout.write(r.map((x) => x.name).join(",")));\n`,
            );
            const child = spawn(process.execPath, [driver], {
                env: { ...process.env, PKO_GUARD_NO_WATCHDOG: watchdog ? "" : "1" },
                stdio: ["ignore", "pipe", "pipe"],
            });
            let out = "";
            child.stdout.on("data", (d) => (out += d));
            child.stderr.on("data", (d) => (out += d));
            const code = await new Promise((resolve) => child.once("close", resolve));
            assert.deepStrictEqual([code, out], [0, `idle-${watchdog}-dev,cm`]);
            const worker = pidOf(f);
            await waitFor("the harness's idle worker to end with it", () => !alive(worker), 10000);
        });
    }
});
