#!/usr/bin/env bash
# The pre-commit hook's entry (.pre-commit-hooks.yaml, language: script, pass_filenames: false). pre-commit keeps
# this repository, at the rev the user pinned, in its cache, and runs this script from the user's repository root
# when a staged file matches the hook's `files` (after stashing unstaged changes, so the working tree is what the
# commit holds). The script judges the repository as `pko-guard check .` does, not the staged files alone: a staged
# binding is judged with the Stack it grants to, and an Application with the folders it places, wherever they are,
# and config files (policy config, .pko-guard.yaml) are read as config, never as manifests.
#
# The hook's args are check's options (--config FILE, --fail-on-advisory, ...) and, optionally, the folders to
# judge instead of the whole repository (e.g. `args: [manifests, applications]`). The first run installs
# pko-guard in pre-commit's clone (`npm ci`, which builds it; never from a package registry), as the GitHub
# Action does; later runs reuse it. (language: node cannot be used: pre-commit reads `npm pack`'s standard
# output as the tarball's name, and npm prints the banner of the package's `prepare` script there.)
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

# check's options that take a value (the next argument, unless given as --option=value).
takes_value=" --config --report --format --repo-root --timeout --kube-version --api-versions --exclude "
options=()
paths=()
while [ $# -gt 0 ]; do
    case "$1" in
    -) paths+=("$1") ;;
    -*) options+=("$1") ;;
    *) paths+=("$1") ;;
    esac
    if [[ "$takes_value" == *" $1 "* && $# -gt 1 ]]; then
        options+=("$2")
        shift
    fi
    shift
done
[ "${#paths[@]}" -gt 0 ] || paths=(.)
# From the command's start-up snapshot when the build made one that fits this node (bin/cli/pko-guard.sh decides;
# otherwise it runs bin/cli/pko-guard.js): each commit's wait is mostly start-up.
launcher=(node "$here/bin/cli/pko-guard.js")
[ -x "$here/bin/cli/pko-guard.sh" ] && launcher=("$here/bin/cli/pko-guard.sh")
exec "${launcher[@]}" check "${options[@]}" -- "${paths[@]}"
