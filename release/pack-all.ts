/**
 * `npm run pack:all`: the package as it is published, and its platform packages, as tarballs in dist/ (or --out).
 *
 * A platform package (`@pko-guard/<os>-<arch>`) holds the check profile's tools (toolchain/tools.txt) prebuilt for
 * one platform by `toolchain/install.sh --platform=<os>-<arch> check`, from the same pinned Go modules a source
 * build uses (cross-compiled, CGO_ENABLED=0; the host's own platform copies the host toolchain's current build),
 * with the licence and notice files of every module linked into them. The main package is what `npm pack` packs,
 * plus its platform packages as optionalDependencies (npm installs the one whose os and cpu fit) and
 * toolchain/prebuilt.json, each tool's SHA-256, which support/prebuilt.ts checks before a tool's first use.
 *
 *   release/pack-all.ts                        # linux-x64 and linux-arm64
 *   release/pack-all.ts --host --out DIR       # the host's platform only (what the registry test installs)
 *   release/pack-all.ts --platform linux-arm64 # named platforms (repeatable)
 *
 * Run after `npm run build` (the npm script does both). Builds are cached in .cache/toolchain/platforms/ by
 * install.sh's stamps, so a second run packs in seconds. Exits 1 with one line on failure.
 */
import "../support/fatal";
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { REPO_ROOT } from "../support/paths";
import { PrebuiltManifest, fileSha256, platformKey } from "../support/prebuilt";
import { profileTools } from "../support/toolchain";

interface PackageJson {
    name: string;
    version: string;
    description?: string;
    license?: string;
    repository?: unknown;
    homepage?: string;
    bugs?: unknown;
    engines?: Record<string, string>;
    optionalDependencies?: Record<string, string>;
}

/** The platforms built by default: the two Linux ones CI runners and developer machines use. */
export const DEFAULT_PLATFORMS = ["linux-x64", "linux-arm64"];
/** npm's names for os and cpu (package.json `os`, `cpu`), from the platform key. */
const NPM_OS: Record<string, string> = { linux: "linux", darwin: "darwin" };
const INSTALL_SCRIPT = path.join(REPO_ROOT, "toolchain", "install.sh");

function fail(message: string): never {
    process.stderr.write(`pack:all: ${message}\n`);
    process.exit(1);
}

function options(argv: string[]): { platforms: string[]; out: string } {
    const platforms: string[] = [];
    let out = path.join(REPO_ROOT, "dist");
    for (let i = 0; i < argv.length; i++) {
        const a = argv[i];
        if (a === "--host") platforms.push(platformKey());
        else if (a === "--platform" && argv[i + 1]) platforms.push(argv[++i]);
        else if (a === "--out" && argv[i + 1]) out = path.resolve(argv[++i]);
        else fail(`unknown argument '${a}' (known: --host, --platform <os>-<arch>, --out <dir>)`);
    }
    return { platforms: platforms.length > 0 ? [...new Set(platforms)] : DEFAULT_PLATFORMS, out };
}

function readJson<T>(file: string): T {
    return JSON.parse(fs.readFileSync(file, "utf8")) as T;
}

/** `npm pack` of a folder into `out`; the tarball's path. */
function npmPack(dir: string, out: string): string {
    const packed = JSON.parse(
        execFileSync("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", out], {
            cwd: dir,
            encoding: "utf8",
            stdio: ["ignore", "pipe", "inherit"],
        }),
    ) as { filename: string }[];
    return path.join(out, packed[0].filename);
}

/** The toolchain folder's build of a platform (install.sh's --platform; cached by its stamps). */
function buildPlatform(platform: string): string {
    execFileSync("bash", [INSTALL_SCRIPT, `--platform=${platform}`, "check"], { stdio: ["ignore", 2, 2] });
    const where = execFileSync("bash", [INSTALL_SCRIPT, "--where"], { encoding: "utf8" }).trim();
    return path.join(where, "platforms", platform);
}

/** The pinned version install.sh stamped (its stamp's first word). */
function stampedVersion(bin: string, tool: string): string {
    return fs
        .readFileSync(path.join(bin, `${tool}.version`), "utf8")
        .trim()
        .split(/\s+/)[0];
}

