// ESLint flat config over the code this repository owns: typescript-eslint's recommended rules everywhere, and its
// type-checked rules (one TypeScript program, test/tsconfig.json, for every file) over the product, where every
// promise must be awaited, returned or handled (`void p` does not count: support/fatal.ts's exit on an unhandled
// rejection is a last resort, not a handler). Tests and benchmarks keep the promise rules only. Fixtures, examples
// and test/data/bad-fixtures are inputs to the tests (programs a user writes, some deliberately broken), not ours.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

/** The product: what tsconfig.json compiles. */
const PRODUCT = [
    "index.ts",
    "policies/**/*.ts",
    "evaluation/**/*.ts",
    "support/**/*.ts",
    "engine/**/*.ts",
    "gitops/**/*.ts",
    "cluster/**/*.ts",
    "reports/**/*.ts",
    "cli/**/*.ts",
    "harness/**/*.ts",
    "pack/**/*.ts",
];
/** Every promise awaited, returned or handled, `void` included; an async function's promise never where a callback's result is dropped. */
const PROMISE_RULES = {
    "@typescript-eslint/no-floating-promises": ["error", { ignoreVoid: false }],
    "@typescript-eslint/no-misused-promises": "error",
    "@typescript-eslint/await-thenable": "error",
};

export default tseslint.config(
    {
        ignores: [
            "node_modules/",
            "bin/",
            ".cache/",
            "out/",
            ".scratch/",
            "pack/dist/",
            "dist/",
            "fixtures/",
            "examples/",
            "test/data/bad-fixtures/",
        ],
    },
    js.configs.recommended,
    tseslint.configs.recommended,
    {
        files: ["**/*.ts"],
        languageOptions: { parserOptions: { project: "./test/tsconfig.json", tsconfigRootDir: import.meta.dirname } },
        rules: PROMISE_RULES,
    },
    ...tseslint.configs.recommendedTypeCheckedOnly.map((c) => ({ ...c, files: PRODUCT })),
    {
        files: PRODUCT,
        rules: {
            ...PROMISE_RULES,
            "@typescript-eslint/no-explicit-any": "error",
            // An async function that awaits nothing is how a leg or a middleware implements an async interface.
            "@typescript-eslint/require-await": "off",
            // A rule's hooks are passed on as values by design (policies/model/policy.ts): none reads `this`.
            "@typescript-eslint/unbound-method": "off",
            // Values decoded from YAML a user wrote are made text with String() on purpose, where Argo CD's Go
            // would format them: an object then reads `[object Object]` in a message, escaped, never a crash.
            "@typescript-eslint/no-base-to-string": "off",
            // A caught reason passed on unchanged (the deadline's race, the SDK's errors) is not ours to wrap.
            "@typescript-eslint/prefer-promise-reject-errors": ["error", { allowThrowingUnknown: true }],
        },
    },
    {
        // Test doubles and benchmark stubs stand in for untyped SDK and client internals.
        files: ["test/**/*.ts", "bench/**/*.ts"],
        rules: { "@typescript-eslint/no-explicit-any": "off" },
    },
    {
        // CommonJS files (the mocha tiers and their runner).
        files: ["**/*.js"],
        languageOptions: {
            sourceType: "commonjs",
            globals: {
                module: "writable",
                require: "readonly",
                process: "readonly",
                __dirname: "readonly",
                console: "readonly",
            },
        },
    },
    {
        linterOptions: { reportUnusedDisableDirectives: "error" },
        rules: {
            // `require` is deliberate where it is used: lazily, to keep the pack's and the CLI's start-up
            // short, and for the SDK's generated protobuf modules, which ship no types.
            "@typescript-eslint/no-require-imports": "off",
            // Escaping user strings for terminals and logs matches control characters on purpose.
            "no-control-regex": "off",
            // Regular expressions over YAML text match its indentation literally (`/^  namespace: /`).
            "no-regex-spaces": "off",
            // `cond ? resolve(x) : reject(e)` and `ok && done()` as statements are the house style.
            "@typescript-eslint/no-unused-expressions": ["error", { allowTernary: true, allowShortCircuit: true }],
            // A leading underscore marks a value that is bound on purpose and not read (a rest sibling
            // dropped from a copy, a callback's unused parameter).
            "@typescript-eslint/no-unused-vars": [
                "error",
                {
                    argsIgnorePattern: "^_",
                    varsIgnorePattern: "^_",
                    caughtErrorsIgnorePattern: "^_",
                    ignoreRestSiblings: true,
                },
            ],
        },
    },
    {
        // Node 20's V8 gives every object a spread literal makes and then extends (`{ ...row, facts }`, or a
        // spread followed by any key) a hidden class of its own: on a path run for every object, row or finding
        // that is a hidden class per object (support/shapes.ts; test/integration/support/hidden-classes.spec.ts).
        // The rule covers the paths that make such objects by the thousand. The rules' domain (policies/) is plain
        // code and not covered: spreads there cost nothing measurable (docs/benchmarks.md). Spreads that come after
        // a literal key (`{ kind, ...rest }`) are fine.
        files: [
            "evaluation/**/*.ts",
            "support/**/*.ts",
            "engine/**/*.ts",
            "gitops/**/*.ts",
            "cluster/**/*.ts",
            "reports/**/*.ts",
            "cli/**/*.ts",
        ],
        rules: {
            "no-restricted-syntax": [
                "error",
                {
                    selector: "ObjectExpression[properties.0.type='SpreadElement'][properties.length>1]",
                    message:
                        "A leading spread followed by more keys gives each object its own hidden class in Node 20: use extended() from support/shapes.ts, or start the literal with a key.",
                },
            ],
        },
    },
);
