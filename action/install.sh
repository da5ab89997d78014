#!/usr/bin/env bash
# The install step of action.yml: puts a packed pko-guard (an `npm pack` tarball: the bundled command, its pack and
# schemas) in PKO_GUARD_INSTALL_DIR with its runtime dependencies only (`npm install --omit=dev`: no development
# dependencies, no TypeScript build), and writes the command's path to $GITHUB_OUTPUT as `bin`.
#   PKO_GUARD_PACKAGE      a tarball to install (a path, or an https URL such as a release asset); empty: this
#                          action's own checkout, packed once (npm ci and the build run there, that once) and kept
#                          in PKO_GUARD_INSTALL_DIR, which the action caches by the checkout's content
#   PKO_GUARD_INSTALL_DIR  where it goes (the action's cache path)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="${PKO_GUARD_INSTALL_DIR:?}"
out="${GITHUB_OUTPUT:-/dev/null}"
bin="$dir/node_modules/pko-guard/bin/cli/pko-guard.js"
npm_quiet=(--no-audit --no-fund --loglevel=error)

fail() {
    echo "::error title=pko-guard::$1"
    exit 2
}

major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null)" || fail "node not found: set the action's node-version input, or set up Node.js 20 or later before it"
[ "$major" -ge 20 ] || fail "pko-guard needs Node.js 20 or later (this job has $(node --version)); set the action's node-version input"

install_tarball() { # tarball or URL
    rm -rf "$dir" && mkdir -p "$dir"
    printf '{"name":"pko-guard-action","version":"0.0.0","private":true}\n' >"$dir/package.json"
    npm install --prefix "$dir" --omit=dev "${npm_quiet[@]}" "$1" 1>&2
}

if [ -n "${PKO_GUARD_PACKAGE:-}" ]; then
    case "$PKO_GUARD_PACKAGE" in
    https://* | http://* | /*) ;;
    *) PKO_GUARD_PACKAGE="$PWD/$PKO_GUARD_PACKAGE" ;; # relative to the step's working directory
    esac
    echo "pko-guard: installing the packed pko-guard ${PKO_GUARD_PACKAGE} (runtime dependencies only)"
    install_tarball "$PKO_GUARD_PACKAGE" || fail "cannot install ${PKO_GUARD_PACKAGE}"
elif [ -f "$bin" ]; then
    echo "pko-guard: using the packed pko-guard cached for this action's commit"
else
    # Once per action commit (the cache keeps the result): build in the action's checkout, pack, install the pack.
    echo "pko-guard: packing pko-guard from the action's checkout (once for this commit; later runs use the cache)"
    work="$(mktemp -d)"
    (cd "$here" && npm ci "${npm_quiet[@]}" 1>&2 && npm pack --ignore-scripts --pack-destination "$work" >/dev/null) ||
        fail "cannot build pko-guard in the action's checkout"
    install_tarball "$(ls "$work"/pko-guard-*.tgz)" || fail "cannot install the packed pko-guard"
    rm -rf "$work"
fi
[ -f "$bin" ] || fail "the installed package has no bin/cli/pko-guard.js"
echo "bin=$bin" >>"$out"
echo "pko-guard: $(node "$bin" --version) at $bin"
