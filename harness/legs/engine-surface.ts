/**
 * The mock leg's contract with the Pulumi SDK, typed in one place: the SDK's generated wire modules (typed by the
 * declarations the SDK ships), and the internals the mock leg patches or calls that the SDK does not declare (its
 * MockMonitor, the runtime's store and settings, tsutils). The mock leg re-creates part of the engine around them
 * (./mock-engine.ts); the real leg, a real `pulumi preview`, is the oracle it is compared with.
 *
 * COMPARED is the pair of versions on which the two legs were last compared (`npm run harness -- --leg both`,
 * every fixture matching in both): test/unit/harness/legs/engine-surface.spec.ts fails when the installed
 * @pulumi/pulumi or the toolchain's pinned CLI (toolchain/install.sh) moves without this record moving with it.
 */
import * as grpc from "@grpc/grpc-js";
import * as emptyproto from "google-protobuf/google/protobuf/empty_pb";
import * as structPb from "google-protobuf/google/protobuf/struct_pb";
import * as callbackGrpc from "@pulumi/pulumi/proto/callback_grpc_pb";
import * as callbackPb from "@pulumi/pulumi/proto/callback_pb";
import * as enginerpc from "@pulumi/pulumi/proto/engine_grpc_pb";
import * as engineproto from "@pulumi/pulumi/proto/engine_pb";
import * as provproto from "@pulumi/pulumi/proto/provider_pb";
import * as resrpc from "@pulumi/pulumi/proto/resource_grpc_pb";
import * as resproto from "@pulumi/pulumi/proto/resource_pb";

export { callbackGrpc, callbackPb, emptyproto, enginerpc, engineproto, grpc, provproto, resproto, resrpc, structPb };

/** The versions the mock and real legs were last compared on: the SDK the mock leg patches, the CLI the real leg runs. */
export const COMPARED = { sdk: "3.248.0", cli: "v3.248.0" } as const;

/** A plain object as a wire Struct (its values are what JSON holds: the props of a registration, an invoke's args). */
export function toStruct(value: Record<string, unknown>): structPb.Struct {
    return structPb.Struct.fromJavaScript(value as Record<string, structPb.JavaScriptValue>);
}

/** An error as the monitor hands it back: the SDK reports its gRPC `details`. */
export type MonitorError = Error & { details?: string; code?: number };

/** How a monitor method answers: an error, or its response (a wire message, or a plain object the SDK reads). */
export type MonitorCallback = (err: MonitorError | null, res?: unknown) => void;

/** One method of the monitor, as the SDK calls it (a request message and a callback). */
export type MonitorMethod<Req = unknown> = (req: Req, callback: MonitorCallback) => void;

/**
 * The SDK's MockMonitor (@pulumi/pulumi runtime/mocks.ts, reached through runtime/settings' getMonitor()): the
 * methods of the ResourceMonitor service the SDK calls, which the mock engine wraps or replaces, and `newUrn`.
 */
export interface MockMonitor {
    newUrn(parent: string, type: string, name: string): string;
    registerResource: MonitorMethod<resproto.RegisterResourceRequest>;
    readResource: MonitorMethod<resproto.ReadResourceRequest>;
    invoke: MonitorMethod<resproto.ResourceInvokeRequest>;
    supportsFeature: MonitorMethod<resproto.SupportsFeatureRequest>;
    call?: MonitorMethod<resproto.ResourceCallRequest>;
    registerResourceOutputs?: MonitorMethod<resproto.RegisterResourceOutputsRequest>;
    registerStackTransform?: MonitorMethod<callbackPb.Callback>;
    registerStackInvokeTransform?: MonitorMethod<callbackPb.Callback>;
}

/** A monitor method by the name the ResourceMonitor service gives it (gRPC serving: ./mock-go.ts). */
export function monitorMethod(monitor: MockMonitor, name: string): MonitorMethod | undefined {
    const method = (monitor as unknown as Record<string, unknown>)[name];
    return typeof method === "function" ? (method.bind(monitor) as MonitorMethod) : undefined;
}

/** Replaces a monitor method by name (the mock engine's wrappers). */
export function setMonitorMethod(monitor: MockMonitor, name: string, method: MonitorMethod): void {
    (monitor as unknown as Record<string, unknown>)[name] = method;
}

/**
 * The methods of a generated gRPC service definition, with the response class each answers with (the generated
 * JavaScript sets `responseType`; the SDK's declarations leave it out).
 */
export function serviceMethods(
    service: grpc.ServiceDefinition,
): [string, grpc.MethodDefinition<unknown, unknown> & { responseType?: new () => unknown }][] {
    return Object.entries(service) as [
        string,
        grpc.MethodDefinition<unknown, unknown> & { responseType?: new () => unknown },
    ][];
}

/** runtime/settings: the monitor the mocks installed, and the wait for a program's outstanding RPCs. */
export interface RuntimeSettings {
    getMonitor(): MockMonitor;
    waitForRPCs(): Promise<void>;
}

/** runtime/state: the store's feature flags (the engine's `supportsFeature`), and a program's own state. */
export interface RuntimeState {
    getStore(): { supportsTransforms: boolean; supportsInvokeTransforms: boolean };
    withLocalStorage<T>(callback: () => Promise<T>): Promise<T>;
}

/** tsutils: how the Node language host finds TypeScript and a program's compiler options. */
export interface TsUtils {
    typeScriptRequireStrings(): { tsnodeRequire: string; typescriptRequire: string };
    loadTypeScriptCompilerOptions(file: string): Record<string, unknown>;
}

/** The SDK's runtime/settings, as the mock leg uses it. */
export function runtimeSettings(): RuntimeSettings {
    return require("@pulumi/pulumi/runtime/settings") as RuntimeSettings;
}

/** The SDK's runtime/state, as the mock leg uses it. */
export function runtimeState(): RuntimeState {
    return require("@pulumi/pulumi/runtime/state") as RuntimeState;
}

/** The SDK's tsutils, as the mock leg uses it. */
export function tsUtils(): TsUtils {
    return require("@pulumi/pulumi/tsutils") as TsUtils;
}
