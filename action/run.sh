#!/usr/bin/env bash
# The command step of action.yml (the repository root's composite action): turns the action's inputs, given as
# PKO_GUARD_* environment variables, into one pko-guard command line, runs it, and records its exit code and
# the SARIF file for the upload step ($GITHUB_OUTPUT). Exits with pko-guard's own code.
set -uo pipefail

bin="${PKO_GUARD_BIN:-${GITHUB_ACTION_PATH:?}/bin/cli/pko-guard.js}"
command="${PKO_GUARD_COMMAND:-check}"
out="${GITHUB_OUTPUT:-/dev/null}"

fail() {
    echo "::error title=pko-guard::$1"
    echo "exit-code=2" >>"$out"
    exit 2
}

args=()
case "$command" in
check | gate) args+=("$command") ;;
*) fail "command must be check or gate" ;;
esac

# Paths: one a line; a single line may list several, separated by spaces.
paths=()
while IFS= read -r line; do
    line="${line#"${line%%[![:space:]]*}"}"
    line="${line%"${line##*[![:space:]]}"}"
    [ -z "$line" ] && continue
    if [ "$(printf '%s\n' "${PKO_GUARD_PATHS:-.}" | grep -c .)" -eq 1 ]; then
        read -r -a words <<<"$line"
        paths+=("${words[@]}")
    else
        paths+=("$line")
    fi
done <<<"${PKO_GUARD_PATHS:-.}"
[ "${#paths[@]}" -eq 0 ] && paths=(.)

if [ "$command" = gate ]; then
    [ "${#paths[@]}" -eq 1 ] || fail "gate takes one project folder in paths"
    [ -n "${PKO_GUARD_STACK:-}" ] || fail "gate needs the stack input"
    args+=("${paths[0]}" --stack "$PKO_GUARD_STACK")
else
    args+=("${paths[@]}")
fi
[ -n "${PKO_GUARD_CONFIG:-}" ] && args+=(--config "$PKO_GUARD_CONFIG")
case "${PKO_GUARD_FAIL_ON_ADVISORY:-false}" in
true) args+=(--fail-on-advisory) ;;
false | "") ;;
*) fail "fail-on-advisory must be true or false" ;;
esac
while IFS= read -r report; do
    report="${report#"${report%%[![:space:]]*}"}"
    report="${report%"${report##*[![:space:]]}"}"
    [ -n "$report" ] && args+=(--report "$report")
done <<<"${PKO_GUARD_REPORTS:-}"

sarif=""
if [ "${PKO_GUARD_UPLOAD_SARIF:-false}" = true ]; then
    sarif="${PKO_GUARD_SARIF_FILE:-pko-guard.sarif}"
    case "$sarif" in /*) ;; *) sarif="$PWD/$sarif" ;; esac
    args+=(--report "sarif=$sarif")
fi

node "$bin" "${args[@]}"
code=$?
echo "exit-code=$code" >>"$out"
[ -n "$sarif" ] && [ -f "$sarif" ] && echo "sarif=$sarif" >>"$out"
exit "$code"
