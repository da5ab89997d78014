/**
 * The installed command's start-up snapshot (part of `npm run build`, after the CLI bundle: ./build-cli.ts).
 * It holds the `check` bundle (./check-entry.ts): the launcher starts other commands without it. A V8 snapshot fits
 * only the Node binary and flags that built it (node refuses any other, exit 14, before our code
 * runs), so it is built for the building Node and used only through bin/cli/pko-guard.sh, which checks that node is
 * that binary, unchanged, with no NODE_OPTIONS; anything else runs bin/cli/pko-guard.js. A blob that cannot be built
 * leaves none: the command works without. PKO_GUARD_SNAPSHOT=0 builds none. See docs/check.md, "Start-up".
 */
import { spawnSync } from "child_process";
import type * as esbuild from "esbuild";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { BUNDLE_OPTIONS, runBuild } from "../../support/bundling";
import { CLI_BUNDLE, REPO_ROOT } from "../../support/paths";
import { extended } from "../../support/shapes";

const BIN = path.dirname(CLI_BUNDLE);
export const SNAPSHOT_BLOB = path.join(BIN, "pko-guard.snapshot.blob");
/** The real path of the node binary the blob fits, one line (what bin/cli/pko-guard.sh compares). */
export const SNAPSHOT_NODE = path.join(BIN, "pko-guard.snapshot.node");
/** The POSIX shell launcher that starts from the blob when it fits. */
export const SNAPSHOT_LAUNCHER = path.join(BIN, "pko-guard.sh");
const BUILDER = path.join(BIN, "bundle", "snapshot-builder.js");
/** Node's modules the command uses that Node 20 does not restore from a snapshot (it warns of them). */
const LATE_MODULES = ["worker_threads", "child_process", "tty"];

/**
 * The repository the builder checks once: what a small repository of plain files holds (Stacks, their accounts and
 * bindings, a Secret), with findings, so that decoding, the rules, locating findings and the reports all run. No
 * Application or Flux object and nothing to render: placing and the renderers (gitops/manifests/placement.ts and
 * what it imports) are loaded only by runs whose input needs them, so the snapshot holds none of their code and
 * objects. No git: the builder cannot hold what a child process leaves.
 */
const WARM_UP: Record<string, string> = {
    "stacks.yaml": `apiVersion: pulumi.com/v1
kind: Stack
metadata:
  name: app-prod
  namespace: team-a
  labels: {env: production}
spec:
  stack: acme/app/prod
  projectRepo: https://github.com/acme/app
  branch: main
  destroyOnFinalize: true
  serviceAccountName: deployer
  envRefs:
    PULUMI_ACCESS_TOKEN: {type: Literal, literal: {value: placeholder}}
---
apiVersion: pulumi.com/v1
kind: Stack
metadata:
  name: app-dev
  namespace: team-a
spec:
  stack: acme/app/dev
  projectRepo: https://github.com/acme/app
  commit: 2b0889718d3e63feeb6079ccd5e4488d8601e353
  serviceAccountName: deployer
  envRefs:
    PULUMI_ACCESS_TOKEN: {type: Secret, secret: {name: token, key: accessToken}}
`,
    "rbac.yaml": `apiVersion: v1
kind: ServiceAccount
metadata: {name: deployer, namespace: team-a}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "team-a:deployer:admin"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}
subjects: [{kind: ServiceAccount, name: deployer, namespace: team-a}]
---
apiVersion: v1
kind: Secret
metadata: {name: token, namespace: team-a}
type: Opaque
`,
};

const LAUNCHER = `#!/bin/sh
# pko-guard, started from its start-up snapshot (of \`check\`) when that fits (cli/bundle/snapshot-build.ts), else as
# bin/cli/pko-guard.js. The snapshot fits the node binary that built it (its real path, in pko-guard.snapshot.node,
# not replaced since) and no V8 flags: not with NODE_OPTIONS set, nor PKO_GUARD_SNAPSHOT=0.
# \`check\` reads NODE_EXTRA_CA_CERTS when it first connects (support/extra-ca.ts), not at every start as Node does.
if [ "\${1:-}" = check ] && [ -n "\${NODE_EXTRA_CA_CERTS:-}" ] && [ -z "\${PKO_GUARD_EXTRA_CA_CERTS:-}" ]; then
    PKO_GUARD_EXTRA_CA_CERTS=$NODE_EXTRA_CA_CERTS
    export PKO_GUARD_EXTRA_CA_CERTS
    unset NODE_EXTRA_CA_CERTS
fi
self=$0
[ -L "$self" ] && self=$(readlink -f -- "$self")
here=\${self%/*}
blob=$here/pko-guard.snapshot.blob
if [ "\${1:-}" = check ] && [ -z "\${NODE_OPTIONS:-}" ] && [ "\${PKO_GUARD_SNAPSHOT:-}" != 0 ] && [ -f "$blob" ] &&
    IFS= read -r built <"$here/pko-guard.snapshot.node" 2>/dev/null; then
    node=$(command -v node) || node=
    [ -L "$node" ] && node=$(readlink -f -- "$node")
    if [ -n "$node" ] && [ "$node" = "$built" ] && [ ! "$node" -nt "$blob" ]; then
        exec "$node" --snapshot-blob "$blob" -- "$@"
    fi
fi
exec node "$here/pko-guard.js" "$@"
`;

