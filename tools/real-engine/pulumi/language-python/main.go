// pulumi-language-python: the Pulumi language host for Python programs and policy packs — OUR OWN minimal
// implementation, not upstream's.
//
// Why: upstream's language host lives in its own Go module,
// github.com/pulumi/pulumi/sdk/python/cmd/pulumi-language-python/v3, and the Go module proxy this project
// may use refuses every version of it ("403 Forbidden: This module version is not available"), so it
// cannot be built here; nor may its source be copied into this repository. Everything the host does is a
// thin gRPC layer over public packages of the published github.com/pulumi/pulumi/sdk/v3 module (the
// python toolchain, rpcutil, the policy proxy), which this file calls the way upstream's main.go does:
//
//   - Run: starts `pulumi-language-python-exec` (shipped in sdk/v3, installed beside this binary) in the
//     project's virtualenv with the engine's arguments and PULUMI_CONFIG/PULUMI_CONFIG_SECRET_KEYS; exit
//     code 32 means "the program already reported a user-actionable error" (Bail).
//   - RunPlugin: policy packs (`python -u -m pulumi.policy <args> <dir>`, cwd the pack dir, stack
//     configuration through sdk.PolicyProxy) and bare-directory plugins.
//   - GetRequiredPackages: the resource plugins named by pulumi-plugin.json files of installed packages.
//   - InstallDependencies, About, GetProgramDependencies, GetPluginInfo, Handshake.
//
// Not implemented (Unimplemented): debugging, typecheckers, codegen (GenerateProject/Program/Package),
// Pack, Link, Template, RuntimeOptionsPrompts — none is used by preview/up/destroy/policy runs.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pulumi/pulumi/sdk/v3"
	"github.com/pulumi/pulumi/sdk/v3/go/common/apitype"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/cmdutil"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/logging"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	"github.com/pulumi/pulumi/sdk/v3/go/common/version"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"github.com/pulumi/pulumi/sdk/v3/python/toolchain"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"
)

const (
	execName = "pulumi-language-python-exec"
	// The exec script exits with this code after printing an error meant for the user.
	exitAfterUserMessage = 32
)

func main() {
	flag.String("tracing", "", "Emit tracing to a Zipkin-compatible tracing endpoint (ignored)")
	// Plugin hosts of sdk/v3 before v3.214 start a language host with every runtime option as a flag, plus
	// -root (buildArgsForNewPlugin); pulumi-language-yaml v1.25.0 embeds such a host (sdk/v3 v3.206.0) and
	// starts this one so to read a Python component's schema. The same options arrive in each request's
	// ProgramInfo, which is what this host reads; upstream accepted and ignored these flags until #21065.
	flag.String("virtualenv", "", "[obsolete] Virtual environment path to use")
	flag.String("root", "", "[obsolete] Project root path to use")
	flag.String("typechecker", "", "[obsolete] Use a typechecker to type check")
	flag.String("toolchain", "pip", "[obsolete] Select the package manager to use for dependency management.")
	showVersion := flag.Bool("version", false, "Print the current plugin version and exit")
	useExecutor := flag.String("use-executor", "", "Use the given program as the executor")
	flag.Parse()
	if *showVersion {
		fmt.Println(version.Version)
		os.Exit(0)
	}
	logging.InitLogging(false, 0, false)

	pyExec := *useExecutor
	if pyExec == "" {
		self, err := os.Executable()
		if err != nil {
			cmdutil.Exit(fmt.Errorf("could not determine current executable: %w", err))
		}
		pyExec = filepath.Join(filepath.Dir(self), execName)
		if _, err := os.Stat(pyExec); err != nil {
			cmdutil.Exit(fmt.Errorf("missing executor %s: %w", pyExec, err))
		}
	}

	host := &languageHost{exec: pyExec}
	if args := flag.Args(); len(args) > 0 {
		host.engineAddress = args[0]
	}
	host.cancelCtx, host.cancel = context.WithCancel(context.Background())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	cancelChannel := make(chan bool)
	go func() { <-ctx.Done(); stop(); close(cancelChannel) }()
	if host.engineAddress != "" {
		if err := rpcutil.Healthcheck(ctx, host.engineAddress, 5*time.Minute, stop); err != nil {
			cmdutil.Exit(fmt.Errorf("could not start health check host RPC server: %w", err))
		}
	}
	handle, err := rpcutil.ServeWithOptions(rpcutil.ServeOptions{
		Cancel: cancelChannel,
		Init: func(srv *grpc.Server) error {
			pulumirpc.RegisterLanguageRuntimeServer(srv, host)
			return nil
		},
	})
	if err != nil {
		cmdutil.Exit(fmt.Errorf("could not start language host RPC server: %w", err))
	}
	fmt.Printf("%d\n", handle.Port)
	if err := <-handle.Done; err != nil {
		cmdutil.Exit(fmt.Errorf("language host RPC stopped serving: %w", err))
	}
}

