// The SDK's floor over gRPC (bench only): a policy pack with as many resource and stack policies as
// pko-guard, each doing nothing, served by @pulumi/policy exactly as the pack is.
import { PolicyPack } from "@pulumi/policy";
import { noopPack } from "./analyzer-path";

new PolicyPack("pko-guard-noop", { policies: noopPack() });
