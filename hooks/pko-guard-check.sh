#!/usr/bin/env bash
# The pre-commit hook's entry (.pre-commit-hooks.yaml, language: script, pass_filenames: false). pre-commit keeps
# this repository, at the rev the user pinned, in its cache, and runs this script from the user's repository root
# when a staged file matches the hook's `files` (after stashing unstaged changes, so the working tree is what the
# commit holds). The script judges the repository as `pko-guard check .` does, not the staged files alone: a staged
# binding is judged with the Stack it grants to, and an Application with the folders it places, wherever they are,
# and config files (policy config, .pko-guard.yaml) are read as config, never as manifests.
#
# The hook's args are check's options (--config FILE, --fail-on-advisory, ...) and, optionally, the folders to
# judge instead of the whole repository (e.g. `args: [manifests, applications]`). The first run installs the
# packed command in pre-commit's clone, as a user installs the package: the clone is built in a scratch folder
# (npm ci, whose development tree is removed afterwards), packed (npm pack), and the tarball installed with its
# runtime dependencies only into <clone>/.pko-guard; later runs reuse it. (language: node cannot be used:
# pre-commit reads `npm pack`'s standard output as the tarball's name, and npm prints the banner of the package's
# `prepare` script there.)
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
prefix="$here/.pko-guard"
cli="$prefix/node_modules/pko-guard/bin/cli/pko-guard.js"
if [ ! -f "$prefix/.installed" ] || [ ! -f "$cli" ]; then
    echo "pko-guard: first run: installing the packed pko-guard in $prefix (a few minutes, once)" >&2
    work="$(mktemp -d)"
    trap 'rm -rf "$work"' EXIT
    if ! (
        set -e
        tar -C "$here" --exclude=./.pko-guard --exclude=./node_modules --exclude=./.git -cf - . | (mkdir "$work/src" && tar -C "$work/src" -xf -)
        cd "$work/src"
        npm ci --no-audit --no-fund --loglevel=error
        npm pack --ignore-scripts --silent --pack-destination "$work" >/dev/null
        mkdir -p "$prefix"
        printf '{"name":"pko-guard-hook","private":true}\n' >"$prefix/package.json"
        npm install --prefix "$prefix" --omit=dev --no-audit --no-fund --loglevel=error "$work"/pko-guard-*.tgz
    ) 1>&2; then
        echo "pko-guard: installing pko-guard in $prefix failed" >&2
        exit 2
    fi
    # The start-up snapshot for this node (the package ships none: a blob fits one node binary). Without it the
    # command runs all the same.
    node "$prefix/node_modules/pko-guard/bin/cli/bundle/snapshot-build.js" 1>&2 || true
    touch "$prefix/.installed"
    rm -rf "$work"
    trap - EXIT
fi

# check's options that take a value (the next argument, unless given as --option=value).
takes_value=" --config --report --format --repo-root --timeout --kube-version --api-versions --exclude --repository --allow-host --cache-dir "
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
# From the command's start-up snapshot when one fits this node (bin/cli/pko-guard.sh decides; otherwise it runs
# bin/cli/pko-guard.js): each commit's wait is mostly start-up.
launcher=(node "$cli")
[ -x "${cli%.js}.sh" ] && launcher=("${cli%.js}.sh")
exec "${launcher[@]}" check "${options[@]}" -- "${paths[@]}"