type languageHost struct {
	pulumirpc.UnimplementedLanguageRuntimeServer

	exec          string
	engineAddress string
	cancelCtx     context.Context
	cancel        context.CancelFunc
}

func parseOptions(info *pulumirpc.ProgramInfo, isPlugin bool) (toolchain.PythonOptions, error) {
	opts := toolchain.PythonOptions{Root: info.RootDirectory, ProgramDir: info.ProgramDirectory}
	options := info.Options.AsMap()
	if v, ok := options["virtualenv"]; ok {
		s, ok := v.(string)
		if !ok {
			return opts, errors.New("virtualenv option must be a string")
		}
		opts.Virtualenv = s
	}
	if v, ok := options["typechecker"]; ok && v != "" {
		return opts, fmt.Errorf("typechecker option %v: not supported by this language host (tools/real-engine)", v)
	}
	if v, ok := options["toolchain"]; ok {
		switch v {
		case "pip":
			opts.Toolchain = toolchain.Pip
		case "poetry":
			opts.Toolchain = toolchain.Poetry
		case "uv":
			opts.Toolchain = toolchain.Uv
		default:
			return opts, fmt.Errorf("unsupported toolchain option: %v", v)
		}
	}
	// As upstream: plugins other than policy packs default to a `venv` virtualenv.
	if isPlugin && (opts.Toolchain == toolchain.Pip || opts.Toolchain == toolchain.Auto) && opts.Virtualenv == "" {
		opts.Virtualenv = "venv"
	}
	return opts, nil
}

func (h *languageHost) Handshake(ctx context.Context,
	req *pulumirpc.LanguageHandshakeRequest,
) (*pulumirpc.LanguageHandshakeResponse, error) {
	h.engineAddress = req.EngineAddress
	hctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	if err := rpcutil.Healthcheck(hctx, h.engineAddress, 5*time.Minute, stop); err != nil {
		return nil, fmt.Errorf("could not start health check host RPC server: %w", err)
	}
	return &pulumirpc.LanguageHandshakeResponse{}, nil
}

func (h *languageHost) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: version.Version}, nil
}

func (h *languageHost) Cancel(context.Context, *emptypb.Empty) (*emptypb.Empty, error) {
	h.cancel()
	return &emptypb.Empty{}, nil
}

// listPlugins prints, for each installed distribution that ships a pulumi-plugin.json, that file's content
// plus the distribution's version.
const listPlugins = `
import json, importlib.metadata as md
out = []
for dist in md.distributions():
    for f in dist.files or []:
        if f.name == "pulumi-plugin.json":
            try:
                data = json.loads(f.read_text())
            except Exception:
                continue
            data["_dist_version"] = dist.version
            out.append(data)
print(json.dumps(out))
`

func (h *languageHost) GetRequiredPackages(ctx context.Context,
	req *pulumirpc.GetRequiredPackagesRequest,
) (*pulumirpc.GetRequiredPackagesResponse, error) {
	opts, err := parseOptions(req.Info, false)
	if err != nil {
		return nil, err
	}
	tc, err := toolchain.ResolveToolchain(opts)
	if err != nil {
		return nil, err
	}
	cmd, err := tc.Command(ctx, "-c", listPlugins)
	if err != nil {
		return nil, err
	}
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("listing installed Pulumi packages: %w", err)
	}
	var infos []struct {
		Resource    bool   `json:"resource"`
		Name        string `json:"name"`
		Version     string `json:"version"`
		Server      string `json:"server"`
		DistVersion string `json:"_dist_version"`
	}
	if err := json.Unmarshal(out, &infos); err != nil {
		return nil, fmt.Errorf("listing installed Pulumi packages: %w", err)
	}
	resp := &pulumirpc.GetRequiredPackagesResponse{}
	for _, info := range infos {
		if !info.Resource || info.Name == "" {
			continue
		}
		v := info.Version
		if v == "" {
			v = info.DistVersion
		}
		if v != "" && !strings.HasPrefix(v, "v") {
			v = "v" + v
		}
		resp.Packages = append(resp.Packages, &pulumirpc.PackageDependency{
			Kind: "resource", Name: info.Name, Version: v, Server: info.Server,
		})
	}
	return resp, nil
}

