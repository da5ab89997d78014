// The pko-guard policy pack. Constructing the PolicyPack starts the analyzer server, so nothing but
// this entry point may construct it; rules live in ./policies.
import { PolicyPack } from "@pulumi/policy";
import { policies } from "./policies";

new PolicyPack("pko-guard", { policies });
