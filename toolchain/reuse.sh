# Sourced by toolchain/install.sh: reading toolchain/tools.txt and deciding whether a tool already on PATH fits
# (the same rules as `pko-guard doctor`, support/toolchain.ts). Needs BIN_DIR and say().

tool_row() { # tool -> ROW_PROFILES ROW_REUSE ROW_MIN ROW_BELOW ROW_PROBE from tools.txt
	local line
	line="$(grep -E "^$1[[:space:]]" "$TOOLS_FILE")" || return 1
	read -r _ ROW_PROFILES ROW_REUSE ROW_MIN ROW_BELOW ROW_PROBE <<<"$line"
}

ver_lt() { # a b: version a sorts before b
	[[ "$1" != "$2" && "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -n1)" == "$1" ]]
}

fits() { # version min below
	! ver_lt "$1" "$2" && ver_lt "$1" "$3"
}

version_of() { # executable probe-args... -> the first x.y.z it prints
	local v
	v="$(timeout 30 "$@" </dev/null 2>&1 | grep -oE '[0-9]+\.[0-9]+\.[0-9]+' | head -n1)"
	[[ -n "$v" ]] && printf '%s\n' "$v"
}

on_path() { # tool -> the first executable of that name on PATH, outside the toolchain's own bin/
	local dir own
	own="$(cd "$BIN_DIR" 2>/dev/null && pwd -P || printf '%s' "$BIN_DIR")"
	local IFS=:
	for dir in $PATH; do
		[[ -n "$dir" && -d "$dir" ]] || continue
		[[ "$(cd "$dir" && pwd -P)" == "$own" ]] && continue
		[[ -f "$dir/$1" && -x "$dir/$1" ]] && { printf '%s\n' "$dir/$1"; return 0; }
	done
	return 1
}

path_candidate() { # tool -> "<path> <version>" of a fitting tool on PATH; says why one on PATH does not fit
	local p v line
	tool_row "$1" || return 1
	case "$ROW_REUSE" in
	probe)
		p="$(on_path "$1")" || return 1
		# shellcheck disable=SC2086 # the probe's arguments are words
		v="$(version_of "$p" $ROW_PROBE)" || { say "$1 on PATH ($p) prints no version; not used" >&2; return 1; }
		if ! fits "$v" "$ROW_MIN" "$ROW_BELOW"; then
			[[ "${2:-}" == quiet ]] || say "$1 $v on PATH ($p) does not fit (needs >= $ROW_MIN, < $ROW_BELOW); not used" >&2
			return 1
		fi
		printf '%s %s\n' "$p" "$v"
		;;
	pulumi)
		# Shipped with the CLI: used from the folder of a fitting pulumi, at the CLI's version.
		line="$(path_candidate pulumi quiet)" || return 1
		p="$(dirname "${line%% *}")/$1"
		[[ -f "$p" && -x "$p" ]] || return 1
		printf '%s %s\n' "$p" "${line#* }"
		;;
	*) return 1 ;;
	esac
}

linked_fits() { # tool: bin/<tool> is a link to a tool on PATH that still exists and fits -> LINKED_VERSION
	local out="$BIN_DIR/$1" stamp v
	[[ -L "$out" && -x "$out" && -f "$out.version" ]] || return 1
	read -r stamp LINKED_VERSION _ <"$out.version"
	[[ "$stamp" == path ]] || return 1
	tool_row "$1" || return 1
	[[ "$ROW_REUSE" == probe ]] || return 0
	# shellcheck disable=SC2086
	v="$(version_of "$out" $ROW_PROBE)" && fits "$v" "$ROW_MIN" "$ROW_BELOW" && LINKED_VERSION="$v"
}
