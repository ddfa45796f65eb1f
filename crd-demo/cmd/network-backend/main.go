// Command network-backend runs the network backend, the stand-in for
// OpenStack Neutron that the Network controller reconciles against: an HTTP
// API modeled on Neutron's networks resource (see pkg/backend.NewHandler),
// with its state kept in a JSON file, so that stopping and starting it loses
// nothing.
//
//	network-backend --listen 127.0.0.1:8090 --state-file network-backend.json -v=2
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/klog/v2"

	"example.com/k8s-demo/crd-demo/pkg/backend"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:8090", "Address to serve the API on, host:port. Port 0 picks a free port; the log says which.")
	stateFile := flag.String("state-file", "network-backend.json", "File that holds the networks. Created if missing.")
	klog.InitFlags(nil)
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "network-backend: unexpected arguments %q\nRun network-backend -h to list the flags.\n", flag.Args())
		os.Exit(2)
	}
	if *stateFile == "" {
		fmt.Fprintln(os.Stderr, "network-backend: --state-file must not be empty")
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *listen, *stateFile); err != nil {
		klog.FromContext(ctx).Error(err, "network-backend failed")
		klog.FlushAndExit(klog.ExitFlushTimeout, 1)
	}
}

func run(ctx context.Context, listen, stateFile string) error {
	logger := klog.FromContext(ctx)
	store, err := backend.OpenStore(stateFile)
	if err != nil {
		return err
	}
	networks, _ := store.List(ctx, "")
	logger.Info("Loaded state", "file", stateFile, "networks", len(networks))

	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	// Every phase of a request is bounded, so that slow or stalled clients
	// cannot hold connections (and their goroutines) open for ever.
	srv := &http.Server{
		Handler:           backend.NewHandler(store, logger),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	logger.Info("Serving the network API", "address", ln.Addr().String())

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("Shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