/** Stages one platform package: its tools, their modules' licences, a notice that lists them, package.json. */
function stagePlatform(
    main: PackageJson,
    platform: string,
    built: string,
    stage: string,
): { pkg: string; tools: Record<string, { version: string; sha256: string }> } {
    const [os, arch] = platform.split("-");
    const pkg = `@pko-guard/${platform}`;
    const tools: Record<string, { version: string; sha256: string }> = {};
    fs.mkdirSync(path.join(stage, "bin"), { recursive: true });
    const notice: string[] = [
        `# Third-party notices: ${pkg} ${main.version}`,
        "",
        `The programs in bin/ are built for ${platform} from the Go modules listed below, by pko-guard's`,
        "toolchain/install.sh (pinned go.mod and go.sum, CGO_ENABLED=0, -trimpath). Each module's licence and notice",
        "files, as its module archive carries them, are in licenses/<module>@<version>/.",
        "",
    ];
    const modules = new Set<string>();
    for (const spec of profileTools("check")) {
        const tool = spec.name;
        const file = path.join(built, "bin", tool);
        if (!fs.existsSync(file)) fail(`${file} was not built`);
        fs.copyFileSync(file, path.join(stage, "bin", tool));
        fs.chmodSync(path.join(stage, "bin", tool), 0o755);
        tools[tool] = { version: stampedVersion(path.join(built, "bin"), tool), sha256: fileSha256(file) };
        notice.push(`## ${tool} ${tools[tool].version}`, "");
        for (const line of fs.readFileSync(path.join(built, "modules", `${tool}.txt`), "utf8").split("\n")) {
            if (!line) continue;
            const [mod, ver] = line.split(" ");
            modules.add(`${mod}@${ver}`);
            notice.push(`- ${line}`);
        }
        notice.push("");
    }
    for (const m of [...modules].sort()) {
        const from = path.join(built, "licenses", m);
        if (fs.existsSync(from)) fs.cpSync(from, path.join(stage, "licenses", m), { recursive: true });
    }
    fs.writeFileSync(path.join(stage, "THIRD_PARTY_NOTICES.md"), `${notice.join("\n")}`);
    fs.copyFileSync(path.join(REPO_ROOT, "LICENSE"), path.join(stage, "LICENSE"));
    fs.writeFileSync(
        path.join(stage, "README.md"),
        `# ${pkg}\n\nThe ${platform} build of the tools \`pko-guard check\` renders with (${Object.keys(tools).join(", ")}),\n` +
            "installed by pko-guard as an optional dependency and checked against the checksums pko-guard ships\n" +
            "before first use. Not meant to be installed on its own. Licences: THIRD_PARTY_NOTICES.md, licenses/.\n",
    );
    const manifest = {
        name: pkg,
        version: main.version,
        description: `pko-guard's rendering tools (kustomize, helm, jsonnet) prebuilt for ${platform}`,
        license: "SEE LICENSE IN THIRD_PARTY_NOTICES.md",
        ...(main.repository ? { repository: main.repository } : {}),
        ...(main.homepage ? { homepage: main.homepage } : {}),
        os: [NPM_OS[os] ?? os],
        cpu: [arch],
        preferUnplugged: true,
        files: ["bin/", "licenses/", "THIRD_PARTY_NOTICES.md", "LICENSE", "README.md"],
    };
    fs.writeFileSync(path.join(stage, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
    return { pkg, tools };
}

/** Stages the main package: the files `npm pack` would pack, the optional dependencies and the checksums. */
function stageMain(main: PackageJson, prebuilt: PrebuiltManifest, stage: string): void {
    const listed = JSON.parse(
        execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
            cwd: REPO_ROOT,
            encoding: "utf8",
            stdio: ["ignore", "pipe", "inherit"],
        }),
    ) as { files: { path: string }[] }[];
    for (const { path: rel } of listed[0].files) {
        fs.mkdirSync(path.dirname(path.join(stage, rel)), { recursive: true });
        fs.copyFileSync(path.join(REPO_ROOT, rel), path.join(stage, rel));
        fs.chmodSync(path.join(stage, rel), fs.statSync(path.join(REPO_ROOT, rel)).mode & 0o777);
    }
    const pkg = readJson<PackageJson & Record<string, unknown>>(path.join(REPO_ROOT, "package.json"));
    pkg.optionalDependencies = Object.fromEntries(
        Object.values(prebuilt.platforms).map((p) => [p.package, main.version]),
    );
    fs.writeFileSync(path.join(stage, "package.json"), `${JSON.stringify(pkg, null, 2)}\n`);
    fs.writeFileSync(path.join(stage, "toolchain", "prebuilt.json"), `${JSON.stringify(prebuilt, null, 2)}\n`);
}

function main(): void {
    const { platforms, out } = options(process.argv.slice(2));
    const pkg = readJson<PackageJson>(path.join(REPO_ROOT, "package.json"));
    if (!fs.existsSync(path.join(REPO_ROOT, "bin", "cli", "pko-guard.js"))) fail("bin/ is not built: npm run build");
    fs.mkdirSync(out, { recursive: true });
    const stageRoot = fs.mkdtempSync(path.join(out, ".stage-"));
    try {
        const prebuilt: PrebuiltManifest = { version: pkg.version, platforms: {} };
        const tarballs: string[] = [];
        for (const platform of platforms) {
            const built = buildPlatform(platform);
            const stage = path.join(stageRoot, platform);
            const staged = stagePlatform(pkg, platform, built, stage);
            prebuilt.platforms[platform] = { package: staged.pkg, tools: staged.tools };
            tarballs.push(npmPack(stage, out));
        }
        const mainStage = path.join(stageRoot, "pko-guard");
        stageMain(pkg, prebuilt, mainStage);
        tarballs.unshift(npmPack(mainStage, out));
        for (const t of tarballs) process.stdout.write(`${path.relative(process.cwd(), t) || t}\n`);
    } finally {
        fs.rmSync(stageRoot, { recursive: true, force: true });
    }
}

if (require.main === module) main();
