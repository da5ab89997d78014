// Command oci-registry is a real OCI registry (distribution/distribution's own
// registry application, in-memory storage) for pko-guard's fetch specs
// (test/integration/gitops/fetch/): it listens on a free loopback port, prints
// the port on stdout, and serves until it is killed. With REGISTRY_USER and
// REGISTRY_PASSWORD set, it asks for them (htpasswd basic auth, as a private
// registry does).
package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"

	"github.com/distribution/distribution/v3/configuration"
	_ "github.com/distribution/distribution/v3/registry/auth/htpasswd"
	"github.com/distribution/distribution/v3/registry/handlers"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/inmemory"
	"golang.org/x/crypto/bcrypt"
)

func main() {
	config := &configuration.Configuration{}
	config.Storage = configuration.Storage{
		"inmemory":    configuration.Parameters{},
		"maintenance": configuration.Parameters{"uploadpurging": map[interface{}]interface{}{"enabled": false}},
	}
	config.Log.Level = "error"
	if user := os.Getenv("REGISTRY_USER"); user != "" {
		hash, err := bcrypt.GenerateFromPassword([]byte(os.Getenv("REGISTRY_PASSWORD")), bcrypt.MinCost)
		if err != nil {
			fmt.Fprintln(os.Stderr, "oci-registry:", err)
			os.Exit(1)
		}
		dir, err := os.MkdirTemp("", "oci-registry-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "oci-registry:", err)
			os.Exit(1)
		}
		defer os.RemoveAll(dir)
		file := filepath.Join(dir, "htpasswd")
		if err := os.WriteFile(file, []byte(user+":"+string(hash)+"\n"), 0o600); err != nil {
			fmt.Fprintln(os.Stderr, "oci-registry:", err)
			os.Exit(1)
		}
		config.Auth = configuration.Auth{"htpasswd": configuration.Parameters{"realm": "pko-guard-test", "path": file}}
	}
	app := handlers.NewApp(context.Background(), config)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "oci-registry:", err)
		os.Exit(1)
	}
	fmt.Println(l.Addr().(*net.TCPAddr).Port)
	if err := http.Serve(l, app); err != nil {
		fmt.Fprintln(os.Stderr, "oci-registry:", err)
		os.Exit(1)
	}
}
