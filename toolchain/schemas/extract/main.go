// Command extract turns the CustomResourceDefinition that controller-gen
// generated from the PKO API types into one JSON schema file per served
// version (pko-stack-<version>.json), and copies the Kubernetes OpenAPI
// (swagger) document of a pinned Kubernetes release next to them.
//
//	extract CRD_YAML SWAGGER_JSON OUT_DIR
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"
)

type crd struct {
	Kind string `json:"kind"`
	Spec struct {
		Group string `json:"group"`
		Names struct {
			Kind string `json:"kind"`
		} `json:"names"`
		Versions []struct {
			Name   string `json:"name"`
			Schema struct {
				OpenAPIV3Schema json.RawMessage `json:"openAPIV3Schema"`
			} `json:"schema"`
		} `json:"versions"`
	} `json:"spec"`
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "extract: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	if len(os.Args) != 4 {
		fail("usage: extract CRD_YAML SWAGGER_JSON OUT_DIR")
	}
	crdFile, swaggerFile, outDir := os.Args[1], os.Args[2], os.Args[3]

	raw, err := os.ReadFile(crdFile)
	if err != nil {
		fail("%v", err)
	}
	var c crd
	if err := yaml.Unmarshal(raw, &c); err != nil {
		fail("%s: %v", crdFile, err)
	}
	if c.Kind != "CustomResourceDefinition" || c.Spec.Group != "pulumi.com" || c.Spec.Names.Kind != "Stack" {
		fail("%s is not the pulumi.com Stack CRD", crdFile)
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		fail("%v", err)
	}
	for _, v := range c.Spec.Versions {
		if len(v.Schema.OpenAPIV3Schema) == 0 {
			fail("version %s has no openAPIV3Schema", v.Name)
		}
		out := filepath.Join(outDir, "pko-stack-"+v.Name+".json")
		if err := os.WriteFile(out, v.Schema.OpenAPIV3Schema, 0o644); err != nil {
			fail("%v", err)
		}
		fmt.Println(out)
	}

	swagger, err := os.ReadFile(swaggerFile)
	if err != nil {
		fail("%v", err)
	}
	var probe struct {
		Definitions map[string]json.RawMessage `json:"definitions"`
	}
	if err := json.Unmarshal(swagger, &probe); err != nil || len(probe.Definitions) == 0 {
		fail("%s is not a Kubernetes swagger document", swaggerFile)
	}
	out := filepath.Join(outDir, "kubernetes-swagger.json")
	if err := os.WriteFile(out, swagger, 0o644); err != nil {
		fail("%v", err)
	}
	fmt.Println(out)
}
