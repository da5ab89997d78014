#!/usr/bin/env bash
# The pre-commit hook's entry (.pre-commit-hooks.yaml, language: script). pre-commit keeps this repository,
# at the rev the user pinned, in its cache and runs this script from the user's repository root with the
# selected files as arguments. The first run installs pko-guard in that checkout (`npm ci`, which builds it;
# never from a package registry), as the GitHub Action does; later runs reuse it. (language: node cannot be
# used: pre-commit reads `npm pack`'s standard output as the tarball's name, and npm prints the banner of the
# package's `prepare` script there.)
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
marker="$here/node_modules/.pko-guard-installed"
if [ ! -f "$marker" ] || [ ! -f "$here/bin/cli/pko-guard.js" ]; then
    echo "pko-guard: first run: installing pko-guard in $here (npm ci, about a minute)" >&2
    if ! (cd "$here" && npm ci --no-audit --no-fund --loglevel=error 1>&2); then
        echo "pko-guard: npm ci failed in $here" >&2
        exit 2
    fi
    touch "$marker"
fi
exec node "$here/bin/cli/pko-guard.js" check "$@"
