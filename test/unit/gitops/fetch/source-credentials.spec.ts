/**
 * Which token service a registry's credential may follow (realmMayReceive): the registry's own host and port, Docker
 * Hub's token service for Hub, or a sibling of the registry's parent domain on https's default port; never an
 * address, plain http, another port, or a host outside the parent domain.
 */
import * as assert from "assert";
import { realmMayReceive } from "../../../../gitops/fetch/source-credentials";

describe("gitops/fetch/source-credentials realmMayReceive", () => {
    const may = (host: string, port: number, realm: string) => realmMayReceive(host, port, new URL(realm));

    it("lets the credential follow a token service Docker and Helm would trust", () => {
        assert.strictEqual(may("registry.example.com", 443, "https://registry.example.com/token"), true);
        assert.strictEqual(may("registry.example.com", 5000, "https://registry.example.com:5000/token"), true);
        assert.strictEqual(may("registry.example.com", 443, "https://auth.example.com/token"), true);
        assert.strictEqual(may("registry.gitlab.com", 443, "https://gitlab.com/jwt/auth"), true);
        assert.strictEqual(may("registry-1.docker.io", 443, "https://auth.docker.io/token"), true);
    });

    it("keeps it from any other token service", () => {
        assert.strictEqual(may("registry.example.com", 443, "http://registry.example.com/token"), false);
        assert.strictEqual(may("registry.example.com", 443, "https://registry.example.com:8443/token"), false);
        assert.strictEqual(may("registry.example.com", 443, "https://auth.example.com:8443/token"), false);
        assert.strictEqual(may("registry.example.com", 443, "https://auth.example.org/token"), false);
        assert.strictEqual(may("registry.example.com", 443, "https://example.com.evil.test/token"), false);
        assert.strictEqual(may("ghcr.io", 443, "https://evil.io/token"), false);
        assert.strictEqual(may("registry-1.docker.io", 443, "https://docker.io.evil.test/token"), false);
        assert.strictEqual(may("127.0.0.1", 5000, "https://127.0.0.2/token"), false);
        assert.strictEqual(may("10.0.0.5", 443, "https://10.0.0.6/token"), false);
    });
});
