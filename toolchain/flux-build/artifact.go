package main

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/fluxcd/pkg/sourceignore"
)

// maxArtifactFiles bounds the files of one source's tree (a bound on hostile input).
const maxArtifactFiles = 1000000

// artifactRequest asks for a source's artifact as source-controller archives it, written out as a tree.
type artifactRequest struct {
	// Root is the source's tree: its checkout, with what spec.include copies into it already in place.
	Root string `json:"root"`
	// Into is the folder (made by the caller, empty) the artifact's files are written into.
	Into string `json:"into"`
	// Ignore is the source's spec.ignore, when set.
	Ignore *string `json:"ignore"`
	// Ignored is a file to list the files the filter leaves out in, one root-relative path a line.
	Ignored string `json:"ignored"`
	// Skip names folders not walked at all, wherever they are (a working tree's `.git` and `node_modules`: what
	// a checkout of the repository would not hold).
	Skip []string `json:"skip"`
}

// ignoreMatcher is source-controller's filter for a GitRepository's artifact: the repository's .sourceignore
// files and spec.ignore; Flux's default excludes when neither gives a pattern, else only its VCS excludes
// before them (storage.SourceIgnoreFilter of github.com/fluxcd/pkg/artifact).
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

// artifact writes into req.Into what source-controller's artifact of req.Root holds once untarred, as Storage.Archive
// builds it: the walk keeps regular files and folders only (symbolic links are left out), and the filter is asked
// about each entry on its own (a matched folder's entry is left out, its files are matched one by one); a folder
// the filter keeps is in the artifact even when empty. The files left out are listed in req.Ignored.
func artifact(req artifactRequest) error {
	if req.Root == "" || req.Into == "" {
		return errors.New("the artifact request needs root and into")
	}
	root, err := filepath.Abs(req.Root)
	if err != nil {
		return err
	}
	into, err := filepath.Abs(req.Into)
	if err != nil {
		return err
	}
	match, err := ignoreMatcher(root, req.Ignore)
	if err != nil {
		return err
	}
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
		if files++; files > maxArtifactFiles {
			return errors.New("the source holds too many files")
		}
		if d.IsDir() {
			for _, name := range req.Skip {
				if d.Name() == name {
					return filepath.SkipDir
				}
			}
			if !match(p, true) {
				return os.MkdirAll(filepath.Join(into, rel), 0o750)
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if match(p, false) {
			ignored = append(ignored, filepath.ToSlash(rel))
			return nil
		}
		return copyFile(p, filepath.Join(into, rel))
	})
	if err != nil {
		return err
	}
	if req.Ignored == "" {
		return nil
	}
	list := strings.Join(ignored, "\n")
	if list != "" {
		list += "\n"
	}
	return os.WriteFile(req.Ignored, []byte(list), 0o600)
}

// copyFile copies one regular file, making its folder (untarring a file makes the folders it is in).
func copyFile(from, to string) error {
	if err := os.MkdirAll(filepath.Dir(to), 0o750); err != nil {
		return err
	}
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
