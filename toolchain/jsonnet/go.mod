module pko-guard/toolchain/jsonnet

go 1.25.11

tool (
	github.com/google/go-jsonnet/cmd/jsonnet
	github.com/google/go-jsonnet/cmd/jsonnet-deps
)

require (
	github.com/fatih/color v1.18.0 // indirect
	github.com/google/go-jsonnet v0.22.0 // indirect
	github.com/mattn/go-colorable v0.1.13 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
	golang.org/x/crypto v0.45.0 // indirect
	golang.org/x/sys v0.38.0 // indirect
	sigs.k8s.io/yaml v1.4.0 // indirect
)
