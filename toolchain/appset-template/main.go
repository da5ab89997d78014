// Command appset-template expands an Argo CD ApplicationSet's template the way
// Argo CD's ApplicationSet controller does when `spec.goTemplate` is true:
// every string of the template (map keys included) is executed as a Go
// text/template with the generator's parameters as data, with the sprig
// functions Argo CD offers (all of sprig's generic functions except env,
// expandenv and getHostByName) and Argo CD's own: normalize, slugify, toYaml,
// fromYaml, fromYamlArray and tpl; `spec.goTemplateOptions` (such as
// "missingkey=error") are applied as template options.
//
// pko-guard check runs it (core/render/argocd.ts). Input on stdin, one JSON object:
//
//	{"template": <the template, JSON>, "params": [<parameter set>, ...], "options": ["missingkey=error", ...],
//	 "values": {"<key>": "<template>", ...}}
//
// Output on stdout, one JSON object, one result per parameter set, in order:
//
//	{"results": [{"app": <rendered template>} | {"error": "<why>"}, ...]}
//
// An error never quotes the template or a parameter value (a parameter can be a
// secret): only the kind of failure. Exit status 0; 1 when the input is not valid JSON.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	"github.com/gosimple/slug"
	"sigs.k8s.io/yaml"
)

type request struct {
	Template any              `json:"template"`
	Params   []map[string]any `json:"params"`
	Options  []string         `json:"options"`
	// Values of the generator (git `values`): each is rendered with the parameter set, and the results
	// become the parameter `values` (a map), as Argo CD does before rendering the template.
	Values map[string]string `json:"values"`
}

type result struct {
	App   any    `json:"app,omitempty"`
	Error string `json:"error,omitempty"`
}

// maxInput bounds what is read: an ApplicationSet and its parameters are small.
const maxInput = 64 << 20

// tplDepth bounds nested `tpl` calls, as Argo CD does.
const tplDepth = 3

var invalidName = regexp.MustCompile(`[^-a-z0-9.]`)

// normalize: lower case, characters outside [-a-z0-9.] become '-', at most 253
// characters, no leading or trailing '-' or '.' (a DNS subdomain name).
func normalize(name string) string {
	name = invalidName.ReplaceAllString(strings.ToLower(name), "-")
	if len(name) > 253 {
		name = name[:253]
	}
	return strings.Trim(name, "-.")
}

// slugify [maxLength [smartTruncate]] name: the normalized name made a slug of
// at most maxLength (default 50) characters, truncated at a word boundary
// unless smartTruncate is false.
func slugify(args ...any) (string, error) {
	if len(args) == 0 || len(args) > 3 {
		return "", errors.New("slugify takes [maxLength [smartTruncate]] name")
	}
	name, ok := args[len(args)-1].(string)
	if !ok {
		return "", errors.New("slugify: the name is not a string")
	}
	max, smart := 50, true
	if len(args) >= 2 {
		if max, ok = args[0].(int); !ok {
			return "", errors.New("slugify: maxLength is not an integer")
		}
	}
	if len(args) == 3 {
		if smart, ok = args[1].(bool); !ok {
			return "", errors.New("slugify: smartTruncate is not a boolean")
		}
	}
	slug.MaxLength = max
	slug.EnableSmartTruncate = smart
	return slug.Make(normalize(name)), nil
}

func toYaml(v any) (string, error) {
	out, err := yaml.Marshal(v)
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(string(out), "\n"), nil
}

func fromYaml(s string) (map[string]any, error) {
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		return nil, errors.New("fromYaml: not a YAML map")
	}
	return m, nil
}

func fromYamlArray(s string) ([]any, error) {
	a := []any{}
	if err := yaml.Unmarshal([]byte(s), &a); err != nil {
		return nil, errors.New("fromYamlArray: not a YAML list")
	}
	return a, nil
}

func functions() template.FuncMap {
	f := sprig.GenericFuncMap()
	for _, name := range []string{"env", "expandenv", "getHostByName"} {
		delete(f, name)
	}
	f["normalize"] = normalize
	f["slugify"] = slugify
	f["toYaml"] = toYaml
	f["fromYaml"] = fromYaml
	f["fromYamlArray"] = fromYamlArray
	return f
}

