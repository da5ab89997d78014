/**
 * Hostile-input figures for npm run bench (not a test, nothing asserts a timing): `pko-guard check` as a child
 * process on inputs that can run away (alias bombs, endless standard input, long dotted field paths, many
 * documents, huge keys, deep flow collections), each with its wall time, peak memory and exit code.
 */
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { performance } from "perf_hooks";
import { CLI_ENTRY } from "../support/paths";
import { aliasBombConfigMap } from "../harness/hostile-yaml";
import { PartOutput } from "./types";

const CLI = CLI_ENTRY;

interface Figure {
    ms: number;
    maxRssMb: number;
    exit: number | null;
}

function run(dir: string, args: string[], stdin?: number | Buffer): Figure {
    const rssFile = path.join(dir, "rss");
    const preload = path.join(dir, "rss.js");
    fs.writeFileSync(
        preload,
        `process.on("exit", () => require("fs").writeFileSync(${JSON.stringify(rssFile)}, String(process.resourceUsage().maxRSS)));\n`,
    );
    const t = performance.now();
    const r = spawnSync(process.execPath, ["-r", preload, CLI, "check", ...args], {
        cwd: dir,
        stdio: [typeof stdin === "number" ? stdin : "pipe", "ignore", "ignore"],
        input: Buffer.isBuffer(stdin) ? stdin : undefined,
        timeout: 600000,
    });
    const ms = performance.now() - t;
    const kb = fs.existsSync(rssFile) ? Number(fs.readFileSync(rssFile, "utf8")) : NaN;
    fs.rmSync(rssFile, { force: true });
    return { ms, maxRssMb: kb / 1024, exit: r.status };
}

export async function hostileBenchmarks(line: (s: string) => void): Promise<PartOutput> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-bench-hostile-"));
    const figures: Record<string, Figure> = {};
    try {
        line("hostile inputs to pko-guard check (wall time, peak RSS of the child, exit code)");
        // The same 24 documents test/integration/gitops/manifests/hostile-inputs.spec.ts refuses (5 levels:
        // ~110,000 nodes each).
        fs.writeFileSync(
            path.join(dir, "bombs.yaml"),
            Array.from({ length: 24 }, (_, i) => aliasBombConfigMap(`lol-${i}`, 5)).join("---\n"),
        );
        figures["24 alias bombs"] = run(dir, ["bombs.yaml"]);
        const zero = fs.openSync("/dev/zero", "r");
        try {
            figures["stdin from /dev/zero"] = run(dir, ["-"], zero);
        } finally {
            fs.closeSync(zero);
        }
        figures["17 MiB on stdin"] = run(dir, ["-"], Buffer.alloc(17 * 1024 * 1024, "#"));
        for (const kb of [40, 80]) {
            // A production Stack whose branch name is a long dotted path quoted in the finding's message, and an
            // annotation key of as many dotted segments.
            const segments = Math.floor((kb * 1024) / 4);
            const dotted = Array.from({ length: segments }, (_, i) => `s${i % 100}`).join(".");
            fs.writeFileSync(
                path.join(dir, `dotted-${kb}.yaml`),
                `apiVersion: pulumi.com/v1\nkind: Stack\nmetadata:\n  name: app\n  namespace: pulumi\n  labels: {env: production}\n  annotations:\n    "${dotted}": x\nspec:\n  stack: acme/app/prod\n  projectRepo: https://github.com/acme/app\n  branch: "spec.${dotted}"\n`,
            );
            figures[`${kb} KB dotted field paths`] = run(dir, [`dotted-${kb}.yaml`]);
        }
        fs.writeFileSync(
            path.join(dir, "many.yaml"),
            Array.from(
                { length: 5000 },
                (_, i) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-${i}}\ndata: {k: v}\n`,
            ).join("---\n"),
        );
        figures["5,000 documents"] = run(dir, ["many.yaml"]);
        fs.writeFileSync(
            path.join(dir, "key.yaml"),
            `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: k}\ndata:\n  "${"k".repeat(1024 * 1024)}": v\n`,
        );
        figures["1 MB key"] = run(dir, ["key.yaml"]);
        fs.writeFileSync(
            path.join(dir, "deep.yaml"),
            `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: d}\ndata:\n  k: ${"[".repeat(95)}x${"]".repeat(95)}\n`,
        );
        figures["flow nested 95 deep"] = run(dir, ["deep.yaml"]);
        for (const [name, f] of Object.entries(figures))
            line(`  ${name}: ${f.ms.toFixed(0)} ms, ${f.maxRssMb.toFixed(0)} MB, exit ${f.exit}`);
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
    // No targets here: the hostile figures are kept as data.
    return { data: figures, figures: [] };
}
