/**
 * The deploy leg (end to end): preview with the pack; a fixture with mandatory violations stops there
 * (skipped: the gate stops it). Otherwise `pulumi up` creates the objects in the run's test API server
 * (harness/apiserver.ts), so the server's own validation and defaulting decide what is accepted; then the leg
 * checks the live objects, that no secret is in plaintext, and that `pulumi destroy` leaves nothing behind.
 */
import * as fs from "fs";
import * as path from "path";
import { Row } from "../../evaluation/rows";
import { StackRef, analyzeState, parseEvents, previewWithPack } from "../../engine/pulumi-cli";
import { StateObject, destroy, stateObjects, stateResourceCount, up } from "../throwaway-stacks";
import { ApiServer } from "../apiserver";
import { ARGOCD_VERSION } from "../argocd-finalizers";
import { withTempDir } from "../../support/process";
import { Toolchain } from "../../support/toolchain";
import { Fixture } from "../expect";
import { ManifestValidator, schemaVersions } from "../schema-validation";
import { LegCheck, LegResult, legResult } from "./result";
import { fixturePack, prepareFixtureStack } from "./real";

export interface DeployOptions {
    toolchain: Toolchain;
    validator: ManifestValidator;
    /** The run's API server (one per run: start-up costs seconds). */
    cluster: ApiServer;
    timeoutMs: number;
    descriptions: Map<string, string>;
}

