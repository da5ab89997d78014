package main

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/fluxcd/pkg/sourceignore"
)

// maxArtifactFiles bounds the files of one source's artifact (a bound on hostile input).
const maxArtifactFiles = 200000

// ignoreMatcher is source-controller's filter for a GitRepository's artifact: the repository's .sourceignore
// files and spec.ignore; Flux's default excludes when neither gives a pattern, else only its VCS excludes
// before them (internal/storage SourceIgnoreFilter).
func ignoreMatcher(root string, ignore *string) (func(string, bool) bool, error) {
	domain := strings.Split(root, string(filepath.Separator))
	ps, err := sourceignore.LoadIgnorePatterns(root, domain)
	if err != nil {
		return nil, err
	}
	if ignore != nil {
		ps = append(ps, sourceignore.ReadPatterns(strings.NewReader(*ignore), domain)...)
	}
	matcher := sourceignore.NewDefaultMatcher(ps, domain)
	if len(ps) > 0 {
		matcher = sourceignore.NewMatcher(append(sourceignore.VCSPatterns(domain), ps...))
	}
	return func(p string, dir bool) bool {
		return matcher.Match(strings.Split(p, string(filepath.Separator)), dir)
	}, nil
}

// sourceArtifact copies what source-controller's artifact of root holds into a new temporary folder: the
// regular files the filter does not exclude (each file matched on its own, as Archive walks them), and lists
// the files it leaves out in src.Ignored. It returns the folder and a function that removes it.
func sourceArtifact(root string, src *sourceRequest) (string, func(), error) {
	match, err := ignoreMatcher(root, src.Ignore)
	if err != nil {
		return "", nil, err
	}
	out, err := os.MkdirTemp("", "flux-build-artifact-")
	if err != nil {
		return "", nil, err
	}
	cleanup := func() { _ = os.RemoveAll(out) }
	var ignored []string
	files := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, walkErr error) error {
		if walkErr != nil {
			return walkErr
		}
		if p == root {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(out, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if match(p, false) {
			ignored = append(ignored, filepath.ToSlash(rel))
			return nil
		}
		if files++; files > maxArtifactFiles {
			return fs.ErrInvalid
		}
		return copyRegular(p, filepath.Join(out, rel))
	})
	if err == nil && src.Ignored != "" {
		list := strings.Join(ignored, "\n")
		if list != "" {
			list += "\n"
		}
		err = os.WriteFile(src.Ignored, []byte(list), 0o600)
	}
	if err != nil {
		cleanup()
		return "", nil, err
	}
	return out, cleanup, nil
}

func copyRegular(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	o, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(o, in); err != nil {
		_ = o.Close()
		return err
	}
	return o.Close()
}
