/**
 * `check`'s settings for one repository (cli/check.ts runs with them): the configuration file `.pko-guard.yaml` at
 * the repository root (its keys are the long options' names, in the style of `.checkov.yaml`), the command line's
 * options over it, and the defaults under both. The file is read bounded and decoded as YAML; every invalid field
 * is one line (all of them before the run stops, exit 2), and nothing of the file's text is echoed. The file is
 * never taken for a manifest (./exclude.ts). `check --print-config` shows what is in force and where each value
 * came from.
 */
import * as fs from "fs";
import * as path from "path";
import { parseDocument } from "yaml";
import { BadInputError, BadInputsError } from "../../support/errors";
import { escapeText } from "../../support/escape";
import { didYouMean } from "../../support/suggest";
import { MAX_TIMEOUT_SECONDS } from "../../support/options";
import { CONFIG_FILE, globRegExp } from "./exclude";
import { readFile } from "./files";
import { runRepoRoot } from "./load";
import { checkedRepository, unknownRepositoryNotice } from "./repository";
import { normalizeRepoUrl, shownUrl } from "../render/repo-url";
import { checkApiVersion, normalizeKubeVersion } from "../render/capabilities";
import { FetchFlags, allowHostProblem, runFetchPolicy } from "../fetch/network-policy";

/** A value in force and where it came from (`--exclude`, `.pko-guard.yaml`, `default`, `origin remote`). */
export interface Setting<T> {
    value: T;
    from: string;
}

/** The command line's options of `check` that the file can also set (undefined: not given). */
export interface CheckFlags {
    config?: string;
    repoRoot?: string;
    exclude: string[];
    repository: string[];
    kubeVersion?: string;
    apiVersions: string[];
    skipUnreadable?: boolean;
    failOnAdvisory?: boolean;
    timeout?: number;
    /** Argo CD builds kustomizations with --enable-helm (--kustomize-enable-helm). */
    kustomizeEnableHelm?: boolean;
    /** The network options (cli/check.ts). */
    fetch?: FetchFlags;
}

/** What a `check` run uses. */
export interface CheckSettings {
    repoRoot: string;
    /** The configuration file read (absolute), when there is one. */
    file?: string;
    config?: Setting<string>;
    exclude: Setting<string>[];
    repositories: Setting<string>[];
    kubeVersion?: Setting<string>;
    apiVersions: Setting<string>[];
    skipUnreadable: Setting<boolean>;
    failOnAdvisory: Setting<boolean>;
    timeout: Setting<number>;
    /** Hosts fetches may reach whatever their address (--allow-host, `allow-hosts`). */
    allowHosts: Setting<string>[];
    /** Argo CD builds kustomizations with --enable-helm (`kustomize-enable-helm`); false: as argocd-cm says. */
    kustomizeEnableHelm: Setting<boolean>;
    /** The network options given (cli/check.ts). */
    fetch: FetchFlags;
}

/** The file's fields as read (each checked), by key. */
type FileFields = {
    config?: string;
    exclude?: string[];
    repositories?: string[];
    "kube-version"?: string;
    "api-versions"?: string[];
    "skip-unreadable"?: boolean;
    "fail-on-advisory"?: boolean;
    timeout?: number;
    "allow-hosts"?: string[];
    "kustomize-enable-helm"?: boolean;
};

const KEYS = [
    "config",
    "exclude",
    "repositories",
    "kube-version",
    "api-versions",
    "skip-unreadable",
    "fail-on-advisory",
    "timeout",
    "allow-hosts",
    "kustomize-enable-helm",
];

/** Why a value is not a list of non-empty strings (or undefined when it is one). */
function notStrings(v: unknown): string | undefined {
    if (!Array.isArray(v)) return "must be a list of strings";
    const i = v.findIndex((x) => typeof x !== "string" || x.trim() === "");
    return i >= 0 ? `item ${i + 1} is not a non-empty string` : undefined;
}