/** Which schema a custom resource was checked against (the Kubernetes kinds' is the pinned release's OpenAPI). */
function schemaNote(kind: string): string | undefined {
    if (/^(auto\.)?pulumi\.com\//.test(kind)) return `against the PKO ${schemaVersions().pko} CRD schema`;
    if (kind.startsWith("argoproj.io/")) return `against Argo CD ${ARGOCD_VERSION}'s Application CRD`;
    return undefined;
}

/**
 * The program's objects (as sent, from the state) against their schemas; kinds without one are listed as
 * not validated. The API server already rejected anything invalid; what this adds is undeclared fields,
 * which the server prunes with only a warning (its default field validation), so a misspelt or misplaced
 * field would otherwise pass unnoticed.
 */
export function manifestChecks(validator: ManifestValidator, objects: StateObject[]): LegCheck[] {
    const manifests = objects.map((o) => validator.validate(`${o.kind}/${o.name}`, o.inputs));
    const checks: LegCheck[] = [];
    const unvalidated = [...new Set(manifests.filter((m) => m.status === "unvalidated").map((m) => m.kind))];
    if (unvalidated.length > 0) {
        checks.push({
            check: "schema",
            target: unvalidated.join(", "),
            outcome: "skipped",
            expected: 0,
            got: 0,
            note: "no schema for these kinds: not validated",
        });
    }
    for (const m of manifests) {
        if (m.status === "unvalidated") continue;
        checks.push({
            check: `schema ${m.kind}`,
            target: m.name,
            outcome: m.status === "valid" ? "pass" : "fail",
            expected: 0,
            got: m.errors.length,
            note: m.status !== "valid" ? `${m.file}: ${m.errors.slice(0, 3).join("; ")}` : schemaNote(m.kind),
        });
    }
    return checks;
}

/**
 * Secret config values must be encrypted in the state and in the stack's config file: each value is
 * looked for as written and as JSON escapes it.
 */
export function plaintextSecretChecks(fixture: Fixture, stateDir: string, programDir: string): LegCheck[] {
    const secrets = Object.values(fixture.expect.config)
        .filter((c) => c.secret && c.value.length > 0)
        .flatMap((c) => [c.value, JSON.stringify(c.value).slice(1, -1)]);
    const files = [
        ...fs
            .readdirSync(stateDir, { recursive: true, withFileTypes: true })
            .filter((d) => d.isFile())
            .map((d) => path.join(d.parentPath, d.name)),
        ...fs
            .readdirSync(programDir)
            .filter((f) => /^Pulumi\..+\.ya?ml$/.test(f))
            .map((f) => path.join(programDir, f)),
    ];
    return files
        .filter((file) => {
            const text = fs.readFileSync(file, "latin1");
            return secrets.some((s) => text.includes(s));
        })
        .map((file) => ({
            check: "plaintext secrets",
            target: path.basename(file),
            outcome: "fail" as const,
            expected: 0,
            got: 1,
            note: "a secret config value is stored in plaintext",
        }));
}

/**
 * Each expected remediation's `set` fields on the live object the cluster holds for its resource (found by
 * `metadata.name`): the deploy leg proves the remediated object, not the program's, is what gets applied.
 */
export function remediatedObjectChecks(fixture: Fixture, objects: Record<string, unknown>[]): LegCheck[] {
    const wanted = (fixture.expect.remediations ?? []).filter((r) => r.set);
    if (wanted.length === 0) return [];
    const at = (o: unknown, dotted: string) =>
        dotted
            .split(".")
            .reduce<unknown>(
                (v, k) => (v !== null && typeof v === "object" ? (v as Record<string, unknown>)[k] : undefined),
                o,
            );
    return wanted.flatMap((r) => {
        const o = objects.find((x) => at(x, "metadata.name") === r.resource);
        return Object.entries(r.set!).map(([field, value]): LegCheck => {
            const ok = o !== undefined && JSON.stringify(at(o, field)) === JSON.stringify(value);
            return {
                check: `remediated ${field}`,
                target: r.resource,
                outcome: ok ? "pass" : "fail",
                expected: 1,
                got: ok ? 1 : 0,
                ...(ok
                    ? {}
                    : {
                          note: o
                              ? `live ${JSON.stringify(at(o, field))}, expected ${JSON.stringify(value)}`
                              : "no live object of that name",
                      }),
            };
        });
    });
}

/**
 * `pulumi policy analyze` after `up` (the audit of a deployed stack) finds the same findings as the preview
 * (policy, resource, level, message), and exits non-zero exactly when one is mandatory.
 */
export function auditCheck(previewRows: Row[], auditRows: Row[], exitCode: number | null): LegCheck {
    const key = (r: Row) => [r.policy, r.resource, r.level, r.message].join("\u0000");
    const a = previewRows.map(key).sort();
    const b = auditRows.map(key).sort();
    const same = a.length === b.length && a.every((k, i) => k === b[i]);
    const exitOk = auditRows.some((r) => r.level === "mandatory") === (exitCode !== 0);
    const onlyPreview = a.filter((k) => !b.includes(k)).map((k) => k.split("\u0000").slice(0, 2).join(" on "));
    const onlyAudit = b.filter((k) => !a.includes(k)).map((k) => k.split("\u0000").slice(0, 2).join(" on "));
    return {
        check: "audit (pulumi policy analyze)",
        target: "",
        outcome: same && exitOk ? "pass" : "fail",
        expected: previewRows.length,
        got: auditRows.length,
        ...(same && exitOk
            ? {}
            : {
                  note: !exitOk
                      ? `exit ${exitCode} does not match the findings' levels`
                      : `preview only: ${onlyPreview.join(", ") || "-"}; audit only: ${onlyAudit.join(", ") || "-"}`,
              }),
    };
}

/** kubectl's name for an object: Kind.version.group/name (core kinds: Kind/name), with its namespace. */
function kubectlRef(o: StateObject): string[] {
    const [group, version] = o.apiVersion.includes("/") ? o.apiVersion.split("/") : ["", o.apiVersion];
    return [
        group ? `${o.kind}.${version}.${group}/${o.name}` : `${o.kind}/${o.name}`,
        ...(o.namespace ? ["-n", o.namespace] : []),
    ];
}

/** The live object (absent when the cluster does not hold it), or an error when kubectl cannot tell. */
async function liveObject(
    cluster: ApiServer,
    o: StateObject,
): Promise<{ object?: Record<string, unknown>; error?: string }> {
    const r = await cluster.kubectl(["get", ...kubectlRef(o), "-o", "json"]);
    if (r.code === 0) return { object: JSON.parse(r.stdout) as Record<string, unknown> };
    if (/\(NotFound\)/.test(r.stderr)) return {};
    return { error: `kubectl get ${o.kind}/${o.name}: ${r.stderr.trim().split("\n")[0] ?? ""}`.slice(0, 400) };
}

/**
 * The namespaces the previewed objects are placed in but the program does not declare: a real cluster has
 * them already (the operator's `pulumi`, a team's namespace), so the leg creates them before `pulumi up`
 * (and deletes them after). Read from the preview's resource events (`metadata.new.inputs`).
 */
export function assumedNamespaces(previewOutput: string): string[] {
    const used = new Set<string>();
    const declared = new Set<string>();
    for (const e of parseEvents(previewOutput) as {
        resourcePreEvent?: {
            metadata?: { type?: string; new?: { inputs?: { metadata?: { name?: unknown; namespace?: unknown } } } };
        };
    }[]) {
        const m = e.resourcePreEvent?.metadata;
        const inputs = m?.new?.inputs;
        if (!m?.type?.startsWith("kubernetes:") || !inputs) continue;
        const name = inputs.metadata?.name;
        if (m.type === "kubernetes:core/v1:Namespace" && typeof name === "string") declared.add(name);
        const ns = inputs.metadata?.namespace;
        if (typeof ns === "string" && ns !== "") used.add(ns);
    }
    return [...used].filter((n) => !declared.has(n) && n !== "default").sort();
}

/** `pulumi destroy`, then the stack must hold nothing and the cluster none of its objects. */
async function destroyCheck(
    stack: StackRef,
    cluster: ApiServer,
    objects: StateObject[],
): Promise<LegCheck[] | { error: string }> {
    const destroyed = await destroy(stack);
    if (destroyed.error) return { error: destroyed.error };
    const left = await stateResourceCount(stack);
    const checks: LegCheck[] = [
        {
            check: "destroy",
            target: "",
            outcome: left === 0 ? "pass" : "fail",
            expected: 0,
            got: left ?? 0,
            note:
                left === 0
                    ? undefined
                    : left === undefined
                      ? "cannot read the stack after destroy"
                      : `${left} resource(s) left after destroy`,
        },
    ];
    for (const o of objects) {
        const live = await liveObject(cluster, o);
        if (live.error) return { error: live.error };
        const gone = live.object === undefined;
        checks.push({
            check: "deleted from the cluster",
            target: `${o.kind}/${o.name}`,
            outcome: gone ? "pass" : "fail",
            expected: 0,
            got: gone ? 0 : 1,
            ...(gone ? {} : { note: "still in the cluster after pulumi destroy" }),
        });
    }
    return checks;
}

export async function runDeployLeg(fixture: Fixture, options: DeployOptions): Promise<LegResult> {
    const result = legResult("deploy", Date.now());
    if (fixture.expect.mockOnly) return result.skipped(`mock-only: ${fixture.expect.mockOnly}`);
    return withTempDir("deploy", async (tmp) => {
        const stack = await prepareFixtureStack(
            fixture,
            options.toolchain,
            tmp,
            options.timeoutMs,
            options.cluster.kubeconfig,
        );
        if ("error" in stack) return result.error(stack.error);
        const pack = fixturePack(fixture, options.descriptions);
        const preview = await previewWithPack(stack, pack);
        if (preview.error) return result.error(preview.error);
        if (preview.rows.some((r) => r.level === "mandatory")) {
            return result.skipped("not deployed: the preview has mandatory violations (the gate stops here)");
        }
        const namespaces = assumedNamespaces(preview.output ?? "");
        for (const ns of namespaces) {
            const r = await options.cluster.kubectl(["create", "namespace", ns]);
            if (r.code !== 0 && !/AlreadyExists/.test(r.stderr))
                return result.error(`creating namespace ${ns}: ${r.stderr.trim().split("\n")[0] ?? ""}`);
        }
        const deployed = await up(stack, pack);
        if (deployed.error) return result.error(deployed.error);
        // The audit path: the pack against the deployed stack's state must find what the preview found.
        const audit = await analyzeState(stack, pack);
        if (audit.error) return result.error(audit.error);
        const objects = await stateObjects(stack);
        if (objects === undefined) return result.error("cannot read the stack's state after pulumi up");
        const created: LegCheck[] =
            objects.length === 0
                ? [
                      {
                          check: "created",
                          target: "",
                          outcome: "fail",
                          expected: 1,
                          got: 0,
                          note: "pulumi up created no objects",
                      },
                  ]
                : [];
        const live: Record<string, unknown>[] = [];
        for (const o of objects) {
            const { object: got, error } = await liveObject(options.cluster, o);
            if (error) return result.error(error);
            if (got) live.push(got);
            created.push({
                check: "created",
                target: `${o.kind}/${o.name}`,
                outcome: got ? "pass" : "fail",
                expected: 1,
                got: got ? 1 : 0,
                ...(got ? {} : { note: "not in the cluster after pulumi up" }),
            });
        }
        const checks = [
            auditCheck(preview.rows, audit.rows, audit.exitCode),
            ...created,
            ...manifestChecks(options.validator, objects),
            ...remediatedObjectChecks(fixture, live),
            ...plaintextSecretChecks(fixture, path.join(tmp, "state"), stack.cwd),
        ];
        const destroyed = await destroyCheck(stack, options.cluster, objects);
        if ("error" in destroyed) return result.error(destroyed.error);
        for (const ns of namespaces)
            await options.cluster.kubectl(["delete", "namespace", ns, "--wait=true", "--timeout=120s"]);
        return result.ran(preview.rows, [...checks, ...destroyed]);
    });
}
