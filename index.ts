/**
 * The pko-guard policy pack. Constructing the PolicyPack starts the analyzer server, so nothing but this entry point
 * may construct it; rules live in ./policies.
 */
import * as fs from "fs";
import * as path from "path";
import { PolicyPack } from "@pulumi/policy";
import { buildPolicies } from "./policies";
import { sharingRequests } from "./evaluation/request-cache";

// @pulumi/policy reads the pack's version from `package.json` in the current directory, and a host may
// start the pack from the user's project folder: work from the folder of the pack's own package.json
// (pack/ for the bundled entry, the package root for the compiled one), wherever we were started.
function packHome(start: string): string | undefined {
    for (let dir = start; ; dir = path.dirname(dir)) {
        if (fs.existsSync(path.join(dir, "package.json"))) return dir;
        if (path.dirname(dir) === dir) return undefined;
    }
}
const home = packHome(__dirname);
if (home && home !== process.cwd()) process.chdir(home);

// The pack's policies, built here with their settings channel (the settings policy first, then every rule), and
// sharing what their rules derive within each request (evaluation/request-cache.ts).
new PolicyPack("pko-guard", { policies: sharingRequests(buildPolicies()) });
