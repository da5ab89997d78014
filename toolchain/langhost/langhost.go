// Package langhost is what pko-guard's language hosts (toolchain/pulumi-language-nodejs,
// toolchain/pulumi-language-go) share: the command line every Pulumi language plugin takes,
// the gRPC server the engine dials, the engine's address with the health check that ends the
// host when the engine goes away, and the language-neutral RPCs.
package langhost

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/pulumi/pulumi/sdk/v3/go/common/util/cmdutil"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/logging"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	"github.com/pulumi/pulumi/sdk/v3/go/common/version"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// healthcheckLimit is how long the engine may be unreachable before the host exits.
const healthcheckLimit = 5 * time.Minute

// Server is a language host: the RPCs a language implements, on top of Base.
type Server interface {
	pulumirpc.LanguageRuntimeServer
	base() *Base
}

// Base holds the engine's address and the host's cancellation; embed it in a language host.
type Base struct {
	pulumirpc.UnimplementedLanguageRuntimeServer

	mu            sync.Mutex
	engineAddress string
	healthchecked bool

	// CancelCtx ends when the engine asks the host to cancel: programs the host runs derive from it.
	CancelCtx  context.Context
	cancelFunc context.CancelFunc
}

// NewBase returns a Base whose CancelCtx is live.
func NewBase() Base {
	ctx, cancel := context.WithCancel(context.Background())
	return Base{CancelCtx: ctx, cancelFunc: cancel}
}

func (b *Base) base() *Base { return b }

// setEngine records the engine address and, once, exits the process if the engine goes away
// (as upstream hosts do).
func (b *Base) setEngine(ctx context.Context, addr string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.engineAddress = addr
	if addr == "" || b.healthchecked {
		return
	}
	b.healthchecked = true
	if err := rpcutil.Healthcheck(ctx, addr, healthcheckLimit, func() { os.Exit(1) }); err != nil {
		cmdutil.Exit(fmt.Errorf("could not start health check host RPC server: %w", err))
	}
}

// Engine is the engine's address, as given on the command line or in the handshake.
func (b *Base) Engine() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.engineAddress
}

func (b *Base) Handshake(_ context.Context, req *pulumirpc.LanguageHandshakeRequest,
) (*pulumirpc.LanguageHandshakeResponse, error) {
	b.setEngine(context.Background(), req.EngineAddress)
	return &pulumirpc.LanguageHandshakeResponse{}, nil
}

func (b *Base) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: version.Version}, nil
}

func (b *Base) Cancel(context.Context, *emptypb.Empty) (*emptypb.Empty, error) {
	b.cancelFunc()
	return &emptypb.Empty{}, nil
}

func (b *Base) RuntimeOptionsPrompts(context.Context, *pulumirpc.RuntimeOptionsRequest,
) (*pulumirpc.RuntimeOptionsResponse, error) {
	return &pulumirpc.RuntimeOptionsResponse{}, nil
}

// Main parses the language plugin's command line (flags are the caller's to declare before, plus
// -version and -tracing), serves host over gRPC, prints the port for the engine and serves until
// the engine hangs up or the process is interrupted.
func Main(host Server) {
	showVersion := flag.Bool("version", false, "print the plugin version and exit")
	flag.String("tracing", "", "accepted for compatibility; ignored")
	flag.Parse()
	if *showVersion {
		fmt.Println(version.Version)
		return
	}
	logging.InitLogging(false, 0, false)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cancel := make(chan bool)
	go func() { <-ctx.Done(); close(cancel) }()

	if args := flag.Args(); len(args) > 0 {
		host.base().setEngine(ctx, args[0])
	}
	handle, err := rpcutil.ServeWithOptions(rpcutil.ServeOptions{
		Cancel: cancel,
		Init: func(srv *grpc.Server) error {
			pulumirpc.RegisterLanguageRuntimeServer(srv, host)
			return nil
		},
		Options: rpcutil.TracingServerInterceptorOptions(nil),
	})
	if err != nil {
		cmdutil.Exit(fmt.Errorf("could not start language host RPC server: %w", err))
	}
	fmt.Printf("%d\n", handle.Port)
	if err := <-handle.Done; err != nil {
		cmdutil.Exit(fmt.Errorf("language host RPC stopped serving: %w", err))
	}
}
