package main

import (
	"errors"
	"os"

	"github.com/fluxcd/pkg/tar"
)

// untarRequest asks for a Flux OCI artifact's layer (a gzip-compressed tarball) extracted into a folder.
type untarRequest struct {
	Archive  string `json:"archive"`
	Into     string `json:"into"`
	MaxBytes int    `json:"maxBytes"`
}

// untar extracts the layer as source-controller extracts an OCIRepository's (fluxcd/pkg/tar Untar: no path
// outside the folder, symlinks skipped), within MaxBytes decompressed.
func untar(req untarRequest) error {
	if req.Archive == "" || req.Into == "" || req.MaxBytes <= 0 {
		return errors.New("the untar request needs archive, into and maxBytes")
	}
	f, err := os.Open(req.Archive)
	if err != nil {
		return err
	}
	defer f.Close()
	return tar.Untar(f, req.Into, tar.WithMaxUntarSize(req.MaxBytes), tar.WithSkipSymlinks())
}