/** Checks one field's value; the problem in words (never quoting the value), or undefined. */
function fieldProblem(key: string, v: unknown): string | undefined {
    switch (key) {
        case "config":
            return typeof v === "string" && v.trim() !== ""
                ? undefined
                : "must be the path of a policy pack config file";
        case "exclude": {
            const bad = notStrings(v);
            if (bad) return bad;
            const i = (v as string[]).findIndex((g) => globRegExp(g) === undefined);
            return i >= 0 ? `item ${i + 1} is not a glob` : undefined;
        }
        case "repositories": {
            const bad = notStrings(v);
            if (bad) return bad;
            const i = (v as string[]).findIndex((u) => normalizeRepoUrl(u) === undefined);
            return i >= 0 ? `item ${i + 1} is not a git repository URL (https://, ssh://, git@host:path)` : undefined;
        }
        case "kube-version":
            if (typeof v !== "string") return "must be a string (quote it: 1.30 unquoted is the number 1.3)";
            return lineOf(() => normalizeKubeVersion(v, "kube-version"));
        case "api-versions": {
            const bad = notStrings(v);
            if (bad) return bad;
            for (const a of v as string[]) {
                const problem = lineOf(() => checkApiVersion(a, "api-versions"));
                if (problem) return problem;
            }
            return undefined;
        }
        case "skip-unreadable":
        case "fail-on-advisory":
        case "kustomize-enable-helm":
            return typeof v === "boolean" ? undefined : "must be true or false";
        case "allow-hosts": {
            const bad = notStrings(v);
            if (bad) return bad;
            const i = (v as string[]).findIndex((h) => allowHostProblem(h) !== undefined);
            return i >= 0 ? `item ${i + 1} ${allowHostProblem((v as string[])[i])}` : undefined;
        }
        case "timeout":
            return typeof v === "number" && Number.isFinite(v) && v > 0 && v <= MAX_TIMEOUT_SECONDS
                ? undefined
                : `must be a number of seconds from 1 to ${MAX_TIMEOUT_SECONDS}`;
    }
    return `unknown field${didYouMean(key, KEYS)}`;
}

/** The text of what `run` throws as bad input, without the name it starts with; undefined when it does not throw. */
function lineOf(run: () => unknown): string | undefined {
    try {
        run();
        return undefined;
    } catch (e) {
        if (!(e instanceof BadInputError)) throw e;
        return e.message.replace(/^[^:]*: /, "");
    }
}

/** Reads and checks the configuration file: its fields, or bad input with one line per invalid field. */
export function readCheckConfig(file: string, shown: string): FileFields {
    const text = readFile(file, shown, false, { skipped: [] }) ?? "";
    // prettyErrors: errors carry their line and column (only those are shown, never the message, which quotes).
    const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: true });
    if (doc.errors.length > 0) {
        const at = doc.errors[0].linePos?.[0];
        throw new BadInputError(`${shown}${at ? `:${at.line}:${at.col}` : ""}: invalid YAML`);
    }
    const value: unknown = doc.toJS({ maxAliasCount: 100 });
    if (value === null || value === undefined) return {};
    if (typeof value !== "object" || Array.isArray(value))
        throw new BadInputError(`${shown}: must be a mapping of settings (${KEYS.join(", ")})`);
    const problems: string[] = [];
    for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
        const problem = fieldProblem(key, v);
        if (problem) problems.push(`${shown}: ${JSON.stringify(key)}: ${problem}`);
    }
    if (problems.length === 1) throw new BadInputError(problems[0]);
    if (problems.length > 1) throw new BadInputsError(problems, `${shown}: ${problems.length} invalid fields`);
    return value;
}

