#!/usr/bin/env bash
# Regenerates cases.json from Go's own path.Match (needs only Go; no module, standard library only).
set -euo pipefail
cd "$(dirname "$0")"
go run generate.go > cases.json.tmp
mv cases.json.tmp cases.json
echo "wrote $(pwd)/cases.json"
