#!/usr/bin/env bash
# Regenerates the structural CustomResourceDefinitions of the Flux kinds pko-guard reads (source-controller's
# GitRepository, OCIRepository, Bucket, HelmRepository and HelmChart; kustomize-controller's Kustomization;
# helm-controller's HelmRelease) from each controller's released config/crd/bases, without descriptions.
#
#   schemas/flux/generate.sh SOURCE_CONTROLLER KUSTOMIZE_CONTROLLER HELM_CONTROLLER [OUT_DIR]
#
# Each argument is a work tree of the controller's repository (github.com/fluxcd/<name>) at the tag to take
# (a clone, or `git archive <tag> | tar -x`): the CRDs there are what controller-gen generated from the API
# types at that tag, and what `flux install` applies. OUT_DIR defaults to this script's folder; each
# controller's files go to <name>-<tag>/, the tag read from the checkout's `git describe`, else from
# FLUX_TAGS ("source-controller=v1.9.1 ...") for an archive without history. Descriptions are dropped (they
# are most of the size and no test reads them); nothing else changes.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$(dirname "$here")")"
die() { echo "generate.sh: $*" >&2; exit 2; }

[[ $# -ge 3 && $# -le 4 ]] || die "usage: generate.sh SOURCE_CONTROLLER KUSTOMIZE_CONTROLLER HELM_CONTROLLER [OUT_DIR]"
out="${4:-$here}"
declare -A files=(
	[source-controller]="source.toolkit.fluxcd.io_gitrepositories.yaml source.toolkit.fluxcd.io_ocirepositories.yaml source.toolkit.fluxcd.io_buckets.yaml source.toolkit.fluxcd.io_helmrepositories.yaml source.toolkit.fluxcd.io_helmcharts.yaml"
	[kustomize-controller]="kustomize.toolkit.fluxcd.io_kustomizations.yaml"
	[helm-controller]="helm.toolkit.fluxcd.io_helmreleases.yaml"
)
names=(source-controller kustomize-controller helm-controller)
args=("$@")
for i in 0 1 2; do
	name="${names[$i]}"
	src="$(cd "${args[$i]}" 2>/dev/null && pwd)" || die "no such directory: ${args[$i]}"
	[[ -d "$src/config/crd/bases" ]] || die "$src has no config/crd/bases (not a checkout of fluxcd/$name)"
	tag="$(git -C "$src" describe --tags --exact-match 2>/dev/null || true)"
	[[ -n "$tag" ]] || tag="$(tr ' ' '\n' <<<"${FLUX_TAGS:-}" | sed -n "s/^$name=//p")"
	[[ -n "$tag" ]] || die "cannot tell the tag of $src: check out a tag, or set FLUX_TAGS"
	dest="$out/$name-$tag"
	mkdir -p "$dest"
	for f in ${files[$name]}; do
		[[ -f "$src/config/crd/bases/$f" ]] || die "$name $tag has no $f"
		node "$here/strip-descriptions.js" <"$src/config/crd/bases/$f" >"$dest/$f"
	done
	echo "$name $tag -> ${dest#"$repo"/}" >&2
done
