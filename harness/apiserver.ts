/**
 * A real Kubernetes API server for the harness and the tests: etcd and kube-apiserver (built by
 * `npm run setup` into .cache/toolchain/bin) on loopback with ephemeral ports, their data under the
 * run's own temporary root, a throwaway CA for the serving certificate, service-account signing keys, and
 * an admin kubeconfig (a static token in `system:masters`). `start` returns once `/readyz` answers 200;
 * `stop` kills both process groups, waits for them to exit and removes the folder.
 */
import { generateKeyPairSync, randomBytes } from "crypto";
import * as fs from "fs";
import * as path from "path";
import { ExecResult, Spawned, exec, makeTempDir, removeTempDir, spawnTracked } from "../support/process";
import { TOOLCHAIN_BIN, installCommand } from "../support/toolchain";
import { parseAllDocuments } from "yaml";
import { APPLICATION_CRD } from "./argocd-finalizers";
import { REPO_ROOT } from "../support/paths";
import { PKO_CRD_DIR, PKO_CRD_FILES } from "../cluster/pko-crds";
import { Ca, CertPair, issueCert, makeCa } from "./certs";
import { onFreePorts } from "./ports";
import { get, waitFor } from "./readiness";

/** Flux's CRDs as committed (schemas/flux/<controller>-<version>/, with their provenance). */
const FLUX_CRD_ROOT = path.join(REPO_ROOT, "schemas", "flux");

export const CLUSTER_BINARIES = ["etcd", "kube-apiserver", "kubectl"] as const;

/**
 * The controllers a deploy needs besides the API server (started with `controllers: true`): the
 * Kubernetes provider deletes with foreground propagation, which puts the `foregroundDeletion` finalizer
 * on every object, and a Namespace keeps its `kubernetes` finalizer until its contents are gone; only
 * the garbage collector and the namespace controller remove them, so without them `pulumi destroy` waits
 * until its deadline.
 */
export const DEPLOY_CONTROLLERS = ["garbage-collector-controller", "namespace-controller"] as const;

/**
 * The controllers a cluster's own writes come from that an admission webhook must leave free (the door's tests,
 * started with `controllers: CONTROL_PLANE_CONTROLLERS`): each namespace's `default` ServiceAccount, ClusterRole
 * aggregation, and what deleting a namespace needs. Started this way, kube-controller-manager runs as a cluster
 * runs it: as `system:kube-controller-manager`, each controller with its own account in kube-system
 * (`--use-service-account-credentials`, as kubeadm sets it).
 */
export const CONTROL_PLANE_CONTROLLERS = [
    ...DEPLOY_CONTROLLERS,
    "serviceaccount-controller",
    "clusterrole-aggregation-controller",
] as const;

/** The cluster binaries missing from the toolchain folder (empty when `npm run setup` built them). */
export function missingClusterBinaries(binDir = TOOLCHAIN_BIN): string[] {
    return missingBinaries(CLUSTER_BINARIES, binDir);
}

/** The binaries the deploy leg's cluster needs (the API server's and kube-controller-manager) missing from the toolchain. */
export function missingDeployBinaries(binDir = TOOLCHAIN_BIN): string[] {
    return [...missingClusterBinaries(binDir), ...missingBinaries(["kube-controller-manager"], binDir)];
}

function missingBinaries(names: readonly string[], binDir: string): string[] {
    return names.filter((b) => {
        try {
            fs.accessSync(path.join(binDir, b), fs.constants.X_OK);
            return false;
        } catch {
            return true;
        }
    });
}

export interface ApiServer {
    /** https://127.0.0.1:PORT */
    url: string;
    /** The admin kubeconfig file. */
    kubeconfig: string;
    /** The CA that signed the API server's certificate (and can sign the webhook's). */
    ca: Ca;
    /** The folder holding everything (removed by stop). */
    dir: string;
    /** PIDs of etcd, kube-apiserver and kube-controller-manager, as they run now (for leftover checks). */
    readonly pids: number[];
    /** Stops kube-apiserver and starts it again over the same etcd, returning once `/readyz` answers 200. */
    restart(): Promise<void>;
    /** Runs kubectl with the admin kubeconfig. */
    kubectl(args: string[], input?: string, timeoutMs?: number): Promise<ExecResult>;
    /** Applies YAML text, failing with kubectl's output unless it succeeds. */
    apply(yaml: string): Promise<string>;
    stop(): Promise<void>;
}

export interface StartOptions {
    binDir?: string;
    /** Readiness deadline for each of etcd and the API server (the machine may be loaded). */
    timeoutMs?: number;
    /**
     * Also run kube-controller-manager: `true` with DEPLOY_CONTROLLERS as the admin (objects can then be
     * deleted for real); a list of controllers runs those as a cluster runs them (CONTROL_PLANE_CONTROLLERS).
     */
    controllers?: boolean | readonly string[];
    /** An AdmissionConfiguration file (`--admission-control-config-file`): e.g. the client certificate webhooks get. */
    admissionConfigFile?: string;
    /** More kube-apiserver flags (e.g. `--watch-cache-sizes`), after the harness's own. */
    apiServerFlags?: readonly string[];
}

