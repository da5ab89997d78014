// Command git-ssh-server is a git server over ssh (Flux's gittestserver, on
// gitkit) for pko-guard's fetch specs (test/integration/gitops/fetch/): it
// serves the bare repositories of a folder on a free loopback port, with its
// host key in another folder (written there when missing), prints its URL
// (`ssh://git@127.0.0.1:PORT`) on stdout, and serves until it is killed. Every
// public key is accepted, as a test server's.
//
// Usage: git-ssh-server REPOSITORIES KEYS
package main

import (
	"fmt"
	"os"

	"github.com/fluxcd/pkg/gittestserver"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: git-ssh-server REPOSITORIES KEYS")
		os.Exit(2)
	}
	srv := gittestserver.NewGitServer(os.Args[1]).KeyDir(os.Args[2])
	if err := srv.ListenSSH(); err != nil {
		fmt.Fprintln(os.Stderr, "git-ssh-server:", err)
		os.Exit(1)
	}
	fmt.Println(srv.SSHAddress())
	if err := srv.StartSSH(); err != nil {
		fmt.Fprintln(os.Stderr, "git-ssh-server:", err)
		os.Exit(1)
	}
}
