// Generates cases.json: Go's own path.Match verdicts over a fixed set of patterns and names, for the
// differential unit test of gitops/argocd/path-match.ts (test/unit/gitops/argocd/path-match.spec.ts). Run it
// with generate.sh.
//
// The cases are every pair of a curated pattern and a curated name, then pseudo-random pairs over a small
// alphabet of the pattern syntax's bytes (fixed seed, so the table is reproducible). Every case keeps Go's
// answer: match, and the error text when the pattern is malformed.
package main

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path"
	"runtime"
	"unicode/utf8"
)

var patterns = []string{
	"", "*", "**", "*/*", "*/*/*", "a", "a*", "*a", "a*b", "a*b*c", "*b*", "a?", "?", "??", "*??", "?*?",
	"a/*", "apps/*", "apps/*/overlays/*", "apps/*/*", "*/base", "apps/[a-c]*", "apps/[^a-c]*", "[a-c]", "[^a-c]",
	"[a-]", "[-a]", "[]", "[]a]", "[^]", "[^]a]", "[\\]a]", "[\\-]", "[a\\-c]", "[a-\\c]", "[x-a]", "[a-c", "[",
	"[a", "[a-", "[^", "a[", "a]", "]", "[*]", "[*", "[?]", "[[]", "[/]", "a[/]b", "a[^b]c", "\\", "a\\", "\\*",
	"\\?", "\\[", "\\a", "a\\*b", "[\\", "[\\]", "*[", "*[a", "*\\", "a*[", "a*\\", "*x*[", "x*[-]", "[a-c]*[",
	"é", "?é", "[é]", "[à-ü]", "[^é]", "*€", "€?", "*??", "[\u00ff-\u0100]", "[\U0001F600-\U0001F64F]", "\\é",
	"apps/*-prod", "clusters/*/apps/*", "*.yaml", "*.y?ml", "[.]*", ".*", "*/", "/*", "//", "a//b", "a/*/b",
}

var names = []string{
	"", "a", "b", "ab", "abc", "abbc", "axbxc", "acb", "ba", "-", "]", "[", "*", "?", "\\", "/", "a/", "/a",
	"a/b", "a/b/c", "a//b", "apps", "apps/a", "apps/billing", "apps/zeta", "apps/billing/overlays/prod",
	"apps/x-prod", "apps/x/prod", "clusters/east/apps/web", "x.yaml", "x.yml", ".hidden", "é", "e", "è", "ü",
	"€", "é€", "aé", "éa", "😀", "\u00ff", "\u0100", "base", "x/base", "x/y/base",
}

func main() {
	var rows [][]byte
	seen := map[[2]string]bool{}
	add := func(p, n string) {
		if !utf8.ValidString(p) || !utf8.ValidString(n) {
			panic("invalid UTF-8")
		}
		if seen[[2]string{p, n}] {
			return
		}
		seen[[2]string{p, n}] = true
		m, err := path.Match(p, n)
		var e any
		if err != nil {
			e = err.Error()
		}
		rows = append(rows, marshal([]any{p, n, m, e}))
	}
	for _, p := range patterns {
		for _, n := range names {
			add(p, n)
		}
	}
	// Random pairs: the pattern syntax's bytes and a few multi-byte characters, so that stars skip into the
	// middle of a character and classes meet every malformation.
	alphabet := []string{"a", "b", "/", "*", "?", "[", "]", "^", "-", "\\", "é", "€", "😀"}
	nameAlphabet := []string{"a", "b", "/", "-", "]", "^", "\\", "é", "€", "😀"}
	r := rand.New(rand.NewPCG(2026, 11))
	word := func(from []string, max int) string {
		s := ""
		for n := r.IntN(max + 1); n > 0; n-- {
			s += from[r.IntN(len(from))]
		}
		return s
	}
	// A name made from the pattern (stars and question marks filled in) matches often, so both answers are common.
	fill := func(p string) string {
		n := ""
		for _, c := range p {
			switch c {
			case '*':
				n += word(nameAlphabet, 2)
			case '?':
				n += nameAlphabet[r.IntN(len(nameAlphabet))]
			default:
				n += string(c)
			}
		}
		return n
	}
	for range 3000 {
		p := word(alphabet, 7)
		add(p, word(nameAlphabet, 6))
		add(p, fill(p))
	}
	out := "{\n\"generator\": \"test/data/path-match/generate.go\",\n\"go\": " + string(marshal(runtime.Version())) + ",\n\"columns\": [\"pattern\", \"name\", \"match\", \"error\"],\n\"cases\": [\n"
	for i, row := range rows {
		out += string(row)
		if i < len(rows)-1 {
			out += ","
		}
		out += "\n"
	}
	out += "]}\n"
	if _, err := os.Stdout.WriteString(out); err != nil {
		panic(err)
	}
}

// marshal is JSON without HTML escaping, so the table reads as the patterns are written.
func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}