func (h *languageHost) Run(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	if h.engineAddress == "" {
		return nil, errors.New("must call Handshake before Run")
	}
	if req.GetAttachDebugger() {
		return &pulumirpc.RunResponse{Error: "debugging is not supported by this language host"}, nil
	}
	opts, err := parseOptions(req.Info, false)
	if err != nil {
		return nil, err
	}
	args := []string{h.exec}
	add := func(k, v string) {
		if v != "" {
			args = append(args, "--"+k, v)
		}
	}
	add("monitor", req.GetMonitorAddress())
	add("engine", h.engineAddress)
	add("project", req.GetProject())
	add("root_directory", req.GetInfo().RootDirectory)
	add("stack", req.GetStack())
	add("pwd", req.GetPwd())
	add("dry_run", strconv.FormatBool(req.GetDryRun()))
	add("parallel", strconv.Itoa(int(req.GetParallel())))
	add("organization", req.GetOrganization())
	args = append(args, req.Info.EntryPoint)
	args = append(args, req.GetArgs()...)

	tc, err := toolchain.ResolveToolchain(opts)
	if err != nil {
		return nil, err
	}
	if err := tc.ValidateVenv(ctx); err != nil {
		return nil, err
	}
	runCtx, runCancel := context.WithCancel(h.cancelCtx)
	defer runCancel()
	context.AfterFunc(ctx, runCancel)
	cmd, err := tc.Command(runCtx, args...)
	if err != nil {
		return nil, err
	}
	cmd.Cancel = func() error {
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			return cmd.Process.Kill()
		}
		return nil
	}
	cmd.WaitDelay = 5 * time.Second
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	if cfg := req.GetConfig(); cfg != nil {
		b, err := json.Marshal(cfg)
		if err != nil {
			return nil, fmt.Errorf("failed to serialize configuration: %w", err)
		}
		env = append(env, "PULUMI_CONFIG="+string(b))
	}
	keys := req.GetConfigSecretKeys()
	if keys == nil {
		keys = []string{}
	}
	b, err := json.Marshal(keys)
	if err != nil {
		return nil, err
	}
	cmd.Env = append(env, "PULUMI_CONFIG_SECRET_KEYS="+string(b))

	if err := cmd.Run(); err != nil {
		_ = os.Stdout.Sync()
		_ = os.Stderr.Sync()
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.ExitStatus() == exitAfterUserMessage {
				return &pulumirpc.RunResponse{Bail: true}, nil
			} else if ok {
				return &pulumirpc.RunResponse{
					Error: fmt.Sprintf("program exited with non-zero exit code: %d", ws.ExitStatus()),
				}, nil
			}
			return &pulumirpc.RunResponse{Error: fmt.Sprintf("program exited unexpectedly: %v", exitErr)}, nil
		}
		return &pulumirpc.RunResponse{
			Error: fmt.Sprintf("problem executing program (could not run language executor): %v", err),
		}, nil
	}
	return &pulumirpc.RunResponse{}, nil
}

