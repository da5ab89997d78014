// Command pulumi-language-nodejs is a small Node.js language host for the
// Pulumi engine, written for pko-guard's offline toolchain.
//
// Upstream's host (github.com/pulumi/pulumi/sdk/nodejs/cmd/pulumi-language-nodejs/v3)
// is an untagged nested module whose pseudo-version for the v3.248.0 release is
// not served by the module proxy this project can reach, and the newest one that
// is served (Aug 2025) predates the engine's current way of starting Node policy
// packs. This host implements what `pulumi preview|up|destroy` and
// `--policy-pack` need, against the same github.com/pulumi/pulumi/sdk/v3 as the
// CLI:
//
//   - Run: starts `node <@pulumi/pulumi/cmd/run> --monitor ... <entry point>` in
//     the program directory with PULUMI_CONFIG / PULUMI_CONFIG_SECRET_KEYS.
//   - RunPlugin: starts Node plugins, and policy packs (kind "analyzer") through
//     @pulumi/pulumi/cmd/run-policy-pack behind sdk.PolicyProxy, which hands the
//     stack configuration to the policy pack the way the SDK expects.
//   - GetRequiredPackages: resource plugins named by package.json "pulumi"
//     sections under node_modules.
//
// Not implemented (the engine gets Unimplemented): dependency installation,
// code generation, packing, linking, templates, debugging, synchronous invokes
// (the deprecated `--sync` pipes) and the bun runtime.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	sdk "github.com/pulumi/pulumi/sdk/v3"
	"github.com/pulumi/pulumi/sdk/v3/go/common/apitype"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/config"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/logging"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	"github.com/pulumi/pulumi/sdk/v3/go/common/workspace"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"

	"pko-guard/toolchain/langhost"
)

const (
	runModule        = "@pulumi/pulumi/cmd/run"
	runPluginModule  = "@pulumi/pulumi/cmd/run-plugin"
	runPolicyModule  = "@pulumi/pulumi/cmd/run-policy-pack"
	bailExitCode     = 32 // the SDK already reported a user-actionable error
)

func main() {
	flag.String("runtime", "nodejs", "accepted for compatibility; only nodejs is supported")
	langhost.Main(&host{Base: langhost.NewBase()})
}

type host struct {
	langhost.Base
}

func (h *host) About(ctx context.Context, _ *pulumirpc.AboutRequest) (*pulumirpc.AboutResponse, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, fmt.Errorf("could not find node on the $PATH: %w", err)
	}
	out, err := exec.CommandContext(ctx, node, "--version").Output()
	if err != nil {
		return nil, fmt.Errorf("running node --version: %w", err)
	}
	return &pulumirpc.AboutResponse{
		Executable: node,
		Version:    strings.TrimPrefix(strings.TrimSpace(string(out)), "v"),
	}, nil
}

func (h *host) GetRequiredPlugins(context.Context, *pulumirpc.GetRequiredPluginsRequest,
) (*pulumirpc.GetRequiredPluginsResponse, error) {
	return nil, status.Error(codes.Unimplemented, "use GetRequiredPackages")
}

// GetRequiredPackages lists the resource plugins declared by packages under
// node_modules below the program directory (package.json "pulumi": {"resource": true}).
func (h *host) GetRequiredPackages(_ context.Context, req *pulumirpc.GetRequiredPackagesRequest,
) (*pulumirpc.GetRequiredPackagesResponse, error) {
	seen := map[string]bool{}
	var pkgs []*pulumirpc.PackageDependency
	if err := scanPackages(req.GetInfo().GetProgramDirectory(), false, seen, &pkgs); err != nil {
		logging.V(3).Infof("errors while discovering plugins: %v", err)
	}
	return &pulumirpc.GetRequiredPackagesResponse{Packages: pkgs}, nil
}

type packageJSON struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Pulumi  struct {
		Resource         bool   `json:"resource"`
		Name             string `json:"name"`
		Version          string `json:"version"`
		Server           string `json:"server"`
		Parameterization *struct {
			Name    string `json:"name"`
			Version string `json:"version"`
			Value   []byte `json:"value"`
		} `json:"parameterization"`
	} `json:"pulumi"`
}

