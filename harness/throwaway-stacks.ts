/**
 * The harness's throw-away stacks: the isolated environment (PULUMI_HOME, file backend, the harness's
 * passphrase secrets, no update checks or plugin downloads, no cluster), stack preparation, `up`, `destroy`
 * and `stack export`. Previews go through engine/pulumi-cli.ts, as the gate's do.
 */
import * as fs from "fs";
import * as path from "path";
import { ExecResult, exec } from "../support/process";
import { PolicyPackRef, PulumiCli, StackRef, failure, policyArgs } from "../engine/pulumi-cli";

/** The environment of a throw-away stack in `tmp`: nothing is read from or written to the user's Pulumi setup. */
export function isolatedEnv(cli: PulumiCli, tmp: string): NodeJS.ProcessEnv {
    // No in-cluster configuration may leak in: the provider renders YAML, or talks to the one cluster its
    // stack config names (kubernetes:kubeconfig), never to the user's.
    const { KUBERNETES_SERVICE_HOST: _h, KUBERNETES_SERVICE_PORT: _p, ...inherited } = process.env;
    return {
        ...inherited,
        PATH: cli.binDir ? `${cli.binDir}${path.delimiter}${process.env.PATH ?? ""}` : (process.env.PATH ?? ""),
        PULUMI_HOME: path.join(tmp, "home"),
        PULUMI_BACKEND_URL: `file://${path.join(tmp, "state")}`,
        PULUMI_CONFIG_PASSPHRASE: "pko-guard-harness",
        PULUMI_SKIP_UPDATE_CHECK: "true",
        PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
        PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK: "true",
        PULUMI_SKIP_CONFIRMATIONS: "true",
        PULUMI_DIY_BACKEND_NO_LEGACY_WARNING: "true",
        PULUMI_ACCESS_TOKEN: "",
        KUBECONFIG: path.join(tmp, "no-kubeconfig"),
        TS_NODE_TRANSPILE_ONLY: "true",
    };
}

/** The first line of human output that names an error (for `up` and `destroy`, which print no events). */
function errorLine(r: ExecResult): string {
    const s = `${r.stdout}\n${r.stderr}`;
    return (
        s
            .replace(/<\{%[^%]*%\}>/g, "")
            .split("\n")
            .map((l) => l.trim())
            .filter(Boolean)
            .find((l) => /error/i.test(l)) ??
        s.trim().split("\n")[0] ??
        ""
    );
}

/** A stack config setting; values go through stdin, so secrets never appear in process arguments. */
export interface ConfigSetting {
    key: string;
    value: string;
    secret: boolean;
}

/**
 * Creates a throw-away stack in `tmp` (file backend, passphrase secrets) for the program in `cwd` and sets
 * its config, with the Kubernetes provider rendering YAML into <tmp>/rendered instead of using a cluster,
 * or, given `kubeconfig`, talking to that cluster (the deploy leg's test API server).
 */
export async function initIsolatedStack(
    cli: PulumiCli,
    cwd: string,
    tmp: string,
    stack: string,
    config: ConfigSetting[],
    timeoutMs: number,
    kubeconfig?: string,
): Promise<StackRef | { error: string }> {
    const env = isolatedEnv(cli, tmp);
    fs.mkdirSync(path.join(tmp, "state"), { recursive: true });
    const pulumi = (args: string[], input?: string) =>
        exec(cli.pulumi, [...args, "--non-interactive"], { cwd, env, timeoutMs, input });
    let r = await pulumi(["stack", "init", stack, "--secrets-provider", "passphrase"]);
    if (r.code !== 0) return { error: failure("pulumi stack init", r) };
    const target: ConfigSetting = kubeconfig
        ? { key: "kubernetes:kubeconfig", value: kubeconfig, secret: false }
        : { key: "kubernetes:renderYamlToDirectory", value: path.join(tmp, "rendered"), secret: false };
    const settings: ConfigSetting[] = [target, ...config];
    for (const c of settings) {
        r = await pulumi(
            ["config", "set", c.key, ...(c.secret ? ["--secret"] : ["--plaintext"]), "-s", stack],
            c.value,
        );
        if (r.code !== 0) return { error: failure(`pulumi config set ${c.key}`, r) };
    }
    return { cli, cwd, env, stack, timeoutMs };
}

function run(s: StackRef, args: string[]): Promise<ExecResult> {
    return exec(s.cli.pulumi, [...args, "-s", s.stack, "--non-interactive"], {
        cwd: s.cwd,
        env: s.env,
        timeoutMs: s.timeoutMs,
    });
}

/** `pulumi up` with the pack; resolves with an error line when it fails. */
export async function up(s: StackRef, pack: PolicyPackRef): Promise<{ error?: string }> {
    const r = await run(s, ["up", "--yes", "--skip-preview", ...policyArgs(pack)]);
    return r.code === 0
        ? {}
        : { error: r.timedOut ? "pulumi up timed out" : `pulumi up failed: ${errorLine(r)}`.slice(0, 400) };
}

/** `pulumi destroy`; resolves with an error line when it fails. */
export async function destroy(s: StackRef): Promise<{ error?: string }> {
    const r = await run(s, ["destroy", "--yes", "--skip-preview"]);
    return r.code === 0
        ? {}
        : { error: r.timedOut ? "pulumi destroy timed out" : `pulumi destroy failed: ${errorLine(r)}`.slice(0, 400) };
}

/** `stack export`'s output, as far as it is read here (its resources, unchecked until used). */
interface ExportedState {
    deployment?: { resources?: unknown };
}

/** How many resources the stack's state holds (`stack export`); undefined when it cannot be read. */
export async function stateResourceCount(s: StackRef): Promise<number | undefined> {
    const r = await run(s, ["stack", "export"]);
    try {
        const resources = (JSON.parse(r.stdout) as ExportedState).deployment?.resources ?? [];
        return Array.isArray(resources) ? resources.length : undefined;
    } catch {
        return undefined;
    }
}

/** A Kubernetes object a stack's state records: what the program sent (`inputs`) and where it lives. */
export interface StateObject {
    apiVersion: string;
    kind: string;
    name: string;
    namespace?: string;
    /** The program's object as sent, secrets decrypted (held in memory only). */
    inputs: Record<string, unknown>;
}

/** The Kubernetes objects in the stack's state (`stack export --show-secrets`); undefined when it cannot be read. */
export async function stateObjects(s: StackRef): Promise<StateObject[] | undefined> {
    const r = await run(s, ["stack", "export", "--show-secrets"]);
    try {
        const resources = (JSON.parse(r.stdout) as ExportedState).deployment?.resources ?? [];
        if (!Array.isArray(resources)) return undefined;
        return resources.flatMap(
            (res: {
                type?: string;
                outputs?: { apiVersion?: unknown; kind?: unknown; metadata?: { name?: unknown; namespace?: unknown } };
                inputs?: Record<string, unknown>;
            }): StateObject[] => {
                const o = res.outputs;
                if (
                    !res.type?.startsWith("kubernetes:") ||
                    res.type.startsWith("pulumi:") ||
                    typeof o?.kind !== "string" ||
                    typeof o?.metadata?.name !== "string"
                )
                    return [];
                return [
                    {
                        apiVersion: String(o.apiVersion),
                        kind: o.kind,
                        name: o.metadata.name,
                        namespace: typeof o.metadata.namespace === "string" ? o.metadata.namespace : undefined,
                        inputs: res.inputs ?? {},
                    },
                ];
            },
        );
    } catch {
        return undefined;
    }
}
