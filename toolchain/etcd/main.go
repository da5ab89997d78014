// Command etcd is upstream etcd's server entry point (go.etcd.io/etcd/v3's
// main.go calls etcdmain.Main), built from the go.etcd.io/etcd/server/v3
// module so no replace directive of the root module is needed.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
