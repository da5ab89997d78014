// Command embedgen writes schema-embed.json and terraform-mapping-embed.json
// for the wrapper's main package: it reads schema.json and
// terraform-mapping.json from the provider module's
// cmd/pulumi-resource-kubernetes directory, stamps the schema's "version",
// and writes both compacted into the output directory.
//
// Usage: go run ./embedgen <provider-module-dir> <out-dir> <version>
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: embedgen <provider-module-dir> <out-dir> <version>")
		os.Exit(2)
	}
	src := filepath.Join(os.Args[1], "cmd", "pulumi-resource-kubernetes")
	out, version := os.Args[2], os.Args[3]

	raw, err := os.ReadFile(filepath.Join(src, "schema.json"))
	check(err)
	var spec map[string]json.RawMessage
	check(json.Unmarshal(raw, &spec))
	v, err := json.Marshal(version)
	check(err)
	spec["version"] = v
	schema, err := json.Marshal(spec)
	check(err)
	check(os.WriteFile(filepath.Join(out, "schema-embed.json"), schema, 0o644))

	raw, err = os.ReadFile(filepath.Join(src, "terraform-mapping.json"))
	check(err)
	var mapping bytes.Buffer
	check(json.Compact(&mapping, raw))
	check(os.WriteFile(filepath.Join(out, "terraform-mapping-embed.json"), mapping.Bytes(), 0o644))
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "embedgen:", err)
		os.Exit(1)
	}
}
