// Command kube-yaml decodes a YAML (or JSON) stream the way Kubernetes clients
// and Argo CD's repo server read manifests: documents split and decoded by
// k8s.io/apimachinery's YAMLOrJSONDecoder, each converted to JSON by
// sigs.k8s.io/yaml (go-yaml v2 resolver: YAML 1.1 booleans, merge keys).
//
// It exists for pko-guard's differential test (test/integration/gitops/decode/kube-yaml.spec.ts):
// stdin is the stream, stdout one JSON object, either
//
//	{"docs":[<doc>, ...]}    every non-empty document, in order ("null" and empty ones skipped)
//	{"error":"<message>"}    the stream does not decode (the first error, as Argo CD stops there)
//
// The exit status is 0 in both cases; 1 only when stdin cannot be read.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	kubeyaml "k8s.io/apimachinery/pkg/util/yaml"
)

func main() {
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kube-yaml: reading stdin:", err)
		os.Exit(1)
	}
	docs, err := decode(in)
	var out []byte
	if err != nil {
		out, _ = json.Marshal(map[string]string{"error": err.Error()})
	} else {
		out, _ = json.Marshal(map[string][]json.RawMessage{"docs": docs})
	}
	os.Stdout.Write(append(out, '\n'))
}

// decode mirrors the document loop of Argo CD's kube.SplitYAML (gitops-engine)
// and kubectl's stream visitor: decode into a RawExtension, skip empty and null
// documents, stop at the first error.
func decode(in []byte) ([]json.RawMessage, error) {
	d := kubeyaml.NewYAMLOrJSONDecoder(bytes.NewReader(in), 4096)
	docs := []json.RawMessage{}
	for {
		ext := runtime.RawExtension{}
		if err := d.Decode(&ext); err != nil {
			if errors.Is(err, io.EOF) {
				return docs, nil
			}
			return nil, err
		}
		raw := bytes.TrimSpace(ext.Raw)
		if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
			continue
		}
		docs = append(docs, json.RawMessage(raw))
	}
}
