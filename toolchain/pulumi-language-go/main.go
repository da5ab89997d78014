// Command pulumi-language-go is a small Go language host for the Pulumi engine,
// written for pko-guard's offline toolchain.
//
// Upstream's host (github.com/pulumi/pulumi/sdk/go/pulumi-language-go/v3) is a
// module of its own that the module proxy this project can reach refuses (403),
// while the SDK it runs programs against, github.com/pulumi/pulumi/sdk/v3, is
// served. This host implements what `pulumi preview|up|destroy` and
// `--policy-pack` need for a Go program, against the same sdk/v3 as the CLI:
//
//   - Run: builds the program with `go build` in its directory (or takes the
//     prebuilt executable named by the `binary` runtime option) and runs it with
//     the environment the Go SDK's pulumi.Run reads (PULUMI_MONITOR,
//     PULUMI_ENGINE, PULUMI_PROJECT, PULUMI_STACK, PULUMI_ORGANIZATION,
//     PULUMI_CONFIG, PULUMI_CONFIG_SECRET_KEYS, PULUMI_DRY_RUN, PULUMI_PARALLEL,
//     PULUMI_ROOT_DIRECTORY; sdk/go/pulumi/run.go).
//   - GetRequiredPackages: none; the engine loads the default provider of each
//     package a program registers (the toolchain's plugins are on PATH).
//
// Not implemented (the engine gets Unimplemented): dependency installation,
// code generation, packing, linking, templates, debugging and Go plugins
// (policy packs are Node packs, run by the Node host).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/common/constant"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/logging"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"

	"pko-guard/toolchain/langhost"
)

func main() {
	flag.String("binary", "", "accepted for compatibility; use the runtime option `binary`")
	flag.String("root", "", "accepted for compatibility; ignored")
	langhost.Main(&host{Base: langhost.NewBase()})
}

type host struct {
	langhost.Base
}

func (h *host) About(ctx context.Context, _ *pulumirpc.AboutRequest) (*pulumirpc.AboutResponse, error) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return nil, fmt.Errorf("could not find go on the $PATH: %w", err)
	}
	out, err := exec.CommandContext(ctx, goCmd, "env", "GOVERSION").Output()
	if err != nil {
		return nil, fmt.Errorf("running go env GOVERSION: %w", err)
	}
	return &pulumirpc.AboutResponse{
		Executable: goCmd,
		Version:    strings.TrimPrefix(strings.TrimSpace(string(out)), "go"),
	}, nil
}

func (h *host) GetRequiredPackages(context.Context, *pulumirpc.GetRequiredPackagesRequest,
) (*pulumirpc.GetRequiredPackagesResponse, error) {
	return &pulumirpc.GetRequiredPackagesResponse{}, nil
}

func (h *host) GetRequiredPlugins(context.Context, *pulumirpc.GetRequiredPluginsRequest,
) (*pulumirpc.GetRequiredPluginsResponse, error) {
	return &pulumirpc.GetRequiredPluginsResponse{}, nil
}

// programEnv is the environment pulumi.Run reads (sdk/go/pulumi/run.go).
func (h *host) programEnv(req *pulumirpc.RunRequest) ([]string, error) {
	cfg := req.GetConfig()
	if cfg == nil {
		cfg = map[string]string{}
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
	env := os.Environ()
	add := func(k, v string) {
		if v != "" {
			env = append(env, k+"="+v)
		}
	}
	add("PULUMI_MONITOR", req.GetMonitorAddress())
	add("PULUMI_ENGINE", h.Engine())
	add("PULUMI_PROJECT", req.GetProject())
	add("PULUMI_STACK", req.GetStack())
	add("PULUMI_ORGANIZATION", req.GetOrganization())
	add("PULUMI_ROOT_DIRECTORY", req.GetInfo().GetRootDirectory())
	add("PULUMI_CONFIG", string(cfgJSON))
	add("PULUMI_CONFIG_SECRET_KEYS", string(secretJSON))
	add("PULUMI_DRY_RUN", strconv.FormatBool(req.GetDryRun()))
	add("PULUMI_PARALLEL", strconv.Itoa(int(req.GetParallel())))
	return env, nil
}

// program returns the executable to run: the `binary` runtime option as given, else the program
// built with `go build` into a temporary folder (removed by the caller through cleanup).
func program(ctx context.Context, info *pulumirpc.ProgramInfo) (exe string, cleanup func(), err error) {
	dir := info.GetProgramDirectory()
	if b, ok := info.GetOptions().AsMap()["binary"].(string); ok && b != "" {
		if !filepath.IsAbs(b) {
			b = filepath.Join(dir, b)
		}
		return b, func() {}, nil
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return "", nil, errors.New("could not find go on the $PATH (a Go program is built with go build)")
	}
	out, err := os.MkdirTemp("", "pulumi-go.")
	if err != nil {
		return "", nil, err
	}
	cleanup = func() { _ = os.RemoveAll(out) }
	exe = filepath.Join(out, "program")
	entry := info.GetEntryPoint()
	if entry == "" {
		entry = "."
	}
	build := exec.CommandContext(ctx, goCmd, "build", "-o", exe, entry)
	build.Dir = dir
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	logging.V(5).Infof("language host building: %s", build)
	if err := build.Run(); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("unable to build the Go program in %s: %w", dir, err)
	}
	return exe, cleanup, nil
}

// Run builds and runs the Go program.
func (h *host) Run(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	cmdCtx, cmdCancel := context.WithCancel(h.CancelCtx)
	defer cmdCancel()
	stopAfter := context.AfterFunc(ctx, cmdCancel)
	defer stopAfter()

	exe, cleanup, err := program(cmdCtx, req.GetInfo())
	if err != nil {
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}
	defer cleanup()
	env, err := h.programEnv(req)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(cmdCtx, exe, req.GetArgs()...)
	cmd.Dir = req.GetInfo().GetProgramDirectory()
	cmd.Env = env
	cmd.Cancel = func() error {
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			return cmd.Process.Kill()
		}
		return nil
	}
	cmd.WaitDelay = 5 * time.Second
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	logging.V(5).Infof("language host running: %s", cmd)
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ee.ExitCode() == constant.ExitStatusLoggedError {
				return &pulumirpc.RunResponse{Bail: true}, nil
			}
			return &pulumirpc.RunResponse{Error: fmt.Sprintf("program exited with non-zero exit code: %d", ee.ExitCode())}, nil
		}
		return &pulumirpc.RunResponse{Error: fmt.Sprintf("problem executing program: %v", err)}, nil
	}
	return &pulumirpc.RunResponse{}, nil
}