export async function startApiServer(o: StartOptions = {}): Promise<ApiServer> {
    const binDir = o.binDir ?? TOOLCHAIN_BIN;
    const missing = [
        ...missingClusterBinaries(binDir),
        ...(o.controllers ? missingBinaries(["kube-controller-manager"], binDir) : []),
    ];
    if (missing.length > 0)
        throw new Error(`missing ${missing.join(", ")} in ${binDir}: run ${installCommand("cluster")}`);
    const timeoutMs = o.timeoutMs ?? 180_000;
    const dir = makeTempDir("apiserver");
    const started: Spawned[] = [];
    const stop = async () => {
        for (const p of [...started].reverse()) {
            p.kill();
            await p.exited;
        }
        removeTempDir(dir);
    };
    try {
        const creds = writeCredentials(dir);
        const run: Run = { binDir, dir, timeoutMs, started };
        const etcd = await onFreePorts(2, ([client, peer]) => startEtcd(run, client, peer));
        const caPem = fs.readFileSync(creds.ca.cert);
        let securePort = 0;
        let api = await onFreePorts(1, async ([port]) => {
            const a = await startKubeApiServer(run, creds, etcd, port, caPem, o);
            securePort = port;
            return a;
        });
        const url = `https://127.0.0.1:${securePort}`;
        const restart = async () => {
            api.kill();
            await api.exited;
            started.splice(started.indexOf(api), 1);
            api = await startKubeApiServer(run, creds, etcd, securePort, caPem, o);
        };
        const kubeconfig = writeKubeconfig(dir, url, caPem, creds.token);
        const kubectl = (args: string[], input?: string, ms = 120_000) =>
            exec(path.join(binDir, "kubectl"), ["--kubeconfig", kubeconfig, ...args], {
                cwd: dir,
                env: { ...process.env, KUBECONFIG: kubeconfig },
                input,
                timeoutMs: ms,
            });
        const apply = async (yaml: string) => {
            const r = await kubectl(["apply", "-f", "-"], yaml);
            if (r.code !== 0) throw new Error(`kubectl apply failed (${r.code}): ${r.stderr || r.stdout}`);
            return r.stdout + r.stderr;
        };
        if (o.controllers === true) await startControllers(run, kubeconfig, DEPLOY_CONTROLLERS, false, kubectl, apply);
        else if (o.controllers) {
            const kcm = writeKubeconfig(dir, url, caPem, creds.kcmToken, "kube-controller-manager");
            await startControllers(run, kcm, o.controllers, true, kubectl, apply);
        }
        return {
            url,
            kubeconfig,
            ca: creds.ca,
            dir,
            // What runs now (a restart replaces kube-apiserver's).
            get pids() {
                return started.map((p) => p.child.pid!);
            },
            restart,
            kubectl,
            apply,
            stop,
        };
    } catch (e) {
        await stop();
        throw e;
    }
}

/** One start-up's toolchain folder, folder, readiness deadline and the processes started so far (stopped in reverse). */
interface Run {
    binDir: string;
    dir: string;
    timeoutMs: number;
    started: Spawned[];
}

/** A started process, its name and its log so far (for a readiness wait). */
type Watched = { name: string; p: Spawned; log: () => string };

/** A log file's text so far ("" before it exists). */
function logTail(f: string): () => string {
    return () => {
        try {
            return fs.readFileSync(f, "utf8");
        } catch {
            return "";
        }
    };
}

/** What the API server authenticates with: its CA and serving certificate, service-account keys, the admin token. */
interface Credentials {
    ca: Ca;
    serving: CertPair;
    saKey: string;
    saPub: string;
    token: string;
    /** kube-controller-manager's token (the user `system:kube-controller-manager`, as its certificate names it). */
    kcmToken: string;
    /** The static token file (the admin token in `system:masters`, and kube-controller-manager's). */
    tokens: string;
}

