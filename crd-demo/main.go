// Command network-controller is the article's custom controller: it keeps a
// network in the network backend (cmd/network-backend, the stand-in for
// OpenStack Neutron) for every Network object in the cluster.
//
//	network-controller --kubeconfig ~/.kube/config --backend-url http://127.0.0.1:8090 -v=4
//
// -v=4 logs every stage of the informer pipeline: the event handler receiving
// an Add, Update or Delete, the key going on the work queue, a worker taking
// it off, and the sync that follows.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"example.com/k8s-demo/crd-demo/internal/kubeconfig"
	"example.com/k8s-demo/crd-demo/internal/leader"
	"example.com/k8s-demo/crd-demo/pkg/backend"
	clientset "example.com/k8s-demo/crd-demo/pkg/client/clientset/versioned"
	informers "example.com/k8s-demo/crd-demo/pkg/client/informers/externalversions"
)

var (
	connection      kubeconfig.Flags
	leaderElection  leader.Options
	namespace       string
	backendURL      string
	workers         int
	resyncPeriod    time.Duration
	recheckInterval time.Duration
)

func main() {
	// Flags are registered here, not in init(), so that tests of this
	// package can link libraries that register flags of the same name.
	connection.AddFlags(flag.CommandLine)
	leaderElection.AddFlags(flag.CommandLine, "crd-demo-network-controller")
	flag.StringVar(&namespace, "namespace", "", "Watch Networks in this namespace only. Default: all namespaces.")
	flag.StringVar(&backendURL, "backend-url", "http://127.0.0.1:8090", "The network backend's address (see network-backend).")
	flag.IntVar(&workers, "workers", 2, "How many Networks to sync at the same time.")
	flag.DurationVar(&resyncPeriod, "resync", 30*time.Second, "How often the informer replays its cache as update events (they are ignored: see the ResourceVersion check).")
	flag.DurationVar(&recheckInterval, "recheck-interval", 5*time.Minute, "How often to check a synced Network's backend network again. 0 turns it off.")
	klog.InitFlags(nil)
	flag.Parse()
	if err := checkFlags(); err != nil {
		fmt.Fprintf(os.Stderr, "network-controller: %v\nRun network-controller -h to list the flags.\n", err)
		os.Exit(2)
	}

	// Cancel the context on SIGINT or SIGTERM, so that Run can stop the workers.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := klog.FromContext(ctx)

	if err := run(ctx); err != nil {
		logger.Error(err, "Error running controller")
		klog.FlushAndExit(klog.ExitFlushTimeout, 1)
	}
}

func checkFlags() error {
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	if err := connection.Check(); err != nil {
		return err
	}
	if err := leaderElection.Check(); err != nil {
		return err
	}
	if workers < 1 {
		return fmt.Errorf("--workers must be at least 1, not %d", workers)
	}
	if _, err := backend.NewHTTPClient(backendURL); err != nil {
		return fmt.Errorf("--backend-url: %w", err)
	}
	return nil
}

func run(ctx context.Context) error {
	cfg, err := connection.Load()
	if err != nil {
		return err
	}
	return leader.Run(ctx, cfg, leaderElection, func(ctx context.Context) error { return runController(ctx, cfg) })
}

// runController builds the clients, informers and controller, and runs them
// until ctx ends (or, with --leader-elect, the leader Lease is lost).
func runController(ctx context.Context, cfg *rest.Config) error {

	// Two clients: the standard one (for Events) and the generated one for
	// our own API group.
	kubeClient, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("building kubernetes clientset: %w", err)
	}
	networkClient, err := clientset.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("building network clientset: %w", err)
	}
	networkBackend, err := backend.NewHTTPClient(backendURL)
	if err != nil {
		return err
	}

	// The factory makes one shared informer per type: every controller in the
	// process that asks for Networks shares one watch and one cache.
	networkInformerFactory := informers.NewSharedInformerFactoryWithOptions(networkClient, resyncPeriod,
		informers.WithNamespace(namespace))

	controller := NewController(ctx, kubeClient, networkClient,
		networkInformerFactory.Samplecrd().V1().Networks(),
		networkBackend, recheckInterval)

	// Start runs the informers it has handed out so far, each in its own
	// goroutine, until ctx is done. So: after NewController, before Run.
	networkInformerFactory.Start(ctx.Done())
	defer networkInformerFactory.Shutdown()

	klog.FromContext(ctx).Info("Network controller configured", "namespace", namespaceOrAll(namespace), "backend", backendURL, "workers", workers)
	return controller.Run(ctx, workers)
}

func namespaceOrAll(ns string) string {
	if ns == "" {
		return "(all)"
	}
	return ns
}
