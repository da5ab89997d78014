//go:build tools

// Package schemas pins what toolchain/install.sh needs to generate the PKO
// Stack CRD: the operator's API types and the standard CRD generator.
package schemas

import (
	_ "github.com/pulumi/pulumi-kubernetes-operator/pkg/apis/pulumi/v1"
	_ "github.com/pulumi/pulumi-kubernetes-operator/pkg/apis/pulumi/v1alpha1"
	_ "sigs.k8s.io/controller-tools/cmd/controller-gen"
)
