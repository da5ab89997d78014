package main

import (
	"encoding/json"
	"errors"
	"regexp"
	"sort"

	"github.com/Masterminds/semver/v3"
	"github.com/fluxcd/pkg/version"
)

// semverRequest asks which of a repository's tags a GitRepository's spec.ref.semver checks out.
type semverRequest struct {
	Range string   `json:"range"`
	Tags  []string `json:"tags"`
	// Filter, an OCIRepository's spec.ref.semverFilter: only tags this regular expression matches count.
	Filter string `json:"filter"`
}

// semverAnswer is the tag chosen, and how many tags are the same version as it (they differ only by build
// metadata: source-controller then takes the one whose commit is newest, which the caller decides).
type semverAnswer struct {
	Tag  string   `json:"tag"`
	Tied []string `json:"tied"`
}

// pickSemver chooses among tags as fluxcd/pkg/git's gogit client does for a semver ref (cloneSemVer), and
// source-controller for an OCIRepository's (getTagBySemver, after its semverFilter): the tags that parse as versions
// (fluxcd/pkg/version ParseVersion) and satisfy the constraint (Masterminds semver), the highest.
func pickSemver(req semverRequest) ([]byte, error) {
	constraint, err := semver.NewConstraint(req.Range)
	if err != nil {
		return nil, errors.New("the semver range does not parse")
	}
	var filter *regexp.Regexp
	if req.Filter != "" {
		if filter, err = regexp.Compile(req.Filter); err != nil {
			return nil, errors.New("the semverFilter is not a valid regular expression")
		}
	}
	var matched semver.Collection
	for _, tag := range req.Tags {
		if filter != nil && !filter.MatchString(tag) {
			continue
		}
		v, err := version.ParseVersion(tag)
		if err != nil || !constraint.Check(v) {
			continue
		}
		matched = append(matched, v)
	}
	if len(matched) == 0 {
		return nil, errors.New("no tag matches the semver range")
	}
	sort.Stable(matched)
	best := matched[len(matched)-1]
	answer := semverAnswer{Tag: best.Original()}
	for _, v := range matched {
		if v.Equal(best) {
			answer.Tied = append(answer.Tied, v.Original())
		}
	}
	return json.Marshal(answer)
}