func (h *languageHost) RunPlugin(req *pulumirpc.RunPluginRequest, server pulumirpc.LanguageRuntime_RunPluginServer) error {
	ctx := server.Context()
	if req.GetAttachDebugger() {
		return errors.New("debugging is not supported by this language host")
	}
	isAnalyzer := req.Kind == string(apitype.AnalyzerPlugin)
	opts, err := parseOptions(req.Info, !isAnalyzer)
	if err != nil {
		return err
	}
	tc, err := toolchain.ResolveToolchain(opts)
	if err != nil {
		return err
	}
	var args []string
	if isAnalyzer {
		// Policy packs: `python -u -m pulumi.policy <engine args> <pack dir>`, run in the pack's directory.
		args = append([]string{"-u", "-m", "pulumi.policy"}, req.Args...)
		args = append(args, req.Info.ProgramDirectory)
	} else {
		if _, err := os.Stat(filepath.Join(opts.Root, "__main__.py")); err != nil {
			return fmt.Errorf("plugin %s has no __main__.py (packaged plugins are not supported by this language host)",
				req.Info.ProgramDirectory)
		}
		args = append([]string{req.Info.ProgramDirectory}, req.Args...)
	}
	cmd, err := tc.Command(ctx, args...)
	if err != nil {
		return err
	}
	if cmd.Env == nil { // the toolchain sets it only when it activates a virtualenv
		cmd.Env = os.Environ()
	}
	closer, stdout, stderr, err := rpcutil.MakeRunPluginStreams(server, false)
	if err != nil {
		return err
	}
	defer closer.Close()
	if isAnalyzer {
		cmd.Dir = req.Info.ProgramDirectory
	} else {
		cmd.Dir = req.Pwd
	}

	// Policy packs get the stack's configuration in their environment, as upstream's host gives it: the
	// proxy answers the engine's ConfigureStack call, then forwards everything to the real pack.
	var proxy *sdk.PolicyProxy
	if isAnalyzer {
		proxy, stdout, err = sdk.NewPolicyProxy(ctx, stdout)
		if err != nil {
			return fmt.Errorf("could not start policy pack proxy: %w", err)
		}
		config, err := proxy.AwaitConfiguration(ctx)
		if err != nil {
			return fmt.Errorf("could not get stack configuration: %w", err)
		}
		if config != nil {
			setenv := func(k, v string) {
				if v != "" {
					cmd.Env = append(cmd.Env, k+"="+v)
				}
			}
			setenv("PULUMI_ORGANIZATION", config.Organization)
			setenv("PULUMI_PROJECT", config.Project)
			setenv("PULUMI_STACK", config.Stack)
			setenv("PULUMI_DRY_RUN", strconv.FormatBool(config.DryRun))
			if config.Config != nil {
				b, err := json.Marshal(config.Config)
				if err != nil {
					return fmt.Errorf("could not marshal stack configuration: %w", err)
				}
				setenv("PULUMI_CONFIG", string(b))
			}
		}
	}
	cmd.Env = append(cmd.Env, req.Env...)
	cmd.Stdout, cmd.Stderr = stdout, stderr

	run := func() error {
		if err := cmd.Start(); err != nil {
			return err
		}
		if proxy != nil {
			return proxy.Attach(ctx, cmd)
		}
		return cmd.Wait()
	}
	if err := run(); err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok {
				return server.Send(&pulumirpc.RunPluginResponse{
					Output: &pulumirpc.RunPluginResponse_Exitcode{Exitcode: int32(ws.ExitStatus())},
				})
			}
			return fmt.Errorf("program exited unexpectedly: %w", exitErr)
		}
		return fmt.Errorf("problem executing plugin program (could not run language executor): %w", err)
	}
	return closer.Close()
}

func (h *languageHost) InstallDependencies(
	req *pulumirpc.InstallDependenciesRequest, server pulumirpc.LanguageRuntime_InstallDependenciesServer,
) error {
	opts, err := parseOptions(req.Info, req.IsPlugin)
	if err != nil {
		return err
	}
	closer, stdout, stderr, err := rpcutil.MakeInstallDependenciesStreams(server, req.IsTerminal)
	if err != nil {
		return err
	}
	defer closer.Close()
	fmt.Fprint(stdout, "Installing dependencies...\n\n")
	tc, err := toolchain.ResolveToolchain(opts)
	if err != nil {
		return err
	}
	if err := tc.InstallDependencies(server.Context(), req.Info.ProgramDirectory, req.UseLanguageVersionTools,
		true, stdout, stderr); err != nil {
		return err
	}
	fmt.Fprint(stdout, "Finished installing dependencies\n\n")
	return closer.Close()
}

func (h *languageHost) About(ctx context.Context, req *pulumirpc.AboutRequest) (*pulumirpc.AboutResponse, error) {
	opts := toolchain.PythonOptions{Toolchain: toolchain.Pip}
	if req != nil && req.Info != nil {
		var err error
		if opts, err = parseOptions(req.Info, false); err != nil {
			return nil, err
		}
	}
	tc, err := toolchain.ResolveToolchain(opts)
	if err != nil {
		return nil, err
	}
	info, err := tc.About(ctx)
	if err != nil {
		return nil, err
	}
	return &pulumirpc.AboutResponse{
		Executable: info.PythonExecutable,
		Version:    info.PythonVersion.String(),
		Metadata: map[string]string{
			"toolchain":        toolchain.Name(opts.Toolchain),
			"toolchainVersion": info.ToolchainVersion.String(),
		},
	}, nil
}

func (h *languageHost) GetProgramDependencies(ctx context.Context,
	req *pulumirpc.GetProgramDependenciesRequest,
) (*pulumirpc.GetProgramDependenciesResponse, error) {
	opts, err := parseOptions(req.Info, false)
	if err != nil {
		return nil, err
	}
	tc, err := toolchain.ResolveToolchain(opts)
	if err != nil {
		return nil, err
	}
	deps, err := tc.ListPackages(ctx, req.TransitiveDependencies)
	if err != nil {
		return nil, fmt.Errorf("failed to get python dependencies: %w", err)
	}
	resp := &pulumirpc.GetProgramDependenciesResponse{}
	for _, d := range deps {
		resp.Dependencies = append(resp.Dependencies, &pulumirpc.DependencyInfo{Name: d.Name, Version: d.Version})
	}
	return resp, nil
}
