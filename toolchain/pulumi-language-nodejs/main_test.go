package main

import (
	"os"
	"path/filepath"
	"testing"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// findModule must find what Node's require.resolve finds for the modules the host starts.
func TestFindModule(t *testing.T) {
	root := t.TempDir()
	t.Setenv("NODE_PATH", "")
	sdk := filepath.Join(root, "node_modules", "@pulumi", "pulumi")
	write(t, filepath.Join(sdk, "cmd", "run-policy-pack", "index.js"), "")
	write(t, filepath.Join(sdk, "cmd", "run", "index.js"), "")
	write(t, filepath.Join(root, "node_modules", "withmain", "package.json"), `{"main": "lib/start"}`)
	write(t, filepath.Join(root, "node_modules", "withmain", "lib", "start.js"), "")
	write(t, filepath.Join(root, "pack", "local.js"), "")
	pack := filepath.Join(root, "pack", "deeper")
	if err := os.MkdirAll(pack, 0o755); err != nil {
		t.Fatal(err)
	}
	for mod, want := range map[string]string{
		"@pulumi/pulumi/cmd/run-policy-pack": filepath.Join(sdk, "cmd", "run-policy-pack", "index.js"),
		"@pulumi/pulumi/cmd/run":             filepath.Join(sdk, "cmd", "run", "index.js"),
		"withmain":                           filepath.Join(root, "node_modules", "withmain", "lib", "start.js"),
		"../local":                           filepath.Join(root, "pack", "local.js"),
	} {
		got, ok := findModule(pack, mod)
		wantReal, _ := filepath.EvalSymlinks(want)
		if !ok || got != wantReal {
			t.Errorf("findModule(%q) = %q, %v; want %q", mod, got, ok, wantReal)
		}
	}
	if got, ok := findModule(pack, "@pulumi/pulumi/cmd/missing"); ok {
		t.Errorf("found a module that does not exist: %q", got)
	}
	// NODE_PATH is searched after the node_modules folders.
	other := t.TempDir()
	write(t, filepath.Join(other, "elsewhere", "index.js"), "")
	t.Setenv("NODE_PATH", other)
	if _, ok := findModule(pack, "elsewhere"); !ok {
		t.Error("NODE_PATH was not searched")
	}
}
