#!/usr/bin/env bash
# Re-fetches Argo CD's Application CustomResourceDefinition, as Argo CD ships it, from
# the Go module github.com/argoproj/argo-cd/v3 (manifests/crds/ in the module).
#
#   schemas/argocd/generate.sh [VERSION] [OUT_DIR]
#
# VERSION defaults to v3.6.1; OUT_DIR to schemas/argocd/<VERSION> next to this script.
# The file is copied byte for byte and its SHA-256 printed (PROVENANCE.md records it).
#
# `go mod download` fetches and verifies the module zip (go.sum database) without
# building anything. Argo CD v3.6 declares `go 1.27`: an older Go still downloads the
# zip but does not extract it (the JSON names the Zip and an Error, no Dir), so the
# file is then read from the zip itself.
set -euo pipefail

VERSION="${1:-v3.6.1}"
MODULE="github.com/argoproj/argo-cd/v3"
FILES=(application-crd.yaml)

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
die() { echo "generate.sh: $*" >&2; exit 2; }
out="${2:-$here/$VERSION}"
command -v go >/dev/null || die "go is not on PATH"
command -v unzip >/dev/null || die "unzip is not on PATH"

echo "downloading $MODULE@$VERSION..." >&2
json="$(GOTOOLCHAIN=local GOFLAGS=-mod=mod go mod download -json "$MODULE@$VERSION" || true)"
field() { printf '%s\n' "$json" | sed -n "s/^[[:space:]]*\"$1\": \"\\(.*\\)\",\{0,1\}\$/\\1/p" | head -n1; }
dir="$(field Dir)"
zip="$(field Zip)"
sum="$(field Sum)"
[[ -n "$sum" ]] || die "go mod download failed: $json"

mkdir -p "$out"
for f in "${FILES[@]}"; do
	if [[ -n "$dir" && -f "$dir/manifests/crds/$f" ]]; then
		cp "$dir/manifests/crds/$f" "$out/$f"
	elif [[ -n "$zip" && -f "$zip" ]]; then
		unzip -p "$zip" "$MODULE@$VERSION/manifests/crds/$f" >"$out/$f"
	else
		die "neither the module folder nor its zip holds manifests/crds/$f"
	fi
	[[ -s "$out/$f" ]] || die "empty $f"
	chmod 0644 "$out/$f"
	echo "$f sha256=$(sha256sum "$out/$f" | cut -d' ' -f1) (module $MODULE@$VERSION, go.sum $sum)"
done
