/**
 * The admission bench as deployed (bench/admission-load.ts): a real API server holding the synthetic cluster,
 * `pko-guard webhook` run as deploy/webhook runs it (bench/webhook-process.ts: one replica), its cache synced from
 * the API server by list and watch, every review reading fresh what can change its verdict; the cluster not
 * written to, then written to steadily (bench/cluster-writes.ts).
 */
import * as fs from "fs";
import * as k8s from "@kubernetes/client-node";
import { KObject } from "../cluster/kinds";
import { Ca, CertPair } from "../harness/certs";
import { installPkoCrds, startApiServer } from "../harness/apiserver";
import { startClusterWrites } from "./cluster-writes";
import { LoadTarget, RunFigures, measureRates } from "./admission-rates";
import { populate } from "./synthetic-cluster";
import { startWebhookProcess } from "./webhook-process";

/** Lease renewals a second while the `busy200` figures are measured (bench/cluster-writes.ts). */
export const CLUSTER_WRITES_PER_SECOND = 10;

function answered(figures: Record<string, RunFigures>): number {
    return Object.values(figures).reduce((n, f) => n + f.requests, 0);
}

/** The webhook's counts of lists sent for fresh reads and of reads answered by one kept at their revision. */
async function freshReadCounts(hook: { metrics(): Promise<string> }): Promise<{ lists: number; kept: number }> {
    const text = await hook.metrics();
    const count = (name: string) => Number(new RegExp(`${name} (\\d+)`).exec(text)?.[1] ?? NaN);
    return { lists: count("pko_guard_fresh_lists_total"), kept: count("pko_guard_fresh_reads_kept_total") };
}

/**
 * kube-apiserver flags that turn its watch cache off for the kinds a Stack's review reads fresh, so those reads
 * go to etcd and never wait for the cache to catch up: an operator's lever for a cluster that is written to
 * often, measured here against the default (docs/cluster.md says what it showed).
 */
export const RBAC_WATCH_CACHE_OFF = [
    "--watch-cache-sizes=" +
        ["clusterrolebindings", "rolebindings", "clusterroles", "roles"]
            .map((r) => `${r}.rbac.authorization.k8s.io#0`)
            .join(","),
];

export interface Variant {
    /** Printed before each line of this variant's figures. */
    label: string;
    /** kube-apiserver flags besides the harness's own. */
    apiServerFlags?: readonly string[];
    /** Also measure at 50 and 200/s with the cluster not written to (before the run written to). */
    quiet: boolean;
}

/** The certificates of the bench: the webhook's serving pair, and the client pair the load presents (CA-signed). */
export interface BenchTls {
    ca: Ca;
    serving: CertPair;
    client: CertPair;
}

/**
 * The webhook as deployed: a real API server holding `cluster`, `pko-guard webhook` in a process of its own
 * with the Deployment's arguments, its cache synced from the API server by list and watch, every review reading
 * fresh what can change its verdict; its latencies at 50 and 200 reviews/s with the cluster not written to
 * (`rate50`, `rate200`, when `variant.quiet`), and at 200/s written to (`busy200`).
 */
export async function asDeployed(
    cluster: KObject[],
    bodies: string[],
    tls: BenchTls,
    line: (s: string) => void,
    variant: Variant,
): Promise<Record<string, RunFigures>> {
    const server = await startApiServer({ apiServerFlags: variant.apiServerFlags });
    try {
        await installPkoCrds(server);
        const kc = new k8s.KubeConfig();
        kc.loadFromFile(server.kubeconfig);
        const t0 = Date.now();
        await populate(kc, cluster);
        line(`  created ${cluster.length.toLocaleString("en")} objects in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
        const files = { cert: tls.serving.cert, key: tls.serving.key, clientCa: tls.ca.cert };
        const ca = fs.readFileSync(tls.ca.cert, "utf8");
        const hook = await startWebhookProcess({ ...files, kubeconfig: server.kubeconfig }, ca);
        try {
            const target: LoadTarget = {
                port: hook.port,
                ca,
                client: {
                    cert: fs.readFileSync(tls.client.cert, "utf8"),
                    key: fs.readFileSync(tls.client.key, "utf8"),
                },
                pid: hook.pid,
            };
            const rates = variant.quiet ? [50, 200] : [];
            const quiet = await measureRates(target, bodies, variant.label, line, { serverPids: server.pids, rates });
            const before = await freshReadCounts(hook);
            if (variant.quiet)
                line(
                    `  fresh lists sent to the API server: ${before.lists} for ${answered(quiet)} measured reviews, the warm-up and the opening seconds; reads answered by one made at the same revision: ${before.kept}`,
                );
            line(
                `  the cluster written to ${CLUSTER_WRITES_PER_SECOND} times a second (a Lease renewed, as the node leases of a cluster of ~${CLUSTER_WRITES_PER_SECOND * 10} nodes are):`,
            );
            const writes = await startClusterWrites(kc, CLUSTER_WRITES_PER_SECOND);
            const label = `${variant.label}, written to`;
            const busy = await measureRates(target, bodies, label, line, {
                serverPids: server.pids,
                rates: [200],
                warmUp: false,
            });
            const written = await writes.stop();
            const after = await freshReadCounts(hook);
            line(
                `  fresh lists sent: ${after.lists - before.lists} for ${answered(busy)} reviews; reads answered by one at the same revision: ${after.kept - before.kept}; writes acknowledged meanwhile: ${written.writes} (${written.errors} failed)`,
            );
            return { ...quiet, busy200: busy.rate200 };
        } finally {
            await hook.close();
        }
    } finally {
        await server.stop();
    }
}
