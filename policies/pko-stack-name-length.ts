/**
 * pko-stack-name-length (mandatory)
 *
 * What: a Stack's `metadata.name` is at most 42 characters (an autonamed Stack: its Pulumi name plus the
 * 8-character random suffix and dash).
 *
 * Why: the operator derives workspace object names (StatefulSet, Service, pods) from the Stack's name and
 * rejects names that would not fit Kubernetes' limits once prefixed and suffixed.
 *
 * Fix: shorten `metadata.name`.
 */
import { stackRule } from "./model/policy";
import { describeStack } from "./model/stack";
import { UNKNOWN } from "./model/values";

export const NAME = "pko-stack-name-length";
export const MAX_NAME_LENGTH = 42;
/** Length the Kubernetes provider adds when it autonames a resource: "-" and 8 random characters. */
const AUTONAME_SUFFIX = 9;

export const policy = stackRule(
    {
        name: NAME,
        description: `PKO Stack names fit the operator's limit of ${MAX_NAME_LENGTH} characters.`,
        enforcementLevel: "mandatory",
        severity: "medium",
        remediationSteps: `Shorten metadata.name to at most ${MAX_NAME_LENGTH} characters.`,
        url: "https://github.com/pulumi/pulumi-kubernetes-operator",
    },
    (view) => {
        const who = describeStack(view);
        if (view.name === UNKNOWN) {
            return [`${who}: metadata.name is unknown during preview, so its length cannot be verified; the rule fails closed: set a known name of at most ${MAX_NAME_LENGTH} characters.`];
        }
        if (view.name === undefined) {
            const length = view.resourceName.length + AUTONAME_SUFFIX;
            return length > MAX_NAME_LENGTH
                ? [`${who}: metadata.name is generated from the resource name and will be ${length} characters, over the limit of ${MAX_NAME_LENGTH}; set a shorter metadata.name.`]
                : [];
        }
        return view.name.length > MAX_NAME_LENGTH
            ? [`${who}: metadata.name is ${view.name.length} characters, over the operator's limit of ${MAX_NAME_LENGTH}; shorten it.`]
            : [];
    },
);
