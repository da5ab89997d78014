// An organisation's own CrossGuard pack (plain JavaScript: the language host runs it as it is), with two rules a
// platform team adds beside pko-guard's: the owning team's label, and pinned container images.
const { PolicyPack } = require("@pulumi/policy");

/** The Kubernetes kinds that must name their owning team. */
const OWNED = ["kubernetes:apps/v1:Deployment", "kubernetes:core/v1:Namespace", "kubernetes:pulumi.com/v1:Stack"];

new PolicyPack("acme-platform", {
    policies: [
        {
            name: "acme-team-label",
            description: "Workloads, namespaces and PKO Stacks carry the label naming their owning team.",
            enforcementLevel: "mandatory",
            configSchema: { properties: { label: { type: "string", default: "team" } } },
            validateResource: (args, reportViolation) => {
                if (!OWNED.includes(args.type)) return;
                const { label } = args.getConfig();
                const labels = (args.props.metadata && args.props.metadata.labels) || {};
                if (!labels[label]) reportViolation(`${args.type.split(":")[2]} ${args.name} has no ${label} label`);
            },
        },
        {
            name: "acme-pinned-image",
            description: "Deployment images are pinned: a version tag or a digest, never :latest or no tag.",
            enforcementLevel: "advisory",
            validateResource: (args, reportViolation) => {
                if (args.type !== "kubernetes:apps/v1:Deployment") return;
                const spec = (args.props.spec && args.props.spec.template && args.props.spec.template.spec) || {};
                for (const c of spec.containers || []) {
                    const image = String(c.image || "");
                    const tag = image.includes("@") ? "digest" : (image.split("/").pop() || "").split(":")[1];
                    if (!tag || tag === "latest") reportViolation(`container ${c.name} runs ${image}: pin a version`);
                }
            },
        },
    ],
});
