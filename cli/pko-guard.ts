#!/usr/bin/env node
/**
 * The pko-guard command (cli/program.ts assembles its commands, one module each). Exit codes: 0 no blocking violation,
 * 1 blocking violations, 2 bad usage or a tool error.
 */
import "../support/fatal";
import { isMainThread } from "worker_threads";
import { exitWhenWritten } from "../support/exit";
import { main } from "./program";

if (isMainThread) main(process.argv.slice(2)).then(exitWhenWritten);
// A worker thread of this command is a part of a large `check` (gitops/manifests/parallel.ts).
else import("../gitops/manifests/check-parts").then((parts) => parts.servePart());
