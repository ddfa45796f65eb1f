// Command custompod-controller runs the client-go CustomPod controller
// (pkg/custompod): it keeps spec.replicas pods of spec.template running for
// every CustomPod, like the articles' operator-sdk and kubebuilder
// controllers.
//
//	custompod-controller --kubeconfig ~/.kube/config --namespace demo -v=4
//
// Three implementations of one CRD must not fight over the same objects: give
// each its own --namespace.
//
// The same process serves CustomPod's conversion webhook (v1 <-> v2,
// pkg/conversionwebhook) when --conversion-port is set. Beside a local API
// server (kwok, `make run-custompod`):
//
//	custompod-controller --conversion-port 9443
//
// makes a CA and a certificate for 127.0.0.1, and points the CRD at
// https://127.0.0.1:9443/convert. In a cluster, --conversion-service
// crd-demo-system/custompod-webhook does the same for a Service, or
// --tls-cert-file and --tls-private-key-file serve cert-manager's
// certificate. The webhook starts first, on every replica: it answers before
// the controller's caches sync (which may need it) and whether or not this
// replica is the leader.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"example.com/k8s-demo/crd-demo/internal/kubeconfig"
	"example.com/k8s-demo/crd-demo/internal/leader"
	clientset "example.com/k8s-demo/crd-demo/pkg/client/clientset/versioned"
	informers "example.com/k8s-demo/crd-demo/pkg/client/informers/externalversions"
	"example.com/k8s-demo/crd-demo/pkg/conversionwebhook"
	"example.com/k8s-demo/crd-demo/pkg/custompod"
)

var (
	connection     kubeconfig.Flags
	leaderElection leader.Options
	webhook        conversionwebhook.Options
	namespace      string
	workers        int
	runCtrl        bool
	resyncPeriod   time.Duration
)

func main() {
	connection.AddFlags(flag.CommandLine)
	leaderElection.AddFlags(flag.CommandLine, "crd-demo-custompod-controller")
	webhook.AddFlags(flag.CommandLine)
	flag.StringVar(&namespace, "namespace", "", "Watch CustomPods (and their pods) in this namespace only. Default: all namespaces.")
	flag.BoolVar(&runCtrl, "run-controller", true, "Run the controller. false: serve only the conversion webhook (--conversion-port), for instance one webhook for a cluster where several controllers run in namespaces of their own.")
	flag.IntVar(&workers, "workers", 2, "How many CustomPods to sync at the same time.")
	flag.DurationVar(&resyncPeriod, "resync", 30*time.Second, "How often the informers replay their caches as update events (they are ignored: see the ResourceVersion checks).")
	klog.InitFlags(nil)
	flag.Parse()
	if err := checkFlags(); err != nil {
		fmt.Fprintf(os.Stderr, "custompod-controller: %v\nRun custompod-controller -h to list the flags.\n", err)
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		klog.FromContext(ctx).Error(err, "Error running controller")
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
	if err := webhook.Check(); err != nil {
		return err
	}
	if !runCtrl && !webhook.Enabled() {
		return fmt.Errorf("--run-controller=false serves only the conversion webhook: give --conversion-port")
	}
	if workers < 1 {
		return fmt.Errorf("--workers must be at least 1, not %d", workers)
	}
	return nil
}

func run(ctx context.Context) error {
	cfg, err := connection.Load()
	if err != nil {
		return err
	}
	if !webhook.Enabled() {
		return leader.Run(ctx, cfg, leaderElection, func(ctx context.Context) error { return runController(ctx, cfg) })
	}

	// The webhook first, and apart from the controller: if either stops with
	// an error, the other is stopped too, and the process exits.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The CRD patch names the controller in the CRD's managedFields, as its
	// other writes do.
	served, err := webhook.Start(ctx, cfg, "custompod-controller")
	if err != nil {
		return err
	}
	webhookErr := make(chan error, 1)
	go func() {
		err := <-served
		cancel()
		webhookErr <- err
	}()
	var controllerErr error
	if runCtrl {
		controllerErr = leader.Run(ctx, cfg, leaderElection, func(ctx context.Context) error { return runController(ctx, cfg) })
	} else {
		<-ctx.Done()
	}
	cancel()
	if err := <-webhookErr; err != nil {
		return fmt.Errorf("conversion webhook: %w", err)
	}
	return controllerErr
}

// runController builds the clients, informers and controller, and runs them
// until ctx ends (or, with --leader-elect, the leader Lease is lost).
func runController(ctx context.Context, cfg *rest.Config) error {
	// Pods and events travel as protobuf, which the API server encodes and
	// the informer decodes at a fraction of JSON's cost, as
	// kube-controller-manager's do and controller-runtime's client does for
	// built-in kinds. A CustomPod has no protobuf form: its clientset keeps
	// JSON.
	builtin := rest.CopyConfig(cfg)
	builtin.ContentType = runtime.ContentTypeProtobuf
	builtin.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	kubeClient, err := kubernetes.NewForConfig(builtin)
	if err != nil {
		return fmt.Errorf("building kubernetes clientset: %w", err)
	}
	customClient, err := clientset.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("building custompod clientset: %w", err)
	}
	// The same settings, but a rate limit of its own (see NewController).
	eventClient, err := kubernetes.NewForConfig(builtin)
	if err != nil {
		return fmt.Errorf("building the events' clientset: %w", err)
	}

	// Watch only pods that carry the CustomPod label: the controller needs
	// no others, and a cache of every pod in the cluster costs memory. Of
	// those, keep only what it reads (custompod.StripPod).
	kubeInformerFactory := kubeinformers.NewSharedInformerFactoryWithOptions(kubeClient, resyncPeriod,
		kubeinformers.WithNamespace(namespace),
		kubeinformers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = custompod.LabelCustomPod }),
		kubeinformers.WithTransform(custompod.StripPod))
	customInformerFactory := informers.NewSharedInformerFactoryWithOptions(customClient, resyncPeriod,
		informers.WithNamespace(namespace),
		informers.WithTransform(stripManagedFields))

	controller := custompod.NewController(ctx, kubeClient, customClient, eventClient,
		kubeInformerFactory.Core().V1().Pods(),
		customInformerFactory.Zhhnzw().V2().CustomPods())

	kubeInformerFactory.Start(ctx.Done())
	customInformerFactory.Start(ctx.Done())
	defer kubeInformerFactory.Shutdown()
	defer customInformerFactory.Shutdown()

	ns := namespace
	if ns == "" {
		ns = "(all)"
	}
	klog.FromContext(ctx).Info("CustomPod controller configured", "namespace", ns, "workers", workers)
	return controller.Run(ctx, workers)
}

// stripManagedFields drops managedFields (which field manager set which
// field) from what the informers cache, as the scaffolds' managers do
// (cache.TransformStripManagedFields): the controller never reads them, and
// an update that omits them leaves the API server's record as it is.
func stripManagedFields(obj any) (any, error) {
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
	}
	return obj, nil
}
