/** Credentials by value: each documented shape is recognised, its near misses are not, and nothing echoes the value. */
import * as assert from "assert";
import { credentialShape, findCredentialShapes } from "../../../../policies/model/credential-shapes";

// Built at run time so that no credential-shaped literal sits in the repository.
const b64url = (n: number, seed = "a1B2c3D4e5F6g7H8") => seed.repeat(Math.ceil(n / seed.length)).slice(0, n);
const pw = ["hunter", "2", "Secret"].join("");
const AWS_ID = ["AKIA", "IOSFODNN7EXAMPLE"].join("");
const PEM = ["-----BEGIN ", "RSA PRIVATE KEY-----\nMIIB\n-----END ", "RSA PRIVATE KEY-----"].join("");
const OPENSSH = ["-----BEGIN ", "OPENSSH PRIVATE KEY-----\nb3Bl\n"].join("");
const JWT = `eyJ${b64url(20)}.eyJ${b64url(40)}.${b64url(43)}`;
const GCP = JSON.stringify({
    type: "service_account",
    project_id: "p",
    private_key_id: "k",
    private_key: "x",
    client_email: "a@p.iam.gserviceaccount.com",
});

describe("credential shapes", () => {
    it("recognises each documented shape, in the value or inside it", () => {
        const cases: [string, string][] = [
            [`postgres://app:${pw}@db.internal:5432/app`, "a URL with a password in its user-info"],
            [`DATABASE_URL=mysql://root:${pw}@10.0.0.1/db and more`, "a URL with a password in its user-info"],
            [`https://:${pw}@git.example.com/org/repo.git`, "a URL with a password in its user-info"],
            [`https://hooks.example.com/notify?channel=ops&token=${pw}`, "a URL with a credential in its query"],
            [`https://bucket.s3.amazonaws.com/k?X-Amz-Signature=${b64url(64)}`, "a URL with a credential in its query"],
            [PEM, "a PEM private key"],
            [OPENSSH, "a PEM private key"],
            [`aws_access_key_id = ${AWS_ID}`, "an AWS access key id"],
            [GCP, "a GCP service-account key"],
            [`Bearer ${JWT}`, "a JWT"],
        ];
        for (const [value, what] of cases) assert.strictEqual(credentialShape(value), what, value.slice(0, 40));
        const nested = findCredentialShapes({
            db: { urls: ["https://ok.example.com", `postgres://u:${pw}@h/d`] },
            gcp: JSON.parse(GCP),
        });
        assert.deepStrictEqual(nested.found, [
            { at: ".db.urls[1]", what: "a URL with a password in its user-info" },
            { at: ".gcp", what: "a GCP service-account key" },
        ]);
    });

    it("does not take ordinary values for credentials", () => {
        for (const value of [
            "ssh://git@github.com/acme/app.git",
            "git@github.com:acme/app.git",
            "https://github.com/acme/app",
            "https://user@example.com/path",
            "https://user:@example.com/path",
            "https://example.com:8443/a@b",
            "https://example.com/search?q=token&page=2",
            "https://example.com/cb?token=",
            "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
            "-----BEGIN PUBLIC KEY-----",
            `{"type": "authorized_user"}`,
            "eyJhbGciOi",
            "arn:aws:iam::123456789012:role/deployer",
            "us-east-1",
        ]) {
            assert.strictEqual(credentialShape(value), undefined, value);
        }
    });

    it("never returns any part of the value, stays bounded on hostile input and says when it stopped early", () => {
        const found = findCredentialShapes({ a: `postgres://u:${pw}@h/d` }).found;
        assert.ok(!JSON.stringify(found).includes(pw));
        // Quadratic traps for backtracking patterns: they must finish (mocha's timeout is generous; no timing assertions).
        for (const hostile of [
            "a://".repeat(200000),
            "eyJ".repeat(300000),
            "ghp_".repeat(200000),
            "https://a?".repeat(100000),
            "x".repeat(1 << 21),
        ]) {
            assert.strictEqual(credentialShape(hostile), undefined);
        }
        let deep: unknown = "leaf";
        for (let i = 0; i < 200; i++) deep = { d: deep };
        assert.strictEqual(findCredentialShapes(deep).truncated, true);
    });
});
