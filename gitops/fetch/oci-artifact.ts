/**
 * A Flux OCI artifact (what `flux push artifact` stores, what a Kustomization's OCIRepository source holds), pulled
 * as source-controller pulls it: the manifest by `spec.ref.digest`, else the highest tag matching `spec.ref.semver`
 * (./git-semver.ts, Flux's own version parsing), else `spec.ref.tag`, else `latest`; the layer `spec.layerSelector`
 * names by media type, else the first; extracted by the toolchain's flux-build with Flux's own tar package.
 * Every request goes through the registry relay (./oci.ts) under the network policy, with the registry's own
 * credential; the layer's bytes are checked against its digest.
 */
import * as crypto from "crypto";
import * as fs from "fs";
import * as path from "path";
import { exec } from "../../support/process";
import { findTool } from "../render/tools";
import { firstErrorLine } from "../render/tool-errors";
import { registryCredential } from "./source-credentials";
import { Budget, FetchError } from "./http-client";
import { FetchPolicy, shownUrl } from "./network-policy";
import { Relay, parseOciUrl } from "./oci";
import { pickSemverTag } from "./git-semver";

/** What an OCIRepository asks for. */
export interface ArtifactRef {
    digest?: string;
    semver?: string;
    tag?: string;
    /** `spec.ref.semverFilter`: only tags this (RE2) regular expression matches count for `semver`. */
    semverFilter?: string;
    /** `spec.layerSelector.mediaType`; none: the first layer. */
    mediaType?: string;
}

const MANIFEST_TYPES = [
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.docker.distribution.manifest.v2+json",
].join(", ");

/** The most tags one repository may list for a semver ref (a bound on hostile input). */
const MAX_TAGS = 100_000;

/**
 * Pulls the artifact `url` (`oci://host[:port]/path`) at `ref` into `into` (a new folder, the layer's files); the
 * tag it resolved to (none, pulled by digest) and the manifest's digest.
 */
export async function ociArtifactPull(
    policy: FetchPolicy,
    url: string,
    ref: ArtifactRef,
    into: string,
): Promise<{ tag?: string; digest: string }> {
    const shown = shownUrl(url);
    const { host, port, repo } = parseOciUrl(url);
    const budget = new Budget(policy.limits.maxBytes, policy.limits.timeoutMs);
    const relay = new Relay(policy, budget, host, port, registryCredential(host, port));
    const scope = `repository:${repo}:pull`;
    const get = async (what: string, accept?: string) => {
        const a = await relay.get(`/v2/${repo}/${what}`, accept, scope);
        if (a.status === 404)
            throw new FetchError(
                `${shown}: ${what.startsWith("manifests/") ? `no ${JSON.stringify(decodeURIComponent(what.slice(10)))}` : "not found (404)"} in the registry`,
            );
        if (a.status !== 200) throw new FetchError(`${shown}: the registry answered ${a.status}`);
        return a;
    };
    let tag: string | undefined;
    let reference: string;
    if (ref.digest !== undefined) {
        if (!/^sha256:[0-9a-f]{64}$/.test(ref.digest)) throw new FetchError(`${shown}: not a sha256 digest`);
        reference = ref.digest;
    } else if (ref.semver !== undefined) {
        tag = reference = await semverTag(shown, repo, relay, scope, ref.semver, ref.semverFilter, budget);
    } else tag = reference = ref.tag ?? "latest";
    const answer = await get(`manifests/${encodeURIComponent(reference)}`, MANIFEST_TYPES);
    const digest = `sha256:${crypto.createHash("sha256").update(answer.body).digest("hex")}`;
    if (ref.digest !== undefined && digest !== ref.digest)
        throw new FetchError(`${shown}: the manifest's digest is not ${ref.digest}`);
    let layers: { mediaType?: unknown; digest?: unknown }[];
    try {
        const manifest = JSON.parse(answer.body.toString("utf8")) as { layers?: unknown };
        layers = Array.isArray(manifest.layers) ? (manifest.layers as { mediaType?: unknown; digest?: unknown }[]) : [];
    } catch {
        throw new FetchError(`${shown}: the manifest is not JSON`);
    }
    if (layers.length === 0) throw new FetchError(`${shown}: the artifact has no layer`);
    const layer = ref.mediaType === undefined ? layers[0] : layers.find((l) => l.mediaType === ref.mediaType);
    if (!layer)
        throw new FetchError(`${shown}: no layer of media type ${JSON.stringify(ref.mediaType)} in the artifact`);
    const layerDigest = typeof layer.digest === "string" ? layer.digest : "";
    if (!/^sha256:[0-9a-f]{64}$/.test(layerDigest)) throw new FetchError(`${shown}: a layer without a sha256 digest`);
    const blob = await get(`blobs/${layerDigest}`);
    if (`sha256:${crypto.createHash("sha256").update(blob.body).digest("hex")}` !== layerDigest)
        throw new FetchError(`${shown}: the layer does not match its digest`);
    await untar(shown, blob.body, into, policy, budget);
    return { tag, digest };
}