func scanPackages(dir string, inNodeModules bool, seen map[string]bool, out *[]*pulumirpc.PackageDependency) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	if seen[dir] {
		return nil
	}
	seen[dir] = true
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		fi, err := os.Stat(path) // follows symlinks
		if err != nil {
			continue
		}
		if fi.IsDir() {
			// Plugins of a nested policy pack are not the program's.
			if pp, err := workspace.DetectPolicyPackPathAt(path); err == nil && pp != "" {
				continue
			}
			if err := scanPackages(path, inNodeModules || filepath.Base(dir) == "node_modules", seen, out); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		if !inNodeModules || e.Name() != "package.json" {
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var pj packageJSON
		if err := json.Unmarshal(b, &pj); err != nil || !pj.Pulumi.Resource {
			continue
		}
		name := pj.Pulumi.Name
		if name == "" {
			if !strings.HasPrefix(pj.Name, "@pulumi/") {
				errs = append(errs, fmt.Errorf("%s: third-party plugin package without pulumi.name", path))
				continue
			}
			name = strings.TrimPrefix(pj.Name, "@pulumi/")
		}
		ver := pj.Pulumi.Version
		if ver == "" {
			ver = pj.Version
		}
		if ver != "" && !strings.HasPrefix(ver, "v") {
			ver = "v" + ver
		}
		dep := &pulumirpc.PackageDependency{Name: name, Kind: "resource", Version: ver, Server: pj.Pulumi.Server}
		if p := pj.Pulumi.Parameterization; p != nil {
			dep.Parameterization = &pulumirpc.PackageParameterization{Name: p.Name, Version: p.Version, Value: p.Value}
		}
		*out = append(*out, dep)
	}
	return errors.Join(errs...)
}

type nodeOptions struct {
	typescript   bool
	tsconfigPath string
	nodeArgs     []string
}

func parseOptions(opts map[string]any) (nodeOptions, error) {
	o := nodeOptions{typescript: true}
	if v, ok := opts["typescript"]; ok {
		b, ok := v.(bool)
		if !ok {
			return o, errors.New("typescript option must be a boolean")
		}
		o.typescript = b
	}
	if v, ok := opts["tsconfig"]; ok {
		s, ok := v.(string)
		if !ok {
			return o, errors.New("tsconfig option must be a string")
		}
		o.tsconfigPath = s
	}
	if v, ok := opts["nodeargs"]; ok {
		s, ok := v.(string)
		if !ok {
			return o, errors.New("nodeargs option must be a string")
		}
		o.nodeArgs = strings.Fields(s) // no shell quoting support
	}
	return o, nil
}

func (o nodeOptions) env() []string {
	var env []string
	if o.typescript {
		env = append(env, "PULUMI_NODEJS_TYPESCRIPT=true")
	}
	if o.tsconfigPath != "" {
		env = append(env, "PULUMI_NODEJS_TSCONFIG_PATH="+o.tsconfigPath)
	}
	return env
}

