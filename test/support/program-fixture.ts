/**
 * A throwaway Node program fixture for mock-leg specs: a folder under `root` with its Pulumi.yaml, its index.ts
 * (and a tsconfig.json when given), the repository's node_modules linked in, and no expected violations.
 */
import * as fs from "fs";
import * as path from "path";
import { Fixture } from "../../harness/expect";
import { REPO_ROOT } from "../../support/paths";

export function programFixture(root: string, name: string, indexTs: string, tsconfig?: string): Fixture {
    const dir = path.join(root, name);
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, "Pulumi.yaml"), `name: ${name}\nruntime: nodejs\n`);
    fs.writeFileSync(path.join(dir, "index.ts"), indexTs);
    if (tsconfig !== undefined) fs.writeFileSync(path.join(dir, "tsconfig.json"), tsconfig);
    fs.symlinkSync(path.join(REPO_ROOT, "node_modules"), path.join(dir, "node_modules"));
    return {
        name,
        dir,
        project: name,
        expect: { description: name, stack: "dev", config: {}, violations: [] } as unknown as Fixture["expect"],
    };
}
