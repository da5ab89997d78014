/**
 * KSOPS generators (`kind: ksops`, viaduct.ai's kustomize plugin that Argo CD users enable with
 * `kustomize.buildOptions: --enable-alpha-plugins --enable-exec`), rendered as KSOPS renders them, without the keys:
 * the SOPS-encrypted files it lists (`files`) become resources, its `secretFrom` Secrets become kustomize
 * `secretGenerator`s over the same encrypted files (`files`, `binaryFiles`, `envs`). So the objects keep their
 * names and keys and hold ciphertext where the cluster gets the decrypted values; pko-stack-secret-committed reads
 * that as not committed (policies/model/sops.ts). check builds without exec plugins, where kustomize would refuse
 * the generator.
 */
import * as fs from "fs";
import * as path from "path";
import { decodeKubeYaml } from "../decode/kube-yaml";

type Obj = Record<string, unknown>;

/** At most this many kustomization folders below one build are looked at (a bound on hostile input). */
const MAX_FOLDERS = 500;
/** The most a generator's configuration file may hold. */
const MAX_CONFIG = 1024 * 1024;

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const listOf = (v: unknown): unknown[] => (Array.isArray(v) ? (v as unknown[]) : []);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);

/** The KSOPS configurations of a generator file (every `kind: ksops` document), or none. */
function ksopsConfigs(file: string): Obj[] {
    try {
        if (!fs.statSync(file).isFile() || fs.statSync(file).size > MAX_CONFIG) return [];
        return decodeKubeYaml(fs.readFileSync(file, "utf8"))
            .map((d) => d.value)
            .filter((v): v is Obj => isObj(v) && v.kind === "ksops");
    } catch {
        return [];
    }
}

/** A `secretFrom` entry as a kustomize secretGenerator (KSOPS adds a name hash only when asked to). */
function asSecretGenerator(entry: Obj): Obj {
    const meta = isObj(entry.metadata) ? entry.metadata : {};
    const annotations = isObj(meta.annotations) ? meta.annotations : {};
    const options: Obj = { disableNameSuffixHash: annotations["kustomize.config.k8s.io/needs-hash"] !== "true" };
    if (isObj(meta.labels)) options.labels = meta.labels;
    if (Object.keys(annotations).length > 0) options.annotations = annotations;
    const gen: Obj = { name: meta.name, options };
    if (typeof meta.namespace === "string") gen.namespace = meta.namespace;
    if (typeof entry.type === "string") gen.type = entry.type;
    const files = [...strings(entry.files), ...strings(entry.binaryFiles)];
    if (files.length > 0) gen.files = files;
    if (strings(entry.envs).length > 0) gen.envs = strings(entry.envs);
    return gen;
}

/**
 * Rewrites the KSOPS generators of kustomization `k` (of folder `dir`) in place; whether it had any. A generator
 * entry that is not a KSOPS configuration is left for kustomize.
 */
export function rewriteKsops(k: Obj, dir: string): boolean {
    const generators = Array.isArray(k.generators) ? (k.generators as unknown[]) : [];
    const kept: unknown[] = [];
    let found = false;
    for (const g of generators) {
        const configs = typeof g === "string" ? ksopsConfigs(path.resolve(dir, g)) : [];
        if (configs.length === 0) {
            kept.push(g);
            continue;
        }
        found = true;
        for (const c of configs) {
            const files = strings(c.files);
            if (files.length > 0) k.resources = [...listOf(k.resources), ...files];
            const secrets = Array.isArray(c.secretFrom) ? c.secretFrom.filter(isObj).map(asSecretGenerator) : [];
            if (secrets.length > 0) k.secretGenerator = [...listOf(k.secretGenerator), ...secrets];
        }
    }
    if (!found) return false;
    if (kept.length > 0) k.generators = kept;
    else delete k.generators;
    return true;
}

/**
 * Rewrites the KSOPS generators of every kustomization below `dir` (the folders its `resources`, `bases` and
 * `components` name, inside `root`), `dir`'s own excepted (its caller writes that one); returns what puts the files
 * back as they were.
 */
export function rewriteNestedKsops(
    dir: string,
    root: string,
    k: Obj,
    kustomizationFile: (d: string) => string | undefined,
): () => void {
    const written: { file: string; text: string }[] = [];
    const seen = new Set<string>([dir]);
    const queue: { d: string; k: Obj }[] = [{ d: dir, k }];
    try {
        while (queue.length > 0 && seen.size <= MAX_FOLDERS) {
            const { d, k: at } = queue.shift()!;
            for (const e of [...strings(at.resources), ...strings(at.bases), ...strings(at.components)]) {
                const sub = path.resolve(d, e);
                const rel = path.relative(root, sub);
                if (seen.has(sub) || rel.startsWith("..") || path.isAbsolute(rel)) continue;
                if (!fs.existsSync(sub) || !fs.statSync(sub).isDirectory()) continue;
                seen.add(sub);
                const file = kustomizationFile(sub);
                if (!file) continue;
                const text = fs.readFileSync(file, "utf8");
                const parsed = decodeKubeYaml(text).find((x) => x.value !== null)?.value;
                if (!isObj(parsed)) continue;
                if (rewriteKsops(parsed, sub)) {
                    written.push({ file, text });
                    fs.writeFileSync(file, `${JSON.stringify(parsed, null, 2)}\n`);
                }
                queue.push({ d: sub, k: parsed });
            }
        }
    } catch (e) {
        for (const w of written) fs.writeFileSync(w.file, w.text);
        throw e;
    }
    return () => {
        for (const w of written) fs.writeFileSync(w.file, w.text);
    };
}