// resolveModule returns the path of mod as seen from dir: found in Go the way Node's require.resolve
// finds it (findModule), which saves starting a Node process before every program and policy pack;
// only when that finds nothing is node asked (so unusual layouts resolve, and errors read as Node's).
func resolveModule(ctx context.Context, node, dir, mod, hint string) (string, error) {
	if p, ok := findModule(dir, mod); ok {
		return p, nil
	}
	script := fmt.Sprintf(`try { console.log(require.resolve(%q)); } catch (e) { `+
		`console.error(e.code === "MODULE_NOT_FOUND" ? %q : e.message); process.exit(1); }`,
		mod, "It looks like the Pulumi SDK has not been installed. Have you run "+hint+"?")
	cmd := exec.CommandContext(ctx, node, "-e", script)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", errors.New(strings.TrimSpace(string(ee.Stderr)))
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// findModule resolves mod from dir as Node's require.resolve does for packages without an "exports"
// map (as @pulumi/pulumi has none): a relative or absolute path against dir, else mod under every
// node_modules folder from dir upwards and then under each NODE_PATH entry; a match is a file (as is,
// or with ".js") or a folder (its package.json "main", else index.js). The result has symbolic
// links resolved, like Node's. ok is false when nothing matches.
func findModule(dir, mod string) (string, bool) {
	var candidates []string
	if filepath.IsAbs(mod) {
		candidates = []string{mod}
	} else if strings.HasPrefix(mod, "./") || strings.HasPrefix(mod, "../") {
		candidates = []string{filepath.Join(dir, mod)}
	} else {
		for d := dir; ; d = filepath.Dir(d) {
			if filepath.Base(d) != "node_modules" {
				candidates = append(candidates, filepath.Join(d, "node_modules", mod))
			}
			if filepath.Dir(d) == d {
				break
			}
		}
		for _, p := range filepath.SplitList(os.Getenv("NODE_PATH")) {
			if p != "" {
				candidates = append(candidates, filepath.Join(p, mod))
			}
		}
	}
	for _, c := range candidates {
		if p, ok := moduleFile(c, true); ok {
			if real, err := filepath.EvalSymlinks(p); err == nil {
				p = real
			}
			return p, true
		}
	}
	return "", false
}

// moduleFile finds the file Node loads for path p: p itself, p.js, or (p being a folder) its
// package.json "main" (when withMain) and then its index.js.
func moduleFile(p string, withMain bool) (string, bool) {
	isFile := func(f string) bool {
		fi, err := os.Stat(f)
		return err == nil && fi.Mode().IsRegular()
	}
	for _, f := range []string{p, p + ".js"} {
		if isFile(f) {
			return f, true
		}
	}
	if withMain {
		if b, err := os.ReadFile(filepath.Join(p, "package.json")); err == nil {
			var pj struct {
				Main string `json:"main"`
			}
			if json.Unmarshal(b, &pj) == nil && pj.Main != "" {
				if f, ok := moduleFile(filepath.Join(p, pj.Main), false); ok {
					return f, true
				}
			}
		}
	}
	if f := filepath.Join(p, "index.js"); isFile(f) {
		return f, true
	}
	return "", false
}

// Run executes the Pulumi program with @pulumi/pulumi's run script.
func (h *host) Run(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	info := req.GetInfo()
	node, err := exec.LookPath("node")
	if err != nil {
		return &pulumirpc.RunResponse{Error: "could not find node on the $PATH: " + err.Error()}, nil
	}
	runPath := os.Getenv("PULUMI_LANGUAGE_NODEJS_RUN_PATH")
	if runPath == "" {
		runPath = runModule
	}
	runPath, err = resolveModule(ctx, node, info.GetProgramDirectory(), runPath, "npm install")
	if err != nil {
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}
	opts, err := parseOptions(info.GetOptions().AsMap())
	if err != nil {
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}

	// The SDK still understands the legacy "<package>:config:<name>" key form best.
	cfg := make(map[string]string, len(req.GetConfig()))
	for k, v := range req.GetConfig() {
		key, err := config.ParseKey(k)
		if err != nil {
			return &pulumirpc.RunResponse{Error: err.Error()}, nil
		}
		cfg[key.Namespace()+":config:"+key.Name()] = v
	}
	cfgJSON, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	secretKeys := req.GetConfigSecretKeys()
	if secretKeys == nil {
		secretKeys = []string{}
	}
	secretJSON, err := json.Marshal(secretKeys)
	if err != nil {
		return nil, err
	}

	args := append([]string{}, opts.nodeArgs...)
	args = append(args, runPath)
	flagArg := func(name, value string) {
		if value != "" {
			args = append(args, "--"+name, value)
		}
	}
	flagArg("monitor", req.GetMonitorAddress())
	flagArg("engine", h.Engine())
	flagArg("organization", req.GetOrganization())
	flagArg("project", req.GetProject())
	flagArg("root-directory", info.GetRootDirectory())
	flagArg("stack", req.GetStack())
	flagArg("pwd", info.GetProgramDirectory())
	if req.GetDryRun() {
		args = append(args, "--dry-run")
	}
	flagArg("parallel", strconv.Itoa(int(req.GetParallel())))
	entry := info.GetEntryPoint()
	if entry == "" {
		entry = "."
	}
	args = append(args, entry)
	args = append(args, req.GetArgs()...)

	env := append(os.Environ(), "PULUMI_CONFIG="+string(cfgJSON), "PULUMI_CONFIG_SECRET_KEYS="+string(secretJSON))
	env = append(env, opts.env()...)

	cmdCtx, cmdCancel := context.WithCancel(h.CancelCtx)
	defer cmdCancel()
	stopAfter := context.AfterFunc(ctx, cmdCancel)
	defer stopAfter()
	cmd := exec.CommandContext(cmdCtx, node, args...)
	cmd.Dir = info.GetProgramDirectory()
	cmd.Env = env
	cmd.Cancel = func() error {
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			return cmd.Process.Kill()
		}
		return nil
	}
	cmd.WaitDelay = 5 * time.Second
	// Not *os.File: node may switch its stdio to non-blocking mode.
	cmd.Stdout = struct{ io.Writer }{os.Stdout}
	cmd.Stderr = struct{ io.Writer }{os.Stderr}
	logging.V(5).Infof("language host running: %s", cmd)

	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ee.ExitCode() == bailExitCode {
				return &pulumirpc.RunResponse{Bail: true}, nil
			}
			return &pulumirpc.RunResponse{Error: fmt.Sprintf("Program exited with non-zero exit code: %d", ee.ExitCode())}, nil
		}
		return &pulumirpc.RunResponse{
			Error: fmt.Sprintf("Problem executing program (could not run language executor): %v", err),
		}, nil
	}
	return &pulumirpc.RunResponse{}, nil
}

