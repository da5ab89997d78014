/**
 * Transforms as the engine runs them for the mock leg (harness/legs/mock-engine.ts): `registerResourceTransform`,
 * the `transforms` option and the stack's invoke transforms, called through the SDK's own callback server (gRPC
 * `Callbacks.Invoke`), in the engine's order: the resource's transforms, then its parents' (nearest first), then
 * the stack's, in registration order.
 */
import { callbackGrpc, callbackPb, grpc, resproto, toStruct } from "./engine-surface";

/** A program's callback: the SDK's callback server and the token of one function. */
export interface Callback {
    target: string;
    token: string;
}

/** A registration as transforms see it. */
export interface TransformSubject {
    name: string;
    type: string;
    parent: string;
    custom: boolean;
    props: Record<string, unknown>;
    options: resproto.TransformResourceOptions;
    /** Its own transforms (the `transforms` option). */
    own: Callback[];
}

/** The program's transforms so far, and the clients of the callback servers that run them. */
export class Transforms {
    private readonly stackTransforms: Callback[] = [];
    private readonly invokeTransforms: Callback[] = [];
    private readonly resourceTransforms = new Map<string, Callback[]>();
    private readonly parents = new Map<string, string>();
    private readonly clients = new Map<string, callbackGrpc.CallbacksClient>();

    /** A stack transform (the monitor's `registerStackTransform`), run after a resource's own and its parents'. */
    addStackTransform(cb: Callback): void {
        this.stackTransforms.push(cb);
    }

    /** A stack invoke transform (the monitor's `registerStackInvokeTransform`). */
    addInvokeTransform(cb: Callback): void {
        this.invokeTransforms.push(cb);
    }

    /** Runs the transforms that apply to a registration, in the engine's order. */
    async transform(
        urn: string,
        r: TransformSubject,
    ): Promise<{ props: Record<string, unknown>; options: resproto.TransformResourceOptions }> {
        this.parents.set(urn, r.parent);
        if (r.own.length > 0) this.resourceTransforms.set(urn, r.own);
        const chain: Callback[] = [...r.own];
        for (let p = r.parent; p; p = this.parents.get(p) ?? "") {
            chain.push(...(this.resourceTransforms.get(p) ?? []));
        }
        chain.push(...this.stackTransforms);
        let props = r.props;
        let options = r.options;
        for (const cb of chain) {
            const request = new resproto.TransformRequest();
            request.setName(r.name);
            request.setType(r.type);
            request.setParent(r.parent);
            request.setCustom(r.custom);
            request.setProperties(toStruct(props));
            request.setOptions(options);
            const response = resproto.TransformResponse.deserializeBinary(
                await this.callback(cb, request.serializeBinary()),
            );
            options = response.getOptions() ?? options;
            props = response.getProperties()?.toJavaScript() ?? props;
        }
        return { props, options };
    }

    /** The stack's invoke transforms, applied to the request's args and options in place. */
    async transformInvoke(req: resproto.ResourceInvokeRequest): Promise<void> {
        if (this.invokeTransforms.length === 0) return;
        let args = req.getArgs();
        let options = new resproto.TransformInvokeOptions();
        options.setProvider(req.getProvider());
        options.setVersion(req.getVersion());
        options.setPluginDownloadUrl(req.getPlugindownloadurl());
        for (const cb of this.invokeTransforms) {
            const request = new resproto.TransformInvokeRequest();
            request.setToken(req.getTok());
            request.setArgs(args);
            request.setOptions(options);
            const response = resproto.TransformInvokeResponse.deserializeBinary(
                await this.callback(cb, request.serializeBinary()),
            );
            args = response.getArgs() ?? args;
            options = response.getOptions() ?? options;
        }
        req.setArgs(args);
        req.setProvider(options.getProvider());
        req.setVersion(options.getVersion());
        req.setPlugindownloadurl(options.getPluginDownloadUrl());
    }

    /** Calls a program's callback (a transform) through the SDK's callback server, as the engine does. */
    private async callback(cb: Callback, request: Uint8Array): Promise<Uint8Array> {
        const invoke = new callbackPb.CallbackInvokeRequest();
        invoke.setToken(cb.token);
        invoke.setRequest(request);
        const resp = await new Promise<callbackPb.CallbackInvokeResponse>((resolve, reject) =>
            this.client(cb.target).invoke(invoke, (err, res) =>
                err ? reject(new Error(`invoke transform: ${err.details || err.message}`)) : resolve(res),
            ),
        );
        return resp.getResponse_asU8();
    }

    private client(target: string): callbackGrpc.CallbacksClient {
        let c = this.clients.get(target);
        if (!c) {
            c = new callbackGrpc.CallbacksClient(target, grpc.credentials.createInsecure());
            this.clients.set(target, c);
        }
        return c;
    }

    close(): void {
        for (const c of this.clients.values()) c.close();
    }
}

/** The options the engine passes to transforms, from a registration request. */
export function optionsFromRequest(req: resproto.RegisterResourceRequest): resproto.TransformResourceOptions {
    const o = new resproto.TransformResourceOptions();
    o.setDependsOnList(req.getDependenciesList());
    const protect = req.getProtect();
    if (protect !== undefined) o.setProtect(protect);
    o.setIgnoreChangesList(req.getIgnorechangesList());
    o.setReplaceOnChangesList(req.getReplaceonchangesList());
    o.setVersion(req.getVersion());
    o.setAliasesList(req.getAliasesList());
    o.setProvider(req.getProvider());
    const providers = o.getProvidersMap();
    for (const [k, v] of req.getProvidersMap().entries()) providers.set(k, v);
    o.setHideDiffList(req.getHidediffsList());
    if (req.getCustomtimeouts()) o.setCustomTimeouts(req.getCustomtimeouts());
    o.setPluginDownloadUrl(req.getPlugindownloadurl());
    const retain = req.getRetainondelete();
    if (retain !== undefined) o.setRetainOnDelete(retain);
    o.setDeletedWith(req.getDeletedwith());
    if (req.getDeletebeforereplacedefined()) o.setDeleteBeforeReplace(req.getDeletebeforereplace());
    o.setAdditionalSecretOutputsList(req.getAdditionalsecretoutputsList());
    return o;
}

/** Writes transformed options back onto the request, as the engine uses them after transforms. */
export function applyOptions(req: resproto.RegisterResourceRequest, o: resproto.TransformResourceOptions): void {
    req.setDependenciesList(o.getDependsOnList());
    const protect = o.getProtect();
    if (o.hasProtect() && protect !== undefined) req.setProtect(protect);
    req.setIgnorechangesList(o.getIgnoreChangesList());
    req.setReplaceonchangesList(o.getReplaceOnChangesList());
    req.setVersion(o.getVersion());
    req.setAliasesList(o.getAliasesList());
    req.setProvider(o.getProvider());
    req.setHidediffsList(o.getHideDiffList());
    req.setPlugindownloadurl(o.getPluginDownloadUrl());
    req.setDeletedwith(o.getDeletedWith());
    req.setAdditionalsecretoutputsList(o.getAdditionalSecretOutputsList());
}
