/**
 * Child process of the mock leg: runs one fixture program under Pulumi runtime mocks in preview mode
 * and writes every resource registration, in the engine's wire form, to a JSON file.
 *
 *   node mock-program.js <program-dir> <project> <stack> <out.json>
 *
 * Configuration for the program comes from PULUMI_CONFIG / PULUMI_CONFIG_SECRET_KEYS (as the language
 * host passes it). The raw protobuf request is captured (not the mocks' deserialized inputs), so secret
 * and unknown sentinels reach the analyzer exactly as the engine would forward them. Exit code 0 with
 * the file written on success; on failure one line on stderr and exit code 3.
 */
import * as fs from "fs";
import * as path from "path";

interface Registration {
    type: string;
    name: string;
    urn: string;
    custom: boolean;
    parent?: string;
    provider?: string;
    properties: unknown;
    dependencies: string[];
}

function fail(message: string): never {
    // One line: compiler and runtime errors span several lines; keep their gist, bounded.
    const line = message.replace(/\u001b\[[0-9;]*m/g, "").replace(/\s+/g, " ").trim().slice(0, 400);
    process.stderr.write(`${line}\n`);
    process.exit(3);
}

/** The engine's URN: the parent's type chain is kept, except for the root stack resource. */
function urnOf(stack: string, project: string, type: string, name: string, parent: string | undefined): string {
    let qualified = type;
    if (parent) {
        const parentQualified = parent.split("::")[2] ?? "";
        if (parentQualified && !parentQualified.endsWith("pulumi:pulumi:Stack")) {
            qualified = `${parentQualified}$${type}`;
        }
    }
    return `urn:pulumi:${stack}::${project}::${qualified}::${name}`;
}

async function main(): Promise<void> {
    const [programDir, project, stack, outFile] = process.argv.slice(2);
    if (!programDir || !project || !stack || !outFile) {
        fail("usage: mock-program <program-dir> <project> <stack> <out.json>");
    }
    const dir = path.resolve(programDir);
    // Resolve the fixture's own imports from the fixture folder.
    process.chdir(dir);
    const pulumi = await import("@pulumi/pulumi");
    const settings = await import("@pulumi/pulumi/runtime/settings");
    const registrations: Registration[] = [];

    await pulumi.runtime.setMocks(
        {
            newResource: (args: { type: string; name: string; inputs: Record<string, unknown> }) => {
                // Like a provider's preview of a create: outputs are the inputs; the id is unknown.
                return { id: undefined as unknown as string, state: args.inputs };
            },
            call: (args: { token: string }) => {
                throw new Error(`function ${args.token} is not mocked`);
            },
        },
        project,
        stack,
        true,
    );
    const monitor = (settings as unknown as { getMonitor(): Record<string, Function> }).getMonitor();
    const register = monitor.registerResource.bind(monitor);
    monitor.registerResource = (req: any, callback: Function) => {
        try {
            const parent: string = req.getParent() || undefined;
            const type: string = req.getType();
            const name: string = req.getName();
            const object = req.getObject();
            registrations.push({
                type,
                name,
                urn: urnOf(stack, project, type, name, parent),
                custom: req.getCustom(),
                parent,
                provider: req.getProvider() || undefined,
                properties: object ? object.toJavaScript() : {},
                dependencies: req.getDependenciesList(),
            });
        } catch (e) {
            fail(`could not capture a resource registration: ${(e as Error).message}`);
        }
        return register(req, callback);
    };

    let programError: unknown;
    process.on("unhandledRejection", (e) => {
        programError = programError ?? e;
    });
    try {
        const entry = require.resolve(dir);
        require(entry);
    } catch (e) {
        programError = e;
    }
    await (settings as unknown as { waitForRPCs(): Promise<void> }).waitForRPCs();
    // Let late applies settle, then drain again.
    await new Promise((r) => setImmediate(r));
    await (settings as unknown as { waitForRPCs(): Promise<void> }).waitForRPCs();
    if (programError !== undefined) {
        const msg = programError instanceof Error ? programError.message : String(programError);
        fail(`program failed: ${msg}`);
    }
    fs.writeFileSync(outFile, JSON.stringify(registrations));
    process.exit(0);
}

main().catch((e) => fail(`mock run failed: ${e instanceof Error ? e.message : String(e)}`));