// RunPlugin runs a Node plugin; policy packs (kind "analyzer") go through
// @pulumi/pulumi/cmd/run-policy-pack behind sdk.PolicyProxy.
func (h *host) RunPlugin(req *pulumirpc.RunPluginRequest, server pulumirpc.LanguageRuntime_RunPluginServer) error {
	ctx := server.Context()
	info := req.GetInfo()
	closer, stdout, stderr, err := rpcutil.MakeRunPluginStreams(server, false)
	if err != nil {
		return err
	}
	defer closer.Close()

	node, err := exec.LookPath("node")
	if err != nil {
		return err
	}
	opts, err := parseOptions(info.GetOptions().AsMap())
	if err != nil {
		return err
	}
	isPolicy := req.GetKind() == string(apitype.AnalyzerPlugin)
	mod := runPolicyModule
	if !isPolicy {
		if mod = os.Getenv("PULUMI_LANGUAGE_NODEJS_RUN_PATH"); mod == "" {
			mod = runPluginModule
		}
	}
	runPath, err := resolveModule(ctx, node, info.GetProgramDirectory(), mod, "npm install in "+info.GetProgramDirectory())
	if err != nil {
		return err
	}

	args := append([]string{}, opts.nodeArgs...)
	args = append(args, runPath)
	if isPolicy { // policy packs take the program directory last
		args = append(args, req.GetArgs()...)
		args = append(args, info.GetProgramDirectory())
	} else {
		args = append(args, info.GetProgramDirectory())
		args = append(args, req.GetArgs()...)
	}
	env := append(append([]string{}, req.GetEnv()...), opts.env()...)

	var proxy *sdk.PolicyProxy
	if isPolicy {
		proxy, stdout, err = sdk.NewPolicyProxy(ctx, stdout)
		if err != nil {
			return fmt.Errorf("could not start policy pack proxy: %w", err)
		}
		stack, err := proxy.AwaitConfiguration(ctx)
		if err != nil {
			return fmt.Errorf("could not get stack configuration: %w", err)
		}
		if stack != nil {
			add := func(k, v string) {
				if v != "" {
					env = append(env, k+"="+v)
				}
			}
			add("PULUMI_NODEJS_ORGANIZATION", stack.Organization)
			add("PULUMI_NODEJS_PROJECT", stack.Project)
			add("PULUMI_NODEJS_STACK", stack.Stack)
			add("PULUMI_NODEJS_DRY_RUN", strconv.FormatBool(stack.DryRun))
			if stack.Config != nil {
				b, err := json.Marshal(stack.Config)
				if err != nil {
					return err
				}
				add("PULUMI_CONFIG", string(b))
			}
		}
	}

	cmd := exec.CommandContext(ctx, node, args...)
	if isPolicy {
		cmd.Dir = info.GetProgramDirectory() // policy packs run from their own directory
	} else {
		cmd.Dir = req.GetPwd()
	}
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = stdout, stderr
	logging.V(5).Infof("language host running plugin: %s", cmd)

	if err := cmd.Start(); err != nil {
		return fmt.Errorf("could not run plugin program: %w", err)
	}
	if proxy != nil {
		err = proxy.Attach(ctx, cmd) // waits for the process
	} else {
		err = cmd.Wait()
	}
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return fmt.Errorf("Program exited with non-zero exit code: %d", ee.ExitCode())
		}
		return err
	}
	return closer.Close()
}
