/** The secret values planted in the fixtures' secret-bearing fields and secret config (canaries). */
import * as fs from "fs";
import * as path from "path";
import { REPO_ROOT } from "../../support/paths";

/** Every secret value planted in the fixtures' secret-bearing fields and config. */
export function fixtureSecrets(): string[] {
    const secrets = new Set<string>();
    for (const dir of fs.readdirSync(path.join(REPO_ROOT, "fixtures"))) {
        const index = path.join(REPO_ROOT, "fixtures", dir, "index.ts");
        const expect = path.join(REPO_ROOT, "fixtures", dir, "expect.yaml");
        // A canary may sit anywhere inside a literal (a password inside a URL, say).
        if (fs.existsSync(index))
            for (const m of fs.readFileSync(index, "utf8").matchAll(/(?:pul-|ghp_)?canary[A-Za-z0-9_-]+/g))
                secrets.add(m[0]);
        if (fs.existsSync(expect))
            for (const m of fs.readFileSync(expect, "utf8").matchAll(/value: (pul-[0-9a-z]+)/g)) secrets.add(m[1]);
    }
    return [...secrets];
}
