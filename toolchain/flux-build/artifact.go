package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fluxcd/pkg/sourceignore"
)

// maxArtifactFiles bounds the files of one source's tree (a bound on hostile input).
const maxArtifactFiles = 1000000

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

// asArtifact makes root (check's own scratch copy of the source) hold what source-controller's artifact of it
// holds, for the time of one build: the files the filter excludes (each matched on its own, as Archive walks
// them) and everything that is not a regular file or a folder (symlinks: Archive leaves them out) are moved
// aside into a sibling folder. It lists the excluded files in src.Ignored and returns what puts them back.
func asArtifact(root, path string, src *sourceRequest) (func(), error) {
	match, err := ignoreMatcher(root, src.Ignore)
	if err != nil {
		return nil, err
	}
	// The path is in the artifact when an entry at or below it is: the folder itself or anything below it that
	// the filter keeps (untarring an entry creates its folders).
	inArtifact := path == root
	var aside, ignored []string
	files := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, walkErr error) error {
		if walkErr != nil {
			return walkErr
		}
		if p == root {
			return nil
		}
		below := p == path || strings.HasPrefix(p, path+string(filepath.Separator))
		if d.IsDir() {
			if below && !match(p, true) {
				inArtifact = true
			}
			return nil
		}
		if files++; files > maxArtifactFiles {
			return errors.New("the source holds too many files")
		}
		if !d.Type().IsRegular() {
			aside = append(aside, p)
			return nil
		}
		if !match(p, false) {
			inArtifact = inArtifact || below
		} else {
			aside = append(aside, p)
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			ignored = append(ignored, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !inArtifact {
		return nil, errors.New("the path is not in the source's artifact (its files are all ignored)")
	}
	if src.Ignored != "" {
		list := strings.Join(ignored, "\n")
		if list != "" {
			list += "\n"
		}
		if err := os.WriteFile(src.Ignored, []byte(list), 0o600); err != nil {
			return nil, err
		}
	}
	if len(aside) == 0 {
		return func() {}, nil
	}
	side, err := os.MkdirTemp(filepath.Dir(root), ".flux-build-ignored-")
	if err != nil {
		return nil, err
	}
	type moved struct{ from, to string }
	var done []moved
	restore := func() {
		for i := len(done) - 1; i >= 0; i-- {
			_ = os.Rename(done[i].to, done[i].from)
		}
		_ = os.RemoveAll(side)
	}
	for i, p := range aside {
		to := filepath.Join(side, strconv.Itoa(i))
		if err := os.Rename(p, to); err != nil {
			restore()
			return nil, err
		}
		done = append(done, moved{p, to})
	}
	return restore, nil
}