// base holds the functions; each string is parsed into a clone with the options and a tpl bound to it.
func newRenderer(options []string) (func(string, map[string]any) (string, error), error) {
	base := template.New("template").Funcs(functions())
	for _, o := range options {
		if err := optionOK(o); err != nil {
			return nil, err
		}
		base = base.Option(o)
	}
	return func(text string, data map[string]any) (string, error) {
		t, err := base.Clone()
		if err != nil {
			return "", errors.New("cannot clone the template")
		}
		depth := 0
		var tpl func(string, any) (string, error)
		tpl = func(inner string, v any) (string, error) {
			depth++
			defer func() { depth-- }()
			if depth > tplDepth {
				return "", fmt.Errorf("tpl nested deeper than %d", tplDepth)
			}
			c, err := t.Clone()
			if err != nil {
				return "", errors.New("cannot clone the template")
			}
			c, err = c.New(t.Name()).Parse(inner)
			if err != nil {
				return "", errors.New("tpl: the template does not parse")
			}
			var b strings.Builder
			if err := c.Execute(&b, v); err != nil {
				return "", errors.New("tpl: the template does not execute")
			}
			return strings.ReplaceAll(b.String(), "<no value>", ""), nil
		}
		t = t.Funcs(template.FuncMap{"tpl": tpl})
		p, err := t.Parse(text)
		if err != nil {
			return "", errors.New("a template string does not parse")
		}
		b := &capped{}
		if err := p.Execute(b, data); err != nil {
			if b.over {
				return "", fmt.Errorf("a template string renders more than %d bytes", maxString)
			}
			return "", fmt.Errorf("a template string does not execute (%s)", reason(err))
		}
		return b.String(), nil
	}, nil
}

// maxString bounds one rendered string (an Application is at most what the API server stores, ~1.5 MB).
const maxString = 2 << 20

// capped is a strings.Builder that refuses to grow past maxString, which stops the template's execution.
type capped struct {
	strings.Builder
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if c.Len()+len(p) > maxString {
		c.over = true
		return 0, errors.New("too large")
	}
	return c.Builder.Write(p)
}

// optionOK accepts what text/template's Option accepts (it panics on anything else).
func optionOK(o string) error {
	switch o {
	case "missingkey=default", "missingkey=invalid", "missingkey=zero", "missingkey=error":
		return nil
	}
	return errors.New("goTemplateOptions: unknown option (expected missingkey=default|invalid|zero|error)")
}

// reason names the kind of execution failure without the template text or a value.
func reason(err error) string {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "map has no entry for key"):
		return "a parameter it names does not exist"
	case strings.Contains(msg, "can't evaluate field"):
		return "a field it names does not exist"
	case strings.Contains(msg, "error calling"):
		return "a function failed"
	case strings.Contains(msg, "wrong number of args"), strings.Contains(msg, "wrong type for value"):
		return "a function got the wrong arguments"
	}
	return "execution failed"
}

// render walks the template: strings and map keys are executed, everything else is kept.
func render(v any, data map[string]any, run func(string, map[string]any) (string, error)) (any, error) {
	switch x := v.(type) {
	case string:
		return run(x, data)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			r, err := render(e, data, run)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if e == nil {
				continue
			}
			r, err := render(e, data, run)
			if err != nil {
				return nil, err
			}
			key, err := run(k, data)
			if err != nil {
				return nil, err
			}
			out[key] = r
		}
		return out, nil
	}
	return v, nil
}

// memoryLimit bounds what a template may allocate (`repeat`, `until` and friends can ask for gigabytes): the
// address space is capped, so a hostile template ends this process, not the machine.
const memoryLimit = 4 << 30

func main() {
	limitMemory(memoryLimit)
	in, err := io.ReadAll(io.LimitReader(os.Stdin, maxInput+1))
	if err != nil || len(in) > maxInput {
		fmt.Fprintln(os.Stderr, "appset-template: cannot read the input (at most 64 MiB)")
		os.Exit(1)
	}
	var req request
	dec := json.NewDecoder(bytes.NewReader(in))
	dec.UseNumber() // numbers stay exact (a template never changes them)
	if err := dec.Decode(&req); err != nil {
		fmt.Fprintln(os.Stderr, "appset-template: the input is not the expected JSON")
		os.Exit(1)
	}
	results := make([]result, len(req.Params))
	run, err := newRenderer(req.Options)
	for i, params := range req.Params {
		if err != nil {
			results[i] = result{Error: err.Error()}
			continue
		}
		if len(req.Values) > 0 {
			values := make(map[string]any, len(req.Values))
			var verr error
			for k, v := range req.Values {
				if values[k], verr = run(v, params); verr != nil {
					break
				}
			}
			if verr != nil {
				results[i] = result{Error: "values: " + verr.Error()}
				continue
			}
			params["values"] = values
		}
		app, rerr := render(req.Template, params, run)
		if rerr != nil {
			results[i] = result{Error: rerr.Error()}
		} else {
			results[i] = result{App: app}
		}
	}
	out, _ := json.Marshal(map[string]any{"results": results})
	os.Stdout.Write(append(out, '\n'))
}
