/**
 * The child process that fetches for synchronous callers (./fetch.ts fetchSourceSync): reads `{ req, policy }` as
 * JSON on standard input, fetches, and writes `{ source }` or `{ error }` (one line, already fit to show) as JSON
 * on standard output. Its parent kills it when the time limit has passed.
 */
import { isReportedError } from "../../support/errors";
import { FetchRequest, fetchSource } from "./fetch";
import { FetchPolicy } from "./network-policy";

async function main(): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of process.stdin) chunks.push(c as Buffer);
    let out: { source?: unknown; error?: string };
    try {
        const { req, policy } = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
            req: FetchRequest;
            policy: FetchPolicy;
        };
        out = { source: await fetchSource(req, policy) };
    } catch (e) {
        out = { error: isReportedError(e) ? e.message : "the fetch failed" };
    }
    process.stdout.write(JSON.stringify(out));
    process.exit(0);
}

main().catch(() => process.exit(1));
