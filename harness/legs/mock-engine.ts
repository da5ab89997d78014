/**
 * The part of the Pulumi engine (v3.248.0) and the Kubernetes provider that the mock leg re-does around
 * the SDK's MockMonitor, so a program under mocks produces what a real preview hands the analyzer: URNs with
 * the parent's whole type chain, transforms in the engine's order (mock-transforms.ts), the provider's Check
 * (mock-check.ts), its provider-side components (mock-yaml.ts, mock-components.ts; other remote components are
 * refused), and `kubernetes:yaml:decode`. Monitor errors carry gRPC `details`: without them the SDK reports the
 * program's error with an empty message.
 */
import { AUTONAMED_ANNOTATION, CheckContext, checkKubernetesInputs, kubernetesKind } from "./mock-check";
import { EXPANDABLE_COMPONENTS, REFUSED_COMPONENTS, expandHelmV4, expandKustomizeV2 } from "./mock-components";
import { ChildRegistration } from "./mock-register";
import { MockRefusal, Obj, isObj } from "./mock-wire";
import { Callback, Transforms, applyOptions, optionsFromRequest } from "./mock-transforms";
import { REFUSED_INVOKES, decodeYamlInvoke, expandYamlV2 } from "./mock-yaml";
import {
    MockMonitor,
    MonitorCallback,
    MonitorError,
    monitorMethod,
    provproto,
    resproto,
    setMonitorMethod,
    toStruct,
} from "./engine-surface";

/** One registration as the engine would hand it to analyzers (wire form). */
export interface Registration {
    type: string;
    name: string;
    urn: string;
    custom: boolean;
    parent?: string;
    provider?: string;
    properties: unknown;
    dependencies: string[];
    /** For Kubernetes objects the provider named: the generated `metadata.name`. */
    autonamed?: string;
}

/** The engine's URN: the parent's whole qualified type is kept, except for the root stack resource. */
export function engineUrn(
    stack: string,
    project: string,
    type: string,
    name: string,
    parent: string | undefined,
): string {
    let qualified = type;
    if (parent) {
        const parentQualified = parent.split("::")[2] ?? "";
        if (parentQualified && parentQualified !== "pulumi:pulumi:Stack") {
            qualified = `${parentQualified}$${type}`;
        }
    }
    return `urn:pulumi:${stack}::${project}::${qualified}::${name}`;
}

export interface MockEngineOptions {
    project: string;
    stack: string;
    programDir: string;
    /** The Kubernetes provider's default namespace in the real leg ("" for none). */
    defaultNamespace: string;
}

export class MockEngine {
    readonly registrations: Registration[] = [];
    /** The first reason the mock leg cannot reproduce the engine for this program. */
    refusal?: string;
    private readonly transforms = new Transforms();
    private readonly k8s: CheckContext;

    constructor(private readonly opts: MockEngineOptions) {
        this.k8s = { crds: new Map(), defaultNamespace: opts.defaultNamespace };
    }

    /**
     * What the engine hands the analyzer: the root stack resource first (`pulumi:pulumi:Stack`), then every
     * registration, with the root as the parent of those the program gave none (as the engine does).
     * Nothing at all when the program registered nothing.
     */
    analyzerView(): Registration[] {
        if (this.registrations.length === 0) return [];
        const { stack, project } = this.opts;
        const root = engineUrn(stack, project, "pulumi:pulumi:Stack", `${project}-${stack}`, undefined);
        return [
            {
                type: "pulumi:pulumi:Stack",
                name: `${project}-${stack}`,
                urn: root,
                custom: false,
                properties: {},
                dependencies: [],
            },
            ...this.registrations.map((r) => (r.parent ? r : { ...r, parent: root })),
        ];
    }

    refuse(message: string): void {
        this.refusal = this.refusal ?? message;
    }

