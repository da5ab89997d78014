#!/usr/bin/env bash
# Builds the Pulumi toolchain this repo's harness needs from pinned Go modules
# (no prebuilt downloads) into <repo>/.cache/toolchain/bin.
#
#   toolchain/install.sh                # all default binaries
#   toolchain/install.sh pulumi         # only the named ones
#   toolchain/install.sh --list         # print names and pinned versions
#
# Each binary has a wrapper module in toolchain/<name>/ (go.mod + go.sum, plus
# main.go where upstream's command cannot be built straight from its module).
# A stamp file bin/<name>.version records the pinned version and a hash of the
# wrapper's files; a binary whose stamp matches is not rebuilt. Build logs go
# to .cache/toolchain/logs/<name>.log. Put .cache/toolchain/bin on PATH: the
# Pulumi engine takes plugins found on PATH in preference to $PULUMI_HOME.
set -euo pipefail

TOOLCHAIN_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_DIR="$(dirname "$TOOLCHAIN_DIR")"
CACHE_DIR="$REPO_DIR/.cache/toolchain"
BIN_DIR="$CACHE_DIR/bin"
LOG_DIR="$CACHE_DIR/logs"
SRC_DIR="$CACHE_DIR/src"

# Version each binary reports (stamped with -ldflags -X). See toolchain/README.md
# for why these differ from the npm packages where they do.
PULUMI_VERSION="v3.248.0"              # github.com/pulumi/pulumi/pkg/v3 v3.248.0
NODEJS_HOST_VERSION="v3.248.0+pkoguard" # pko-guard's own host (toolchain/pulumi-language-nodejs/main.go) on sdk/v3 v3.248.0
KUBERNETES_VERSION="4.27.0"             # provider/v4 v4.0.0-20260304044920-867400a6a208 = v4.27.0 + 2 commits

ALL_NAMES=(pulumi pulumi-language-nodejs pulumi-resource-kubernetes)

spec() { # name -> sets VERSION PKG VERSION_VAR ESTIMATE
	case "$1" in
	pulumi)
		VERSION="$PULUMI_VERSION"
		PKG="github.com/pulumi/pulumi/pkg/v3/cmd/pulumi"
		VERSION_VAR="github.com/pulumi/pulumi/sdk/v3/go/common/version.Version"
		ESTIMATE="~6 min"
		;;
	pulumi-language-nodejs)
		VERSION="$NODEJS_HOST_VERSION"
		PKG="." # wrapper main.go
		VERSION_VAR="github.com/pulumi/pulumi/sdk/v3/go/common/version.Version"
		ESTIMATE="~2 min, seconds right after pulumi"
		;;
	pulumi-resource-kubernetes)
		VERSION="$KUBERNETES_VERSION"
		PKG="." # wrapper main.go, built from a copy that gets the generated embed files
		VERSION_VAR="github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version.Version"
		ESTIMATE="~12 min"
		;;
	*) return 1 ;;
	esac
}

say() { printf '[toolchain] %s\n' "$*"; }
die() { printf '[toolchain] error: %s\n' "$*" >&2; exit 1; }

if [[ "${1:-}" == "--list" ]]; then
	for n in "${ALL_NAMES[@]}"; do spec "$n"; printf '%s %s\n' "$n" "$VERSION"; done
	exit 0
fi

command -v go >/dev/null 2>&1 || die "go not found on PATH; install Go >= 1.25 (https://go.dev/dl) and re-run toolchain/install.sh"

names=("$@")
[[ ${#names[@]} -gt 0 ]] || names=("${ALL_NAMES[@]}")
for n in "${names[@]}"; do
	spec "$n" || die "unknown binary '$n' (known: ${ALL_NAMES[*]})"
done

mkdir -p "$BIN_DIR" "$LOG_DIR" "$SRC_DIR"

# One installer at a time (parallel test runs may all call this).
if command -v flock >/dev/null 2>&1; then
	exec 9>"$CACHE_DIR/.lock"
	flock 9
fi

# Stamp: pinned version + Go version + hash of every file of the wrapper module.
stamp_of() { # name
	local dir="$TOOLCHAIN_DIR/$1" hash
	hash="$(cd "$dir" && find . -type f \( -name go.mod -o -name go.sum -o -name '*.go' \) | LC_ALL=C sort |
		xargs sha256sum | sha256sum | cut -c1-16)"
	printf '%s %s wrapper-sha256:%s\n' "$VERSION" "$(go env GOVERSION)" "$hash"
}

export CGO_ENABLED=0
# Modules come from the Go module proxy; go.sum is complete, so -mod=readonly
# builds never need to edit go.mod/go.sum nor ask the checksum database.

build_one() { # name
	local name="$1" dir="$TOOLCHAIN_DIR/$1" out="$BIN_DIR/$1" log="$LOG_DIR/$1.log" stamp builddir start
	spec "$name"
	stamp="$(stamp_of "$name")"
	if [[ -x "$out" && -f "$out.version" && "$(cat "$out.version")" == "$stamp" ]]; then
		say "$name $VERSION up to date"
		return 0
	fi
	say "building $name $VERSION (cold build takes $ESTIMATE; log: $log)..."
	start=$SECONDS
	builddir="$dir"
	{
		echo "# $(date -u +%FT%TZ) building $name $VERSION"
		echo "# stamp: $stamp"
		if [[ "$name" == pulumi-resource-kubernetes ]]; then
			# Upstream's main package embeds schema-embed.json and
			# terraform-mapping-embed.json, generated at release time and not
			# in the module zip: generate them into a build copy.
			builddir="$SRC_DIR/$name"
			rm -rf "$builddir" && mkdir -p "$builddir" && cp -R "$dir/." "$builddir/"
			(cd "$builddir" &&
				go mod download github.com/pulumi/pulumi-kubernetes/provider/v4 &&
				go run -mod=readonly -buildvcs=false ./embedgen \
					"$(go list -mod=readonly -m -f '{{.Dir}}' github.com/pulumi/pulumi-kubernetes/provider/v4)" \
					. "$VERSION")
		fi
		(cd "$builddir" && go build -mod=readonly -trimpath -buildvcs=false \
			-ldflags "-s -w -X $VERSION_VAR=$VERSION" -o "$out.tmp" "$PKG")
	} >"$log" 2>&1 || {
		rm -f "$out.tmp"
		die "building $name $VERSION failed; see $log"
	}
	mv -f "$out.tmp" "$out"
	printf '%s\n' "$stamp" >"$out.version"
	say "built $name $VERSION in $((SECONDS - start))s -> $out"
}

# Sequential on purpose: each go build already uses every core, and on a
# 2-core machine parallel builds only add memory pressure.
for n in "${names[@]}"; do
	build_one "$n"
done
say "binaries are in $BIN_DIR (put it first on PATH)"
