/**
 * A chart from an OCI registry (`oci://host/path/chart`), pulled under the network policy. Not yet implemented:
 * every request is a FetchError that says so.
 */
import { FetchError } from "./http-client";
import { FetchPolicy, shownUrl } from "./policy";

export async function ociPull(
    policy: FetchPolicy,
    url: string,
    version: string,
    into: string,
): Promise<{ version: string; digest: string; dir: string }> {
    void policy;
    void version;
    void into;
    throw new FetchError(`${shownUrl(url)}: charts from OCI registries are not fetched yet`);
}
