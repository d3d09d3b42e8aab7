// pulumi-resource-kubernetes built from the published github.com/pulumi/pulumi-kubernetes/provider/v4 module.
//
// The published cmd/pulumi-resource-kubernetes/main.go embeds schema-embed.json and
// terraform-mapping-embed.json, which are generated at release time and not in the module, so it cannot
// be built as published. This is that main with the embeds pointed at the files build.sh copies from the
// module's committed cmd/pulumi-resource-kubernetes/{schema.json,terraform-mapping.json}.
package main

import (
	_ "embed"

	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/provider"
	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version"
)

//go:embed schema.json
var pulumiSchema []byte

//go:embed terraform-mapping.json
var terraformMapping []byte

func main() {
	provider.Serve("kubernetes", version.Version, pulumiSchema, terraformMapping)
}
