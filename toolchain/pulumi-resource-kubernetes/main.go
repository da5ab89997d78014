// Command pulumi-resource-kubernetes builds the Pulumi Kubernetes resource
// provider from the pinned github.com/pulumi/pulumi-kubernetes/provider/v4
// module. The upstream command embeds schema files that are generated at
// build time and therefore are not part of the module zip; toolchain/install.sh
// generates them (see ./embedgen) into a build copy of this directory.
package main

import (
	_ "embed"

	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/provider"
	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version"
)

//go:embed schema-embed.json
var pulumiSchema []byte

//go:embed terraform-mapping-embed.json
var terraformMapping []byte

func main() {
	provider.Serve("kubernetes", version.Version, pulumiSchema, terraformMapping)
}
