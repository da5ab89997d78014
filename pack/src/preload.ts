/**
 * Preloaded into the policy pack's Node process (PulumiPolicy.yaml `nodeargs: --require ...`).
 * `@pulumi/pulumi/cmd/run-policy-pack` always registers TypeScript and ts-node before loading a pack, whatever
 * PulumiPolicy.yaml says, about a second of every preview; this pack is precompiled JavaScript, so when the SDK's
 * start-up asks for them it gets an inert stand-in (only when the entry point is an existing `.js` file). Its wait for
 * V8's inspector, needed only for function serialization, is answered at once. A host that ignores `nodeargs` just runs
 * the SDK's normal set-up: slower, same result.
 */
import * as fs from "fs";
import * as path from "path";
const Module = require("module") as {
    _load: (request: string, parent: { filename?: string } | null, isMain: boolean) => unknown;
};

/** The precompiled entry of the program run-policy-pack was asked to start (its last argument), if any. */
function precompiledEntry(argv: string[]): string | undefined {
    const dir = argv[argv.length - 1];
    if (!dir || !path.isAbsolute(dir)) return undefined;
    try {
        const main = (JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")) as { main?: unknown }).main;
        if (typeof main !== "string" || !main.endsWith(".js")) return undefined;
        const file = path.join(dir, main);
        return fs.existsSync(file) ? file : undefined;
    } catch {
        return undefined; // no package.json: not our concern, the SDK reports it
    }
}

const SDK_DIR = `${path.sep}@pulumi${path.sep}pulumi${path.sep}`;

/** Is `request`, made from `parent`, the SDK asking for TypeScript ("ts"), ts-node ("ts-node") or its V8 hooks ("v8hooks")? */
export function sdkTypeScriptRequest(
    request: string,
    parent: string | undefined,
): "ts" | "ts-node" | "v8hooks" | undefined {
    if (!parent || !parent.includes(SDK_DIR)) return undefined;
    if (
        /[\\/]cmd[\\/]run-policy-pack[\\/]index\.js$/.test(parent) &&
        /[\\/]runtime[\\/]closure[\\/]v8Hooks$/.test(request)
    )
        return "v8hooks";
    if (request === "typescript" || /[\\/]vendor[\\/]typescript@[^\\/]+[\\/]typescript\.js$/.test(request)) return "ts";
    if (request === "ts-node" || /[\\/]vendor[\\/]ts-node@[^\\/]+$/.test(request)) return "ts-node";
    return undefined;
}

const STANDINS = {
    // run-policy-pack reads `version` to pick module options for ts-node, then registers ts-node.
    ts: { version: "0.0.0-precompiled" },
    "ts-node": { VERSION: "0.0.0-precompiled", register: () => ({}) },
    // run-policy-pack awaits this before it loads the pack.
    v8hooks: { isInitializedAsync: () => Promise.resolve() },
};

const isPolicyPackRun = /[\\/]cmd[\\/]run-policy-pack([\\/]index\.js)?$/.test(process.argv[1] ?? "");
if (isPolicyPackRun && precompiledEntry(process.argv)) {
    const load = Module._load;
    Module._load = function (request, parent, isMain) {
        const which = sdkTypeScriptRequest(request, parent?.filename);
        return which ? STANDINS[which] : load.call(this, request, parent, isMain);
    };
}