    /** Installs the engine's behaviour on the SDK's MockMonitor instance. */
    install(monitor: MockMonitor): void {
        const { stack, project } = this.opts;
        monitor.newUrn = (parent: string, type: string, name: string) =>
            engineUrn(stack, project, type, name, parent || undefined);
        // Every error handed back to the SDK carries gRPC details (the SDK reports `err.details`).
        for (const method of [
            "invoke",
            "call",
            "readResource",
            "registerResource",
            "registerResourceOutputs",
            "supportsFeature",
        ]) {
            const original = monitorMethod(monitor, method);
            if (!original) continue;
            setMonitorMethod(monitor, method, (req, callback) =>
                original(req, (err, res) => callback(withDetails(err), res)),
            );
        }
        const register = monitor.registerResource.bind(monitor);
        monitor.registerResource = (req, callback) => {
            // A program that registers its root stack itself (the Go SDK does): answered, and not a registration
            // of its own, since analyzerView gives the root as the engine does.
            if (req.getType() === "pulumi:pulumi:Stack" && !req.getParent()) {
                register(req, callback);
                return;
            }
            this.onRegister(req).then(
                () => register(req, callback),
                (e: unknown) => {
                    if (e instanceof MockRefusal) this.refuse(e.message);
                    callback(withDetails(e));
                },
            );
        };
        this.installInvoke(monitor);
        monitor.registerStackTransform = (req, callback) => {
            this.transforms.addStackTransform({ target: req.getTarget(), token: req.getToken() });
            callback(null, {});
        };
        monitor.registerStackInvokeTransform = (req, callback) => {
            this.transforms.addInvokeTransform({ target: req.getTarget(), token: req.getToken() });
            callback(null, {});
        };
        this.installReadResource(monitor);
        const supportsFeature = monitor.supportsFeature.bind(monitor);
        monitor.supportsFeature = (req, callback) => {
            if (req.getId() === "transforms" || req.getId() === "invokeTransforms") {
                callback(null, { getHassupport: () => true });
                return;
            }
            supportsFeature(req, callback);
        };
    }

    /** Invokes: the stack's invoke transforms first, then `kubernetes:yaml:decode` answered, others refused or mocked. */
    private installInvoke(monitor: MockMonitor): void {
        const invoke = monitor.invoke.bind(monitor);
        monitor.invoke = (req, callback) => {
            // The engine runs the stack's invoke transforms first, in registration order.
            this.transforms.transformInvoke(req).then(
                () => answer(req, callback),
                (e: unknown) => callback(withDetails(e)),
            );
        };
        const answer = (req: resproto.ResourceInvokeRequest, callback: MonitorCallback) => {
            const tok = req.getTok();
            try {
                if (tok === "kubernetes:yaml:decode") {
                    const result = decodeYamlInvoke(req.getArgs()?.toJavaScript() ?? {});
                    const resp = new provproto.InvokeResponse();
                    resp.setReturn(toStruct(result));
                    callback(null, resp);
                    return;
                }
                if (REFUSED_INVOKES[tok]) {
                    throw new MockRefusal(`cannot answer the invoke ${tok} in the mock leg: ${REFUSED_INVOKES[tok]}`);
                }
            } catch (e) {
                if (e instanceof MockRefusal) this.refuse(e.message);
                callback(withDetails(e));
                return;
            }
            invoke(req, callback);
        };
    }

    /** `.get` of an existing resource: refused, since its state is what mocks do not have. */
    private installReadResource(monitor: MockMonitor): void {
        monitor.readResource = (req, callback) => {
            // `.get`: the engine reads the live state through the provider (a cluster, another stack); the
            // analyzer's stack view would hold it. Mocks have none of it.
            const type = req.getType();
            const source =
                type === "pulumi:pulumi:StackReference"
                    ? "its outputs come from another stack's state"
                    : type.startsWith("kubernetes:")
                      ? "its state comes from the cluster"
                      : "its state comes from the provider";
            const message = `cannot read ${type} "${req.getName()}" (a .get of an existing resource) in the mock leg: ${source}`;
            this.refuse(message);
            callback(withDetails(new MockRefusal(message)));
        };
    }

