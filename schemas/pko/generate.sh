#!/usr/bin/env bash
# Regenerates the structural CustomResourceDefinitions of PKO v2 (Stack, Program,
# Workspace, Update) from the operator's Go API types, without descriptions.
#
#   schemas/pko/generate.sh PKO_CHECKOUT [OUT_DIR]
#
# PKO_CHECKOUT is a work tree of github.com/pulumi/pulumi-kubernetes-operator at
# the tag to generate (a clone, or `git archive <tag> | tar -x`). OUT_DIR defaults
# to schemas/pko/v2.9.0 next to this script.
#
# The Go module proxy refuses PKO v2's modules, so the API packages are loaded
# from the checkout through a temporary wrapper module whose go.mod `replace`s
# the operator's module with the checkout path. controller-gen is installed at
# the version PKO's own operator/Makefile pins (CONTROLLER_TOOLS_VERSION) into a
# temporary GOBIN, with its own dependency versions, as upstream installs it.
# The output is then compared, descriptions aside, with the checkout's
# deploy/crds and every difference is printed.
set -euo pipefail

CONTROLLER_TOOLS_VERSION="${CONTROLLER_TOOLS_VERSION:-v0.16.5}"
CRD_OPTIONS="crd:crdVersions=v1,generateEmbeddedObjectMeta=true,maxDescLen=0"
FILES=(pulumi.com_stacks.yaml pulumi.com_programs.yaml auto.pulumi.com_workspaces.yaml auto.pulumi.com_updates.yaml)

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
die() { echo "generate.sh: $*" >&2; exit 2; }

[[ $# -ge 1 && $# -le 2 ]] || die "usage: generate.sh PKO_CHECKOUT [OUT_DIR]"
src="$(cd "$1" 2>/dev/null && pwd)" || die "no such directory: $1"
out="${2:-$here/v2.9.0}"
[[ -f "$src/go.mod" && -d "$src/operator/api" ]] || die "$src is not a checkout of pulumi-kubernetes-operator v2"
module="$(awk '$1 == "module" { print $2; exit }' "$src/go.mod")"
[[ "$module" == github.com/pulumi/pulumi-kubernetes-operator/v2 ]] || die "unexpected module $module in $src/go.mod"

pinned="$(sed -n 's/^CONTROLLER_TOOLS_VERSION ?= *//p' "$src/operator/Makefile" 2>/dev/null || true)"
if [[ -n "$pinned" && "$pinned" != "$CONTROLLER_TOOLS_VERSION" ]]; then
	echo "generate.sh: note: the checkout's operator/Makefile pins controller-tools $pinned; using $CONTROLLER_TOOLS_VERSION" >&2
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/wrap/crddiff" "$work/out"

echo "installing controller-gen $CONTROLLER_TOOLS_VERSION..." >&2
GOBIN="$work/bin" GOFLAGS=-mod=mod go install "sigs.k8s.io/controller-tools/cmd/controller-gen@$CONTROLLER_TOOLS_VERSION"
version="$("$work/bin/controller-gen" --version)"
[[ "$version" == "Version: $CONTROLLER_TOOLS_VERSION" ]] || die "controller-gen reports '$version'"

go_version="$(awk '$1 == "go" { print $2; exit }' "$src/go.mod")"
cat >"$work/wrap/go.mod" <<MOD
module pko-guard.local/pko-crds

go $go_version

require $module v2.0.0

replace $module => $src
MOD
cat >"$work/wrap/tools.go" <<'GO'
//go:build tools

package tools

import (
	_ "github.com/pulumi/pulumi-kubernetes-operator/v2/operator/api/auto/v1alpha1"
	_ "github.com/pulumi/pulumi-kubernetes-operator/v2/operator/api/pulumi/v1"
	_ "github.com/pulumi/pulumi-kubernetes-operator/v2/operator/api/pulumi/v1alpha1"
	_ "sigs.k8s.io/yaml"
)
GO
cp "$here/crddiff/main.go" "$work/wrap/crddiff/main.go"
cp "$src/go.sum" "$work/wrap/go.sum"

echo "resolving the API packages' dependencies..." >&2
(cd "$work/wrap" && go mod tidy)

echo "generating CRDs..." >&2
(cd "$work/wrap" && "$work/bin/controller-gen" "$CRD_OPTIONS" \
	"paths=$module/operator/api/..." "output:crd:artifacts:config=$work/out")
(cd "$work/wrap" && go build -o "$work/bin/crddiff" ./crddiff)

mkdir -p "$out"
for f in "${FILES[@]}"; do
	[[ -s "$work/out/$f" ]] || die "controller-gen did not write $f"
	cp "$work/out/$f" "$out/$f"
	sum="$(sha256sum "$out/$f" | cut -d' ' -f1)"
	if [[ -f "$src/deploy/crds/$f" ]]; then
		if d="$("$work/bin/crddiff" "$out/$f" "$src/deploy/crds/$f")"; then
			echo "$f sha256=$sum; structurally equal to deploy/crds/$f (descriptions aside)"
		else
			echo "$f sha256=$sum; differs from deploy/crds/$f:"
			printf '%s\n' "$d" | sed 's/^/  /'
		fi
	else
		echo "$f sha256=$sum; no deploy/crds/$f to compare with"
	fi
done
extra="$(cd "$work/out" && ls | grep -vxF -f <(printf '%s\n' "${FILES[@]}") || true)"
[[ -z "$extra" ]] || echo "note: controller-gen also wrote (not kept): $extra" >&2
