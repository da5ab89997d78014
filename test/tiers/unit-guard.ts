/**
 * The unit tier's guard, a mocha root hook plugin loaded by test/tiers/unit.js: a unit spec starts no
 * child process and opens no connection. Both throw (test/tiers/guard.ts), and the test during which one
 * was attempted fails even if the code under test caught the error; an attempt outside any test (while
 * a spec file loads, in a root hook) fails the run.
 */
import { refuseProcessesAndConnections } from "./guard";

const attempts: string[] = [];
refuseProcessesAndConnections((message) => attempts.push(message));

function reportAttempts(): void {
    const seen = attempts.splice(0);
    if (seen.length > 0) throw new Error(seen[0]);
}

export const mochaHooks = {
    afterEach: reportAttempts,
    afterAll: reportAttempts,
};
