#!/usr/bin/env bash
# Bench-only: builds the peer tools (conftest, Kyverno CLI) from the Go module proxy into an ignored cache
# folder. Never needed by the tests or CI. Idempotent: a peer whose binary already reports the pinned version
# is left alone. Usage: bash bench/peers/build.sh [conftest|kyverno]...   (default: both)
# Output folder: $PKO_GUARD_PEERS_DIR, default <repo>/.cache/bench-peers. One line per peer on stdout;
# a peer that cannot be built gets one line on stderr and the script goes on (exit 1 at the end).
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${PKO_GUARD_PEERS_DIR:-$root/.cache/bench-peers}"
mkdir -p "$out/logs" || { echo "bench-peers: cannot create $out" >&2; exit 1; }

CONFTEST_MODULE=github.com/open-policy-agent/conftest
CONFTEST_VERSION=v0.56.0
CONFTEST_PKG=.
KYVERNO_MODULE=github.com/kyverno/kyverno
KYVERNO_VERSION=v1.15.2
KYVERNO_PKG=./cmd/cli/kubectl-kyverno

build_one() { # name module version package
  local name="$1" module="$2" version="$3" pkg="$4"
  local bin="$out/$name" stamp="$out/$name.version" log="$out/logs/$name.log"
  if [ -x "$bin" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$module@$version" ]; then
    echo "bench-peers: $name $version ready ($bin)"; return 0
  fi
  if ! command -v go >/dev/null 2>&1; then
    echo "bench-peers: $name not built: no Go toolchain on PATH" >&2; return 1
  fi
  local dir
  # The module source comes from the module proxy (GOPROXY); its own go.mod/go.sum pin every dependency.
  if ! dir="$(GOTOOLCHAIN=local go mod download -json "$module@$version" 2>>"$log" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')" || [ -z "$dir" ]; then
    echo "bench-peers: $name not built: cannot download $module@$version (see $log)" >&2; return 1
  fi
  local work; work="$(mktemp -d "$out/.build-$name.XXXXXX")"
  cp -r "$dir/." "$work/" && chmod -R u+w "$work"
  local ldflags=""
  [ "$name" = conftest ] && ldflags="-X github.com/open-policy-agent/conftest/internal/commands.version=${version#v}"
  [ "$name" = kyverno ] && ldflags="-X github.com/kyverno/kyverno/pkg/version.BuildVersion=$version"
  echo "bench-peers: building $name $version (log: $log)..."
  if (cd "$work" && GOTOOLCHAIN=local GOFLAGS=-mod=mod nice -n 10 go build -trimpath -ldflags "-s -w $ldflags" -o "$bin.tmp" "$pkg") >>"$log" 2>&1; then
    mv -f "$bin.tmp" "$bin" && echo "$module@$version" > "$stamp"
    rm -rf "$work"
    echo "bench-peers: $name $version built ($bin)"
  else
    rm -rf "$work" "$bin.tmp"
    echo "bench-peers: $name not built: go build failed (see $log)" >&2; return 1
  fi
}

want=("$@"); [ ${#want[@]} -eq 0 ] && want=(conftest kyverno)
rc=0
for p in "${want[@]}"; do
  case "$p" in
    conftest) build_one conftest "$CONFTEST_MODULE" "$CONFTEST_VERSION" "$CONFTEST_PKG" || rc=1 ;;
    kyverno) build_one kyverno "$KYVERNO_MODULE" "$KYVERNO_VERSION" "$KYVERNO_PKG" || rc=1 ;;
    *) echo "bench-peers: unknown peer '$p' (expected conftest or kyverno)" >&2; rc=2 ;;
  esac
done
exit $rc