    /**
     * The engine's side of one registration: transforms, then (for Kubernetes objects) the provider's
     * Check; the request is updated in place so the mocks (and thus the program) see the result. A
     * provider-side component is then expanded (expandComponent).
     */
    private async onRegister(req: resproto.RegisterResourceRequest): Promise<void> {
        const type = req.getType();
        const name = req.getName();
        const parent = req.getParent() || "";
        const custom = req.getCustom();
        const remote = req.getRemote();
        const urn = engineUrn(this.opts.stack, this.opts.project, type, name, parent || undefined);
        const own: Callback[] = req.getTransformsList().map((c) => ({ target: c.getTarget(), token: c.getToken() }));
        let props = (req.getObject()?.toJavaScript() ?? {}) as Record<string, unknown>;
        let options = optionsFromRequest(req);
        const result = await this.transforms.transform(urn, { name, type, parent, custom, props, options, own });
        props = result.props;
        options = result.options;
        applyOptions(req, options);
        let autonamed: string | undefined;
        if (custom && kubernetesKind(type)) {
            props = checkKubernetesInputs(name, type, props as Obj, this.k8s);
            autonamed = autonameOf(props);
        }
        req.setObject(toStruct(props));
        this.registrations.push({
            type,
            name,
            urn,
            custom,
            parent: parent || undefined,
            provider: req.getProvider() || undefined,
            properties: props,
            dependencies: req.getDependenciesList(),
            ...(autonamed ? { autonamed } : {}),
        });
        if (remote) await this.expandComponent(type, name, urn, props);
    }

    /** A provider-side component's children, registered as its provider would; other remote components refused. */
    private async expandComponent(type: string, name: string, urn: string, props: Record<string, unknown>) {
        if (EXPANDABLE_COMPONENTS.has(type)) {
            // As Construct: the children are registered before the component's registration returns, and a
            // bad manifest fails the component's registration.
            const children =
                type === "kubernetes:helm.sh/v4:Chart"
                    ? expandHelmV4(name, props as Obj, this.opts.programDir, this.k8s)
                    : type === "kubernetes:kustomize/v2:Directory"
                      ? expandKustomizeV2(name, props as Obj, this.opts.programDir, this.k8s)
                      : expandYamlV2(
                            type.endsWith(":ConfigGroup") ? "ConfigGroup" : "ConfigFile",
                            name,
                            props as Obj,
                            this.opts.programDir,
                            this.k8s,
                        );
            await this.expandChildren(urn, children);
            return;
        }
        const why =
            REFUSED_COMPONENTS[type] ??
            "it is implemented by its provider (a remote component), which the mock leg does not run";
        throw new MockRefusal(`cannot expand ${type} "${name}" in the mock leg: ${why}`);
    }

    /** Registers a component's children as its provider would (through the same engine steps). */
    private async expandChildren(componentUrn: string, children: ChildRegistration[]): Promise<void> {
        const urns = new Map<string, string>();
        for (const child of children) {
            const urn = engineUrn(this.opts.stack, this.opts.project, child.type, child.name, componentUrn);
            const dependencies = child.dependsOn.map((n) => urns.get(n)!).filter(Boolean);
            const options = new resproto.TransformResourceOptions();
            options.setDependsOnList(dependencies);
            const result = await this.transforms.transform(urn, {
                name: child.name,
                type: child.type,
                parent: componentUrn,
                custom: true,
                props: child.properties,
                options,
                own: [],
            });
            const props = checkKubernetesInputs(child.name, child.type, result.props as Obj, this.k8s);
            urns.set(child.name, urn);
            const autonamed = autonameOf(props);
            this.registrations.push({
                type: child.type,
                name: child.name,
                urn,
                custom: true,
                parent: componentUrn,
                properties: props,
                dependencies: result.options.getDependsOnList(),
                ...(autonamed ? { autonamed } : {}),
            });
        }
    }

    close(): void {
        this.transforms.close();
    }
}

function autonameOf(props: Record<string, unknown>): string | undefined {
    const meta = props.metadata;
    if (!isObj(meta) || !isObj(meta.annotations)) return undefined;
    return meta.annotations[AUTONAMED_ANNOTATION] === "true" && typeof meta.name === "string" ? meta.name : undefined;
}

function message(e: unknown): string {
    if (e instanceof Error) return e.message || e.name || "unknown error";
    return String(e);
}

/** A gRPC-shaped error: the SDK reads `details` (a plain Error's would be undefined, hence empty). */
function withDetails(err: unknown): MonitorError | null {
    if (!err) return null;
    if (typeof err !== "object") return Object.assign(new Error(String(err)), { details: String(err) });
    const e = err as MonitorError;
    if (!e.details) e.details = message(err) || "the mock monitor failed without a message";
    return e;
}