function writeCredentials(dir: string): Credentials {
    const ca = makeCa(path.join(dir, "pki"));
    const serving = issueCert(ca, "kube-apiserver", {
        dns: ["localhost", "kubernetes", "kubernetes.default.svc"],
        ips: ["127.0.0.1"],
    });
    const sa = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const saKey = path.join(dir, "pki", "sa.key");
    const saPub = path.join(dir, "pki", "sa.pub");
    fs.writeFileSync(saKey, sa.privateKey.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
    fs.writeFileSync(saPub, sa.publicKey.export({ type: "spki", format: "pem" }));
    const token = randomBytes(24).toString("hex");
    const kcmToken = randomBytes(24).toString("hex");
    const tokens = path.join(dir, "pki", "tokens.csv");
    fs.writeFileSync(
        tokens,
        `${token},pko-guard-admin,pko-guard-admin,"system:masters"\n` +
            `${kcmToken},system:kube-controller-manager,system:kube-controller-manager\n`,
        { mode: 0o600 },
    );
    return { ca, serving, saKey, saPub, token, kcmToken, tokens };
}

/** etcd on loopback, once `/health` says so: its client URL and the process. */
async function startEtcd(run: Run, clientPort: number, peerPort: number): Promise<{ client: string; proc: Watched }> {
    const etcdLog = path.join(run.dir, "etcd.log");
    // A start again on other ports begins with an empty store (one that failed may have begun one).
    fs.rmSync(path.join(run.dir, "etcd"), { recursive: true, force: true });
    const client = `http://127.0.0.1:${clientPort}`;
    const peer = `http://127.0.0.1:${peerPort}`;
    const etcd = spawnTracked(
        path.join(run.binDir, "etcd"),
        [
            "--name=pko-guard",
            `--data-dir=${path.join(run.dir, "etcd")}`,
            `--listen-client-urls=${client}`,
            `--advertise-client-urls=${client}`,
            `--listen-peer-urls=${peer}`,
            `--initial-advertise-peer-urls=${peer}`,
            `--initial-cluster=pko-guard=${peer}`,
            "--listen-metrics-urls=",
            "--log-level=warn",
            // A throwaway store: durability buys nothing and costs seconds on a loaded disk.
            "--unsafe-no-fsync",
        ],
        { cwd: run.dir, stdio: ["ignore", fs.openSync(etcdLog, "a"), fs.openSync(etcdLog, "a")] },
    );
    run.started.push(etcd);
    const proc = { name: "etcd", p: etcd, log: logTail(etcdLog) };
    await waitFor(
        "etcd /health",
        async () => /"health":\s*"true"/.test((await get(`${client}/health`)).body),
        [proc],
        run.timeoutMs,
    );
    return { client, proc };
}

/** kube-apiserver over that etcd, on `securePort`, once `/readyz` answers 200. */
async function startKubeApiServer(
    run: Run,
    creds: Credentials,
    etcd: { client: string; proc: Watched },
    securePort: number,
    caPem: Buffer,
    o: StartOptions,
): Promise<Spawned> {
    const apiLog = path.join(run.dir, "kube-apiserver.log");
    const api = spawnTracked(
        path.join(run.binDir, "kube-apiserver"),
        [
            `--etcd-servers=${etcd.client}`,
            "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1",
            `--secure-port=${securePort}`,
            `--cert-dir=${path.join(run.dir, "certs")}`,
            `--tls-cert-file=${creds.serving.cert}`,
            `--tls-private-key-file=${creds.serving.key}`,
            `--client-ca-file=${creds.ca.cert}`,
            `--token-auth-file=${creds.tokens}`,
            "--authorization-mode=RBAC",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            `--service-account-key-file=${creds.saPub}`,
            `--service-account-signing-key-file=${creds.saKey}`,
            "--service-cluster-ip-range=10.96.0.0/16",
            // No nodes, no kubelets: the kubernetes Service's endpoints would point at loopback, which
            // Endpoints validation rejects.
            "--endpoint-reconciler-type=none",
            "--enable-priority-and-fairness=false",
            "--profiling=false",
            ...(o.admissionConfigFile ? [`--admission-control-config-file=${o.admissionConfigFile}`] : []),
            "--v=0",
            ...(o.apiServerFlags ?? []),
        ],
        { cwd: run.dir, stdio: ["ignore", fs.openSync(apiLog, "a"), fs.openSync(apiLog, "a")] },
    );
    run.started.push(api);
    await waitFor(
        "kube-apiserver /readyz",
        async () =>
            (await get(`https://127.0.0.1:${securePort}/readyz`, { ca: caPem, token: creds.token })).status === 200,
        [etcd.proc, { name: "kube-apiserver", p: api, log: logTail(apiLog) }],
        run.timeoutMs,
    );
    return api;
}

/** A kubeconfig of a static token (the admin's unless named), the CA inline, written under `dir`. */
function writeKubeconfig(dir: string, url: string, caPem: Buffer, token: string, user = "admin"): string {
    const kubeconfig = path.join(dir, `${user}.kubeconfig`);
    fs.writeFileSync(
        kubeconfig,
        [
            "apiVersion: v1",
            "kind: Config",
            "clusters:",
            "- name: pko-guard",
            "  cluster:",
            `    server: ${url}`,
            `    certificate-authority-data: ${caPem.toString("base64")}`,
            "users:",
            "- name: admin",
            "  user:",
            `    token: ${token}`,
            "contexts:",
            "- name: pko-guard",
            "  context: {cluster: pko-guard, user: admin, namespace: default}",
            "current-context: pko-guard",
            "",
        ].join("\n"),
        { mode: 0o600 },
    );
    return kubeconfig;
}

/** kube-controller-manager with `controllers`, once it does the job: a namespace deleted in the foreground goes. */
async function startControllers(
    run: Run,
    kubeconfig: string,
    controllers: readonly string[],
    ownCredentials: boolean,
    kubectl: ApiServer["kubectl"],
    apply: ApiServer["apply"],
): Promise<void> {
    const kcmLog = path.join(run.dir, "kube-controller-manager.log");
    const kcm = spawnTracked(
        path.join(run.binDir, "kube-controller-manager"),
        [
            `--kubeconfig=${kubeconfig}`,
            `--controllers=${controllers.join(",")}`,
            // One account a controller when run as the cluster runs it (its own kubeconfig), as kubeadm does.
            ...(ownCredentials ? ["--use-service-account-credentials=true"] : []),
            "--leader-elect=false",
            // Nothing scrapes it: no serving port to allocate or secure.
            "--secure-port=0",
            "--v=0",
        ],
        { cwd: run.dir, stdio: ["ignore", fs.openSync(kcmLog, "a"), fs.openSync(kcmLog, "a")] },
    );
    run.started.push(kcm);
    // Ready when it does the job: a namespace deleted with foreground propagation disappears.
    const probe = `pko-guard-probe-${randomBytes(4).toString("hex")}`;
    await apply(`apiVersion: v1\nkind: Namespace\nmetadata: {name: ${probe}}\n`);
    const del = await kubectl(["delete", "namespace", probe, "--cascade=foreground", "--wait=false"]);
    if (del.code !== 0) throw new Error(`deleting the probe namespace failed: ${del.stderr}`);
    await waitFor(
        "kube-controller-manager to finalize a namespace",
        async () => /NotFound/.test((await kubectl(["get", "namespace", probe])).stderr),
        [{ name: "kube-controller-manager", p: kcm, log: logTail(kcmLog) }],
        run.timeoutMs,
    );
}

/**
 * Installs CRDs from files (server-side apply: the large ones do not fit the last-applied annotation) and waits
 * until every CRD they define is established. Polled rather than `kubectl wait`, which errors out on a CRD whose
 * status has no conditions yet.
 */
async function installCrds(server: ApiServer, what: string, files: string[]): Promise<void> {
    const r = await server.kubectl(["apply", "--server-side", ...files.flatMap((f) => ["-f", f])]);
    if (r.code !== 0) throw new Error(`installing ${what} failed: ${r.stderr}`);
    const names = files.flatMap((f) =>
        parseAllDocuments(fs.readFileSync(f, "utf8"))
            .map((d) => d.toJS() as { kind?: string; metadata?: { name?: string } } | null)
            .filter((d) => d?.kind === "CustomResourceDefinition" && typeof d.metadata?.name === "string")
            .map((d) => d!.metadata!.name!),
    );
    const established = async () => {
        for (const n of names) {
            const r = await server.kubectl([
                "get",
                "crd",
                n,
                "-o",
                'jsonpath={.status.conditions[?(@.type=="Established")].status}',
            ]);
            if (r.stdout.trim() !== "True") return false;
        }
        return true;
    };
    await waitFor(`${what} to be established`, established, [], 120_000);
}

/** Installs the committed PKO v2.9.0 CRDs. */
export async function installPkoCrds(server: ApiServer): Promise<void> {
    await installCrds(
        server,
        "the PKO CRDs",
        PKO_CRD_FILES.map((f) => path.join(PKO_CRD_DIR, f)),
    );
}

/**
 * Installs Argo CD's Application CRD, so Applications are validated, pruned and defaulted by the server as in a
 * cluster running Argo CD. No Argo CD controller runs: see harness/argocd-finalizers.ts for the one part of it
 * deletion needs.
 */
export async function installApplicationCrd(server: ApiServer): Promise<void> {
    await installCrds(server, "the Application CRD", [APPLICATION_CRD]);
}

/**
 * Installs Flux's CRDs committed under schemas/flux/ (source-, kustomize- and helm-controller's), so programs and
 * manifests that declare Flux objects are created as in a cluster running Flux. No Flux controller runs, so the
 * objects carry no finalizers and delete at once.
 */
export async function installFluxCrds(server: ApiServer): Promise<void> {
    const files = fs
        .readdirSync(FLUX_CRD_ROOT, { recursive: true, encoding: "utf8" })
        .filter((f) => f.endsWith(".yaml"))
        .sort()
        .map((f) => path.join(FLUX_CRD_ROOT, f));
    await installCrds(server, "the Flux CRDs", files);
}
