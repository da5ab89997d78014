import * as assert from "assert";
import {
    fetchPolicy,
    forbiddenAddress,
    hostAllowed,
    parseAllowHost,
    refusedUrl,
    shownUrl,
    sshRemote,
    withinDeadline,
} from "../../../../gitops/fetch/network-policy";
import { isFloating } from "../../../../gitops/fetch/fetch";
import { chartRequest, gitRequest } from "../../../../gitops/argocd/remote-sources";
import { remoteRequest } from "../../../../gitops/render/kustomize-remote";
import { BadInputError } from "../../../../support/errors";

describe("gitops/fetch/network-policy", () => {
    it("refuses every special-purpose address by default, naming why", () => {
        const cases: [string, RegExp][] = [
            ["169.254.169.254", /link-local address \(cloud metadata\)/],
            ["fe80::1", /link-local/],
            ["127.0.0.1", /loopback/],
            ["127.255.0.9", /loopback/],
            ["::1", /loopback/],
            ["10.1.2.3", /private/],
            ["172.31.255.255", /private/],
            ["192.168.0.1", /private/],
            ["fd00:ec2::254", /private \(unique local\) address/],
            ["100.64.0.1", /shared/],
            ["0.0.0.0", /unspecified/],
            ["::", /unspecified/],
            ["224.0.0.1", /multicast/],
            ["255.255.255.255", /reserved/],
            // An IPv4 address inside IPv6 is judged as the IPv4 address it carries.
            ["::ffff:169.254.169.254", /link-local/],
            ["::ffff:a9fe:a9fe", /link-local/],
            ["::ffff:127.0.0.1", /loopback/],
            ["64:ff9b::10.0.0.1", /private/],
        ];
        for (const [ip, why] of cases) assert.match(forbiddenAddress(ip) ?? "(allowed)", why, ip);
    });

    it("lets public addresses through", () => {
        for (const ip of ["140.82.112.3", "8.8.8.8", "2606:4700::6810:84e5", "172.32.0.1", "100.128.0.1"])
            assert.strictEqual(forbiddenAddress(ip), undefined, ip);
    });

    it("reads --allow-host as HOST, HOST:PORT or [IPv6]:PORT, and refuses anything else", () => {
        assert.deepStrictEqual(parseAllowHost("Charts.Example.com"), { host: "charts.example.com" });
        assert.deepStrictEqual(parseAllowHost("127.0.0.1:8080"), { host: "127.0.0.1", port: 8080 });
        assert.deepStrictEqual(parseAllowHost("[::1]:5000"), { host: "::1", port: 5000 });
        for (const bad of ["", "http://x", "x:0", "x:99999", "a b", "x/y", "user@x"])
            assert.throws(() => parseAllowHost(bad), BadInputError, bad);
    });

    it("matches an allowed host by name and, when given, port", () => {
        const p = fetchPolicy({ allowHosts: ["127.0.0.1:8080", "git.internal"], cacheDir: "/nowhere" });
        assert.ok(hostAllowed(p, "127.0.0.1", 8080));
        assert.ok(!hostAllowed(p, "127.0.0.1", 8081));
        assert.ok(hostAllowed(p, "GIT.internal", 443));
        assert.ok(!hostAllowed(p, "other.internal", 443));
    });

    it("refuses plain http, other schemes, credentials in URLs and file:// outside the repository", () => {
        const p = fetchPolicy({ allowHosts: ["127.0.0.1:8080"], cacheDir: "/nowhere", repoRoot: "/repo" });
        assert.strictEqual(refusedUrl(p, "https://charts.example.com/"), undefined);
        assert.match(refusedUrl(p, "http://charts.example.com/")!, /plain http/);
        assert.strictEqual(refusedUrl(p, "http://127.0.0.1:8080/"), undefined);
        assert.match(refusedUrl(p, "http://127.0.0.1:8081/")!, /plain http/);
        assert.match(refusedUrl(p, "ftp://x/")!, /scheme/);
        assert.match(refusedUrl(p, "https://user:secret@x/")!, /credentials/);
        assert.match(refusedUrl(p, "file:///etc/passwd")!, /outside the repository/);
        assert.match(refusedUrl(p, "file:///repo/../etc/passwd")!, /outside the repository/);
        assert.strictEqual(refusedUrl(p, "file:///repo/charts/a"), undefined);
        // ssh remotes, in every form git reads, are fetched (their connection goes through the policy's relay);
        // a password, or a host that is no plain name or address (handed to ssh's ProxyCommand), is refused.
        for (const ssh of [
            "git@github.com:org/repo.git",
            "github.com:org/repo",
            "ssh://git@github.com/org/repo.git",
            "ssh://git@github.com:2222/org/repo.git",
            "git+ssh://github.com/org/repo",
        ])
            assert.strictEqual(refusedUrl(p, ssh), undefined, ssh);
        assert.match(refusedUrl(p, "ssh://git:pw@github.com/org/repo")!, /credentials/);
        assert.match(refusedUrl(p, "git@-oProxyCommand=touch_x:org/repo")!, /not a plain name or address/);
        assert.match(refusedUrl(p, "git@a;b:org/repo")!, /not a plain name or address/);
        assert.match(refusedUrl(p, "ssh://git@$(id)/org/repo")!, /ssh remote/);
        assert.deepStrictEqual(sshRemote("git@GitHub.com:org/repo.git"), {
            host: "github.com",
            port: 22,
            password: false,
        });
        assert.deepStrictEqual(sshRemote("ssh://git@h.example:2222/r"), {
            host: "h.example",
            port: 2222,
            password: false,
        });
        assert.strictEqual(refusedUrl(p, "https://github.com:443/org/repo"), undefined);
    });

    it("bounds a fetch by what is left of the run's --timeout, and refuses one past it", () => {
        const p = fetchPolicy({ cacheDir: "/nowhere" });
        assert.strictEqual(withinDeadline(p, Date.now() + 10 * p.limits.timeoutMs), p);
        const short = withinDeadline(p, Date.now() + 5_000);
        assert.ok(short.limits.timeoutMs <= 5_000 && short.limits.timeoutMs > 0);
        assert.strictEqual(p.limits.timeoutMs, 120_000, "the run's policy is not changed");
        assert.throws(() => withinDeadline(p, Date.now() - 1), /fetching ran out of time \(--timeout\)/);
    });

    it("never shows user information or a query", () => {
        assert.strictEqual(shownUrl("https://u:tok@h.example/p?token=abc#x"), "https://h.example/p");
        assert.strictEqual(shownUrl("not a url https://u:tok@h"), "not a url https://u:tok@h");
        assert.strictEqual(shownUrl("tok@github.com:org/repo.git"), "github.com:org/repo.git");
    });

    it("tells a floating reference from a pinned one", () => {
        assert.ok(isFloating({ kind: "git", url: "u", ref: "main" }));
        assert.ok(isFloating({ kind: "git", url: "u", ref: "v1.2.3" }));
        assert.ok(!isFloating({ kind: "git", url: "u", ref: "a".repeat(40) }));
        assert.ok(isFloating({ kind: "helm", url: "u", chart: "c", version: "^1.2.0" }));
        assert.ok(isFloating({ kind: "helm", url: "u", chart: "c", version: "" }));
        assert.ok(!isFloating({ kind: "helm", url: "u", chart: "c", version: "1.2.3" }));
        assert.ok(!isFloating({ kind: "oci", url: "u", version: "v1.2.3-rc.1" }));
    });
});

