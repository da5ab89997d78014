/**
 * Test certificates for the harness's API server and the webhook it calls: a throwaway CA and leaf
 * certificates it signs, made with the system's `openssl` (harness-only; the product reads PEM files).
 */
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as path from "path";

export interface CertPair {
    cert: string;
    key: string;
}

export interface Ca extends CertPair {
    dir: string;
}

function openssl(args: string[], cwd: string): void {
    execFileSync("openssl", args, { cwd, stdio: ["ignore", "ignore", "pipe"], timeout: 60_000 });
}

/** A self-signed CA (EC P-256, one day) in `dir`. */
export function makeCa(dir: string, name = "pko-guard-test-ca"): Ca {
    fs.mkdirSync(dir, { recursive: true });
    const key = path.join(dir, `${name}.key`);
    const cert = path.join(dir, `${name}.crt`);
    openssl(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", key], dir);
    openssl(["req", "-x509", "-new", "-key", key, "-days", "1", "-subj", `/CN=${name}`, "-out", cert], dir);
    return { dir, cert, key };
}

/** A serving certificate signed by `ca` for the given DNS names and IP addresses. */
export function issueCert(ca: Ca, name: string, hosts: { dns?: string[]; ips?: string[] }, days = 1): CertPair {
    const key = path.join(ca.dir, `${name}.key`);
    const csr = path.join(ca.dir, `${name}.csr`);
    const cert = path.join(ca.dir, `${name}.crt`);
    const ext = path.join(ca.dir, `${name}.ext`);
    const san = [...(hosts.dns ?? []).map((d) => `DNS:${d}`), ...(hosts.ips ?? []).map((i) => `IP:${i}`)].join(",");
    fs.writeFileSync(
        ext,
        `subjectAltName=${san}\nextendedKeyUsage=serverAuth,clientAuth\nkeyUsage=digitalSignature,keyEncipherment\n`,
    );
    openssl(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", key], ca.dir);
    openssl(["req", "-new", "-key", key, "-subj", `/CN=${name}`, "-out", csr], ca.dir);
    openssl(
        [
            "x509",
            "-req",
            "-in",
            csr,
            "-CA",
            ca.cert,
            "-CAkey",
            ca.key,
            "-CAcreateserial",
            "-days",
            String(days),
            "-extfile",
            ext,
            "-out",
            cert,
        ],
        ca.dir,
    );
    return { cert, key };
}
