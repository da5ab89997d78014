// Command crddiff compares two CustomResourceDefinition YAML files structurally:
// every "description" key is dropped, then the documents are compared as data
// and each differing path is printed. It exits 1 when they differ.
//
//	crddiff GENERATED_YAML UPSTREAM_YAML
package main

import (
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

func load(path string) any {
	raw, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "crddiff: %v\n", err)
		os.Exit(2)
	}
	var doc any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		fmt.Fprintf(os.Stderr, "crddiff: %s: %v\n", path, err)
		os.Exit(2)
	}
	return strip(doc)
}

// strip removes descriptions, which maxDescLen=0 leaves out on purpose.
func strip(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range t {
			if k == "description" {
				continue
			}
			out[k] = strip(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = strip(x)
		}
		return out
	}
	return v
}

func diff(path string, a, b any, out *[]string) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			x, inA := am[k]
			y, inB := bm[k]
			switch {
			case !inA:
				*out = append(*out, fmt.Sprintf("only upstream: %s.%s", path, k))
			case !inB:
				*out = append(*out, fmt.Sprintf("only generated: %s.%s", path, k))
			default:
				diff(path+"."+k, x, y, out)
			}
		}
		return
	}
	al, aok := a.([]any)
	bl, bok := b.([]any)
	if aok && bok && len(al) == len(bl) {
		for i := range al {
			diff(fmt.Sprintf("%s[%d]", path, i), al[i], bl[i], out)
		}
		return
	}
	if !reflect.DeepEqual(a, b) {
		*out = append(*out, fmt.Sprintf("differs: %s: generated %v, upstream %v", path, a, b))
	}
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: crddiff GENERATED_YAML UPSTREAM_YAML")
		os.Exit(2)
	}
	var out []string
	diff("", load(os.Args[1]), load(os.Args[2]), &out)
	if len(out) == 0 {
		return
	}
	fmt.Println(strings.Join(out, "\n"))
	os.Exit(1)
}