describe("gitops/argocd/remote-sources requests", () => {
    it("takes a chart source over HTTP(S) for a Helm repository and anything else for an OCI registry", () => {
        assert.deepStrictEqual(
            chartRequest({ repoURL: "https://charts.example.com", chart: "ledger", targetRevision: "1.2.*" }),
            { kind: "helm", url: "https://charts.example.com", chart: "ledger", version: "1.2.*" },
        );
        assert.deepStrictEqual(
            chartRequest({ repoURL: "registry.example.com/charts", chart: "c", targetRevision: "*" }),
            {
                kind: "oci",
                url: "oci://registry.example.com/charts/c",
                version: "",
            },
        );
        assert.deepStrictEqual(chartRequest({ repoURL: "oci://r.example.com:5000/x/", chart: "c" }), {
            kind: "oci",
            url: "oci://r.example.com:5000/x/c",
            version: "",
        });
        assert.deepStrictEqual(gitRequest({ repoURL: "https://git.example.com/a.git" }), {
            kind: "git",
            url: "https://git.example.com/a.git",
            ref: "HEAD",
        });
    });
});

describe("gitops/render/kustomize-remote remoteRequest", () => {
    it("reads kustomize's remote forms as its repospec does", () => {
        const cases: [string, unknown][] = [
            [
                "https://github.com/org/repo//deploy/base?ref=v1.0.0",
                { req: { kind: "git", url: "https://github.com/org/repo", ref: "v1.0.0" }, subdir: "deploy/base" },
            ],
            [
                "github.com/org/repo/deploy/base?ref=main",
                { req: { kind: "git", url: "https://github.com/org/repo", ref: "main" }, subdir: "deploy/base" },
            ],
            [
                "git::https://git.example.com/team/apps.git/base?version=abc",
                { req: { kind: "git", url: "https://git.example.com/team/apps.git", ref: "abc" }, subdir: "base" },
            ],
            [
                "https://raw.example.com/org/repo/main/deploy.yaml",
                { req: { kind: "file", url: "https://raw.example.com/org/repo/main/deploy.yaml" }, subdir: "" },
            ],
            // ssh remotes, fetched over ssh: the scp form as written, ssh:// as a URL.
            [
                "git@github.com:org/repo.git//base?ref=v1",
                { req: { kind: "git", url: "git@github.com:org/repo.git", ref: "v1" }, subdir: "base" },
            ],
            [
                "git@git.example.com:team/apps//overlays/prod",
                { req: { kind: "git", url: "git@git.example.com:team/apps", ref: "HEAD" }, subdir: "overlays/prod" },
            ],
            [
                "ssh://git@git.example.com:2222/team/apps.git/base?ref=main",
                {
                    req: { kind: "git", url: "ssh://git@git.example.com:2222/team/apps.git", ref: "main" },
                    subdir: "base",
                },
            ],
        ];
        for (const [entry, want] of cases) assert.deepStrictEqual(remoteRequest(entry), want, entry);
        assert.ok("refused" in remoteRequest("git://github.com/org/repo//base"));
    });
});