/** The settings of a run over `paths`: the command line over the repository's file over the defaults. */
export function checkSettings(paths: string[], flags: CheckFlags, cwd = process.cwd()): CheckSettings {
    const repoRoot = runRepoRoot(paths, { repoRoot: flags.repoRoot, cwd });
    const file = path.join(repoRoot, CONFIG_FILE);
    const found = fs.existsSync(file);
    const fields = found ? readCheckConfig(file, CONFIG_FILE) : {};
    const fromFile = <T>(v: T | undefined): Setting<T> | undefined =>
        v === undefined ? undefined : { value: v, from: CONFIG_FILE };
    const one = <T>(flag: T | undefined, name: string, v: T | undefined): Setting<T> | undefined =>
        flag !== undefined ? { value: flag, from: name } : fromFile(v);
    const many = (flag: string[], name: string, v: string[] | undefined): Setting<string>[] =>
        flag.length > 0
            ? flag.map((value) => ({ value, from: name }))
            : (v ?? []).map((value) => ({ value, from: CONFIG_FILE }));
    const yes = (flag: boolean | undefined, name: string, v: boolean | undefined): Setting<boolean> =>
        flag === true ? { value: true, from: name } : (fromFile(v) ?? { value: false, from: "default" });
    // A config path in the file is relative to the repository root; on the command line, to the working folder.
    const configFile = fields.config !== undefined ? path.join(repoRoot, fields.config) : undefined;
    return {
        repoRoot,
        ...(found ? { file } : {}),
        config: one(flags.config, "--config", configFile),
        exclude: many(flags.exclude, "--exclude", fields.exclude),
        repositories: many(flags.repository, "--repository", fields.repositories),
        kubeVersion: one(flags.kubeVersion, "--kube-version", fields["kube-version"]),
        apiVersions: many(flags.apiVersions, "--api-versions", fields["api-versions"]),
        skipUnreadable: yes(flags.skipUnreadable, "--skip-unreadable", fields["skip-unreadable"]),
        failOnAdvisory: yes(flags.failOnAdvisory, "--fail-on-advisory", fields["fail-on-advisory"]),
        timeout: one(flags.timeout, "--timeout", fields.timeout) ?? { value: 300, from: "default" },
        allowHosts: many(flags.fetch?.allowHost ?? [], "--allow-host", fields["allow-hosts"]),
        kustomizeEnableHelm: yes(flags.kustomizeEnableHelm, "--kustomize-enable-helm", fields["kustomize-enable-helm"]),
        fetch: flags.fetch ?? { allowHost: [] },
    };
}

/** What `check --print-config` prints: every setting in force and where it came from, one a line. */
export function printedConfig(s: CheckSettings): string {
    const repo = checkedRepository(
        s.repoRoot,
        s.repositories.map((r) => ({ url: r.value, from: r.from })),
    );
    const lines: [string, string][] = [
        ["repository root", s.repoRoot],
        ["configuration file", s.file ?? `none (${CONFIG_FILE} at the repository root)`],
        ["config", s.config ? `${s.config.value} (${s.config.from})` : "none: every policy at its defaults (default)"],
        ...list("exclude", s.exclude),
        ...(repo.urls.length > 0
            ? repo.urls.map((u): [string, string] => ["repository", `${shownUrl(u.url)} (${u.from})`])
            : [["repository", `unknown: ${unknownRepositoryNotice(repo)}`] as [string, string]]),
        ["kube-version", s.kubeVersion ? `${s.kubeVersion.value} (${s.kubeVersion.from})` : "Helm's own (default)"],
        ...list("api-versions", s.apiVersions),
        ["skip-unreadable", `${s.skipUnreadable.value} (${s.skipUnreadable.from})`],
        ["fail-on-advisory", `${s.failOnAdvisory.value} (${s.failOnAdvisory.from})`],
        ["timeout", `${s.timeout.value} s (${s.timeout.from})`],
        ...list("allow-hosts", s.allowHosts),
        [
            "kustomize-enable-helm",
            s.kustomizeEnableHelm.value
                ? `true (${s.kustomizeEnableHelm.from})`
                : "as the repository's argocd-cm says (default)",
        ],
        ["network", s.fetch.offline ? "offline: the cache only (--offline)" : "fetches remote sources (default)"],
        [
            "cache-dir",
            `${runFetchPolicy(s.fetch, [], s.repoRoot).cacheDir} (${s.fetch.cacheDir ? "--cache-dir" : "default"})`,
        ],
    ];
    return lines.map(([k, v]) => `${k.padEnd(20)}${k.length >= 20 ? " " : ""}${escapeText(v)}\n`).join("");
}

function list(name: string, values: Setting<string>[]): [string, string][] {
    if (values.length === 0) return [[name, "none (default)"]];
    return values.map((v) => [name, `${v.value} (${v.from})`]);
}

/** The command line's options as settings take them (an option not given is undefined; lists empty). */
export function checkFlags(o: CheckFlags): CheckFlags {
    return {
        config: o.config,
        repoRoot: o.repoRoot,
        exclude: o.exclude,
        repository: o.repository,
        kubeVersion: o.kubeVersion,
        apiVersions: o.apiVersions,
        skipUnreadable: o.skipUnreadable,
        failOnAdvisory: o.failOnAdvisory || undefined,
        timeout: o.timeout,
        kustomizeEnableHelm: o.kustomizeEnableHelm || undefined,
        fetch: o.fetch,
    };
}
