#!/usr/bin/env bash
# Fetches the published PolicyReport / ClusterPolicyReport CustomResourceDefinitions (wgpolicyk8s.io/v1alpha2)
# that `pko-guard check --report policyreport=FILE` is validated against
# (test/integration/reports/policyreport.spec.ts).
#
#   schemas/policyreport/fetch.sh [KYVERNO_VERSION]
#
# The Kubernetes Policy WG's own module (sigs.k8s.io/wg-policy-prototypes) is not served by the Go module proxy
# here; Kyverno, which installs these CRDs in clusters, ships them in its module as config/crds/policyreport.
# The files are copied unchanged from the module the proxy serves (checksum verified by the go command against
# the checksum database) and their hashes written to PROVENANCE.md.
set -euo pipefail
version="${1:-v1.19.1}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="$here/v1alpha2"
dir="$(go mod download -json "github.com/kyverno/kyverno@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
sum="$(go mod download -json "github.com/kyverno/kyverno@$version" | sed -n 's/^[[:space:]]*"Sum": "\(.*\)",$/\1/p')"
[[ -d "$dir/config/crds/policyreport" ]] || { echo "fetch.sh: no config/crds/policyreport in github.com/kyverno/kyverno@$version" >&2; exit 2; }
mkdir -p "$out"
files=(wgpolicyk8s.io_policyreports.yaml wgpolicyk8s.io_clusterpolicyreports.yaml)
for f in "${files[@]}"; do install -m 0644 "$dir/config/crds/policyreport/$f" "$out/$f"; done
{
    echo "# PolicyReport CRDs (wgpolicyk8s.io/v1alpha2), copied unchanged"
    echo
    echo "Source: Go module \`github.com/kyverno/kyverno@$version\` (module sum \`$sum\`), served by the Go module"
    echo "proxy, folder \`config/crds/policyreport/\`. Regenerate with \`schemas/policyreport/fetch.sh $version\`."
    echo
    echo "| file | sha256 |"
    echo "|---|---|"
    for f in "${files[@]}"; do echo "| \`$f\` | \`$(sha256sum "$out/$f" | cut -d' ' -f1)\` |"; done
} >"$out/PROVENANCE.md"
echo "fetch.sh: wrote ${files[*]} and PROVENANCE.md to $out"