/** The tags of `repo` (one page of at most MAX_TAGS) and the one `range` chooses, as source-controller does. */
async function semverTag(
    shown: string,
    repo: string,
    relay: Relay,
    scope: string,
    range: string,
    filter: string | undefined,
    budget: Budget,
): Promise<string> {
    const a = await relay.get(`/v2/${repo}/tags/list?n=${MAX_TAGS}`, undefined, scope);
    if (a.status !== 200) throw new FetchError(`${shown}: the registry lists no tags (${a.status})`);
    let listed: { tags?: unknown };
    try {
        listed = JSON.parse(a.body.toString("utf8")) as { tags?: unknown };
    } catch {
        throw new FetchError(`${shown}: the registry's tag list is not JSON`);
    }
    const tags = Array.isArray(listed.tags) ? listed.tags.filter((t): t is string => typeof t === "string") : [];
    const picked = await pickSemverTag(shown, range, tags.slice(0, MAX_TAGS), budget.left(), filter);
    if (picked.tied.length > 1)
        throw new FetchError(
            `${shown}: semver ${JSON.stringify(range)}: tags ${picked.tied.map((t) => JSON.stringify(t)).join(", ")} are the same version, so which one Flux pulls is not known`,
        );
    return picked.tag;
}

/**
 * The tag of the chart or artifact `url` an OCIRepository's `spec.ref.semver` (after its `semverFilter`) chooses, as
 * source-controller chooses it (getTagBySemver): listed through the registry relay under the policy.
 */
export async function ociSemverTag(
    policy: FetchPolicy,
    url: string,
    range: string,
    filter: string | undefined,
): Promise<string> {
    const { host, port, repo } = parseOciUrl(url);
    const budget = new Budget(policy.limits.maxBytes, policy.limits.timeoutMs);
    const relay = new Relay(policy, budget, host, port, registryCredential(host, port));
    return semverTag(shownUrl(url), repo, relay, `repository:${repo}:pull`, range, filter, budget);
}

/** Extracts the layer (a gzip-compressed tarball) into `into` with flux-build, within the fetch's byte limit. */
async function untar(shown: string, body: Buffer, into: string, policy: FetchPolicy, budget: Budget): Promise<void> {
    const tool = findTool("flux-build");
    if (!tool) throw new FetchError(`${shown}: extracting a Flux artifact needs flux-build, which is not installed`);
    fs.mkdirSync(into, { recursive: true });
    const archive = path.join(path.dirname(into), "layer.tar.gz");
    fs.writeFileSync(archive, body);
    try {
        const r = await exec(tool.path, [], {
            cwd: path.dirname(into),
            env: { PATH: process.env.PATH ?? "" },
            input: JSON.stringify({ untar: { archive, into, maxBytes: policy.limits.maxBytes } }),
            timeoutMs: Math.max(1, budget.left()),
        });
        if (r.timedOut) throw new FetchError(`${shown}: extracting the artifact ran out of time`);
        if (r.code !== 0)
            throw new FetchError(`${shown}: the artifact's layer cannot be extracted: ${firstErrorLine(r.stderr)}`);
    } finally {
        fs.rmSync(archive, { force: true });
    }
}
