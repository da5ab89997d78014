/**
 * The packs the bench compares pko-guard's with (bench/preview-speed.ts): today's plain entry, no-op packs
 * built as pko-guard's is, and Pulumi's published AWS pack installed as its README says.
 */
import * as fs from "fs";
import * as path from "path";
import { exec } from "../support/process";
import { PACK_DIR, PLAIN_PACK_ENTRY, REPO_ROOT } from "../support/paths";
import { policies } from "../policies/index";
import { policyHooks } from "./analyzer-path";

/**
 * Today's pack as a folder: the plain compiled entry (bin/index.js, the whole SDK index), started
 * without the TypeScript stand-in, i.e. PulumiPolicy.yaml without nodeargs, as before the lean entry.
 */
export function todayPackDir(tmp: string): string {
    const dir = path.join(tmp, "today-pack");
    fs.mkdirSync(dir);
    fs.writeFileSync(
        path.join(dir, "PulumiPolicy.yaml"),
        "runtime:\n  name: nodejs\n  options:\n    typescript: false\n",
    );
    const { version } = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8"));
    fs.writeFileSync(
        path.join(dir, "package.json"),
        JSON.stringify({ name: "pko-guard-today", version, main: "index.js" }),
    );
    fs.writeFileSync(path.join(dir, "index.js"), `require(${JSON.stringify(PLAIN_PACK_ENTRY)});\n`);
    fs.symlinkSync(path.join(REPO_ROOT, "node_modules"), path.join(dir, "node_modules"));
    return dir;
}

/**
 * A comparison pack built the way the pko-guard pack is (lean bundle, the same PulumiPolicy.yaml with its
 * preload), under .cache/bench-packs so that the bundler resolves the repository's packages: `policies`
 * no-op policies, as many resource and stack policies as pko-guard has when `policies` is "like-pko-guard".
 */
export async function comparisonPack(name: string, policyCount: number | "like-pko-guard"): Promise<string> {
    const dir = path.join(REPO_ROOT, ".cache", "bench-packs", name);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(path.join(dir, "dist"), { recursive: true });
    // Each policy with the hooks its pko-guard counterpart has (most have both a resource and a stack hook).
    const shapes =
        policyCount === "like-pko-guard"
            ? policies.map(policyHooks)
            : Array.from({ length: policyCount }, () => ["validateResource"]);
    const entry = [
        `import { PolicyPack } from "@pulumi/policy";`,
        `process.chdir(require("path").join(__dirname, ".."));`,
        `const shapes: string[][] = ${JSON.stringify(shapes)};`,
        `new PolicyPack(${JSON.stringify(name)}, { policies: shapes.map((hooks, i) => ({ name: "noop-" + i, description: "does nothing", enforcementLevel: "advisory", ...Object.fromEntries(hooks.map((h) => [h, () => undefined])) })) as any });`,
    ].join("\n");
    fs.writeFileSync(path.join(dir, "entry.ts"), entry);
    // The compiled build script (it finds the repository from its own place, bin/pack/).
    const { bundleLeanEntry } = require(
        path.join(REPO_ROOT, "bin", "pack", "build"),
    ) as typeof import("../pack/build-pack");
    await bundleLeanEntry(path.join(dir, "entry.ts"), path.join(dir, "dist", "index.js"));
    fs.copyFileSync(path.join(PACK_DIR, "dist", "preload.js"), path.join(dir, "dist", "preload.js"));
    fs.copyFileSync(path.join(PACK_DIR, "PulumiPolicy.yaml"), path.join(dir, "PulumiPolicy.yaml"));
    fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name, version: "0.0.0", main: "dist/index.js" }));
    return dir;
}

/**
 * Pulumi's own published AWS pack, as its README sets it up: a policy pack folder (PulumiPolicy.yaml, an
 * index.ts constructing `AwsGuard`, a package.json naming `@pulumi/awsguard`, as `pulumi policy new
 * awsguard-typescript` writes them), `npm install` in it, then `pulumi preview --policy-pack <dir>`; the
 * SDK loads index.ts through its own TypeScript set-up, as for any TypeScript pack. Bench only: installed
 * into .cache/bench-packs/awsguard (once, again when this recipe changes), never a dependency of pko-guard.
 * awsguard 0.3.1 declares `@pulumi/policy ^1.3.0`, `@pulumi/pulumi ^3.0.0`, `@pulumi/aws ^4.0.0` and
 * `aws-sdk ^2.545.0` as dependencies (no peers): the folder pins the policy SDK and the Pulumi SDK to
 * pko-guard's (1.21.0, 3.248.0; the newest @pulumi/pulumi needs Node 22), so both packs run on the same SDK;
 * @pulumi/aws resolves to 4.x as awsguard asks (pko-guard's 7.48.0 devDependency is outside its range).
 */
export const AWSGUARD_VERSION = "0.3.1";

export async function awsguardPack(): Promise<string> {
    const dir = path.join(REPO_ROOT, ".cache", "bench-packs", "awsguard");
    const pkg = {
        name: "awsguard-typescript",
        version: "0.0.1",
        dependencies: { "@pulumi/awsguard": AWSGUARD_VERSION, "@pulumi/policy": "1.21.0", "@pulumi/pulumi": "3.248.0" },
        devDependencies: { "@types/node": "20.19.43" },
    };
    const files: Record<string, string> = {
        "PulumiPolicy.yaml":
            "runtime: nodejs\ndescription: AWSGuard, Pulumi's CrossGuard policies for AWS, every policy advisory (the README's first example).\n",
        "index.ts": `import { AwsGuard } from "@pulumi/awsguard";\n\nnew AwsGuard({ all: "advisory" });\n`,
        "tsconfig.json":
            JSON.stringify(
                {
                    compilerOptions: {
                        strict: true,
                        outDir: "bin",
                        target: "es2016",
                        module: "commonjs",
                        moduleResolution: "node",
                        sourceMap: true,
                        experimentalDecorators: true,
                        forceConsistentCasingInFileNames: true,
                    },
                    files: ["index.ts"],
                },
                null,
                4,
            ) + "\n",
        "package.json": JSON.stringify(pkg, null, 4) + "\n",
    };
    const stamp = JSON.stringify(files);
    const stampFile = path.join(dir, ".installed");
    if (fs.existsSync(stampFile) && fs.readFileSync(stampFile, "utf8") === stamp) return dir;
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
    const npm = process.platform === "win32" ? "npm.cmd" : "npm";
    const r = await exec(npm, ["install", "--no-audit", "--no-fund", "--loglevel=error"], {
        cwd: dir,
        env: process.env,
        timeoutMs: 900000,
    });
    if (r.code !== 0)
        throw new Error(
            `npm install of @pulumi/awsguard ${AWSGUARD_VERSION} failed: ${(r.stderr.trim().split("\n").pop() ?? "").slice(0, 200)}`,
        );
    fs.writeFileSync(stampFile, stamp);
    return dir;
}
