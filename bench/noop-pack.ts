/**
 * The SDK's floor over gRPC (bench only): a policy pack with as many resource and stack policies as pko-guard, each
 * doing nothing, served by @pulumi/policy exactly as the pack is. With PKO_GUARD_BENCH_REPORTING=<n>, the floor that
 * also reports: each policy reports the findings the pack reports for the bench's program of n resources
 * (bench/analyzer-path.ts `reportingFloorPack`).
 */
import { PolicyPack } from "@pulumi/policy";
import { noopPack, reportingFloorPack, requests } from "./analyzer-path";
import { platformProgram } from "./programs";

async function main(): Promise<void> {
    const reporting = Number(process.env.PKO_GUARD_BENCH_REPORTING ?? 0);
    const policies = reporting > 0 ? await reportingFloorPack(requests(platformProgram(reporting))) : noopPack();
    new PolicyPack("pko-guard-noop", { policies });
}

main().catch((e: unknown) => {
    process.stderr.write(`noop pack: ${String(e)}\n`);
    process.exitCode = 1;
});