/** Writes the repository the builder checks once into `dir` (created). */
export function writeWarmUp(dir: string): void {
    for (const [file, text] of Object.entries(WARM_UP)) {
        fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
        fs.writeFileSync(path.join(dir, file), text);
    }
}

/**
 * Builds the blob of the command in `bin` (a bin/cli folder: the bundles, their launcher, bundle/snapshot-builder.js)
 * into `blob`: undefined when done, else why not (one line).
 */
export function buildBlob(bin: string, blob: string): string | undefined {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-snapshot-"));
    const partial = `${blob}.${process.pid}.tmp`;
    try {
        const repo = path.join(tmp, "repo");
        writeWarmUp(repo);
        fs.mkdirSync(path.join(tmp, "reports"));
        // Nothing of this process's own settings goes into the heap (the builder reads none, and Node's flags must
        // be the defaults a run has).
        const env: NodeJS.ProcessEnv = {};
        for (const [k, v] of Object.entries(process.env))
            if (!k.startsWith("PKO_GUARD_") && k !== "NODE_OPTIONS") env[k] = v;
        // The export names of Node's modules a snapshot cannot hold (./snapshot-builder.ts stands in for them).
        const late: Record<string, string[]> = {};
        for (const id of LATE_MODULES) late[id] = Object.keys(require(id) as object);
        env.PKO_GUARD_SNAPSHOT_LATE = JSON.stringify(late);
        const builder = path.join(bin, "bundle", path.basename(BUILDER));
        const r = spawnSync(
            process.execPath,
            ["--snapshot-blob", partial, "--build-snapshot", builder, repo, path.join(tmp, "reports")],
            { cwd: tmp, env, encoding: "utf8", timeout: 120000, stdio: ["ignore", "ignore", "pipe"] },
        );
        if (r.status !== 0 || !fs.existsSync(partial)) {
            // The builder's own line, else the error's: not a line of the (minified, one-line) bundle it quotes.
            const lines = (r.stderr ?? "").split("\n");
            const why = lines.find((l) => l.startsWith("snapshot: ")) ?? lines.find((l) => /^\w*Error\b/.test(l));
            return r.error?.message ?? why?.slice(0, 300) ?? `the builder exited ${r.status ?? r.signal}`;
        }
        fs.renameSync(partial, blob);
        return undefined;
    } finally {
        fs.rmSync(partial, { force: true });
        fs.rmSync(tmp, { recursive: true, force: true });
    }
}

function remove(): void {
    for (const f of [SNAPSHOT_BLOB, SNAPSHOT_NODE]) fs.rmSync(f, { force: true });
}

/** Builds the builder script, the launcher and the blob; false (and one line on stderr) when the blob is not built. */
export async function buildSnapshot(): Promise<boolean> {
    remove();
    // esbuild only here: an installed package (no devDependencies) builds its blob with the builder it ships.
    await (require("esbuild") as typeof esbuild).build(
        extended(BUNDLE_OPTIONS, {
            entryPoints: [path.join(REPO_ROOT, "cli", "bundle", "snapshot-builder.ts")],
            outfile: BUILDER,
        }),
    );
    fs.writeFileSync(SNAPSHOT_LAUNCHER, LAUNCHER, { mode: 0o755 });
    return installSnapshot();
}

/** The blob and its node for the command in bin/ as it is (an installed package's: the pre-commit hook's install). */
function installSnapshot(): boolean {
    remove();
    if (process.env.PKO_GUARD_SNAPSHOT === "0") return false;
    const why = buildBlob(BIN, SNAPSHOT_BLOB);
    if (why !== undefined) {
        process.stderr.write(`pko-guard: start-up snapshot not built (the command runs without it): ${why}\n`);
        return false;
    }
    fs.writeFileSync(SNAPSHOT_NODE, `${fs.realpathSync(process.execPath)}\n`);
    return true;
}

// `node bin/cli/bundle/snapshot-build.js`: the blob for the installed command (hooks/pko-guard-check.sh).
if (require.main === module)
    runBuild("snapshot", () => {
        installSnapshot();
        return Promise.resolve();
    });
