/*
Copyright 2026.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"

	// Import all Kubernetes client auth plugins (e.g. Azure, GCP, OIDC, etc.)
	// to ensure that exec-entrypoint and run can make use of them.
	_ "k8s.io/client-go/plugin/pkg/client/auth"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	zhhnzwv1 "example.com/k8s-demo/kubebuilder-demo/api/v1"
	zhhnzwv2 "example.com/k8s-demo/kubebuilder-demo/api/v2"
	"example.com/k8s-demo/kubebuilder-demo/internal/controller"
	"example.com/k8s-demo/kubebuilder-demo/internal/metricsauth"
	"example.com/k8s-demo/kubebuilder-demo/internal/webhook/certs"
	webhookv2 "example.com/k8s-demo/kubebuilder-demo/internal/webhook/v2"
	// +kubebuilder:scaffold:imports
)

var (
	scheme   = runtime.NewScheme()
	setupLog = ctrl.Log.WithName("setup")
)

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))

	utilruntime.Must(zhhnzwv1.AddToScheme(scheme))
	utilruntime.Must(zhhnzwv2.AddToScheme(scheme))
	// +kubebuilder:scaffold:scheme
}

// nolint:gocyclo
func main() {
	var metricsAddr string
	var metricsCertPath, metricsCertName, metricsCertKey string
	var webhookCertPath, webhookCertName, webhookCertKey string
	var webhookPort int
	var webhookHost string
	var webhookCertRotation bool
	var webhookCertNamespace, webhookCertSecret, webhookService string
	var enableLeaderElection bool
	var leaderElectionNamespace string
	var kubeAPIQPS float64
	var kubeAPIBurst int
	var maxConcurrentReconciles int
	var probeAddr string
	var secureMetrics bool
	var enableHTTP2 bool
	var watchNamespace string
	var tlsOpts []func(*tls.Config)
	flag.StringVar(&metricsAddr, "metrics-bind-address", "0", "The address the metrics endpoint binds to. "+
		"Use :8443 for HTTPS or :8080 for HTTP, or leave as 0 to disable the metrics service.")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "The address the probe endpoint binds to.")
	flag.BoolVar(&enableLeaderElection, "leader-elect", false,
		"Enable leader election for controller manager. "+
			"Enabling this will ensure there is only one active controller manager.")
	flag.BoolVar(&secureMetrics, "metrics-secure", true,
		"If set, the metrics endpoint is served securely via HTTPS. Use --metrics-secure=false to use HTTP instead.")
	flag.StringVar(&webhookCertPath, "webhook-cert-path", "", "The directory that contains the webhook certificate.")
	flag.StringVar(&webhookCertName, "webhook-cert-name", "tls.crt", "The name of the webhook certificate file.")
	flag.StringVar(&webhookCertKey, "webhook-cert-key", "tls.key", "The name of the webhook key file.")
	flag.IntVar(&webhookPort, "webhook-port", 9443, "Port the webhook server listens on. "+
		"Defaults to 9443. Set -1 to disable the webhook server.")
	// Not part of the scaffold: `make run` binds the webhook server to the
	// address the API server reaches it at, not every interface of the
	// machine it runs on.
	flag.StringVar(&webhookHost, "webhook-host", "", "The address the webhook server binds to. Default: every interface.")
	// Not part of the scaffold, which has cert-manager issue the webhook's
	// certificate (internal/webhook/certs says why). The defaults are the
	// names config/default gives the Secret and the Service.
	flag.BoolVar(&webhookCertRotation, "webhook-cert-rotation", false,
		"If set, the manager issues and renews the webhook server's certificate itself, in the Secret "+
			"--webhook-cert-secret mounted at --webhook-cert-path, "+
			"and injects its CA into the CustomPod CRD's conversion webhook. "+
			"Off where something else provides the certificate (make run).")
	flag.StringVar(&webhookCertNamespace, "webhook-cert-namespace", "",
		"The namespace of the webhook's Secret and Service (default: the pod's own).")
	flag.StringVar(&webhookCertSecret, "webhook-cert-secret", "kubebuilder-demo-webhook-server-cert",
		"The Secret that holds the webhook server's certificate, with --webhook-cert-rotation.")
	flag.StringVar(&webhookService, "webhook-service", "kubebuilder-demo-webhook-service",
		"The Service through which the API server calls the webhooks: the certificate is for its DNS name.")
	flag.StringVar(&metricsCertPath, "metrics-cert-path", "",
		"The directory that contains the metrics server certificate.")
	flag.StringVar(&metricsCertName, "metrics-cert-name", "tls.crt", "The name of the metrics server certificate file.")
	flag.StringVar(&metricsCertKey, "metrics-cert-key", "tls.key", "The name of the metrics server key file.")
	flag.BoolVar(&enableHTTP2, "enable-http2", false,
		"If set, HTTP/2 will be enabled for the metrics and webhook servers")
	// Not part of the scaffold: lets several implementations of the same CRD
	// share one cluster, each managing its own namespace.
	flag.StringVar(&leaderElectionNamespace, "leader-election-namespace", "",
		"The namespace of the leader election Lease (default: the pod's own; required outside a cluster).")
	// controller-runtime's defaults before v0.21 (since then GetConfig turns
	// the client-side limit off); client-go alone would use 5 and 10.
	flag.Float64Var(&kubeAPIQPS, "kube-api-qps", 20,
		"Requests per second the manager may send to the API server, on average. Negative: no limit.")
	flag.IntVar(&kubeAPIBurst, "kube-api-burst", 30,
		"Requests the manager may send at once, above --kube-api-qps.")
	// Not part of the scaffold; 1 is controller-runtime's default. make
	// bench gives every implementation 2, as crd-demo's --workers.
	flag.IntVar(&maxConcurrentReconciles, "max-concurrent-reconciles", 1,
		"How many objects each controller reconciles at the same time (never the same object twice).")
	flag.StringVar(&watchNamespace, "namespace", os.Getenv("WATCH_NAMESPACE"),
		"If set, only CustomPods and pods in this namespace are watched and managed "+
			"(default $WATCH_NAMESPACE; empty means all namespaces).")
	opts := zap.Options{
		Development: true,
	}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()

	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))

	// if the enable-http2 flag is false (the default), http/2 should be disabled
	// due to its vulnerabilities. More specifically, disabling http/2 will
	// prevent from being vulnerable to the HTTP/2 Stream Cancellation and
	// Rapid Reset CVEs. For more information see:
	// - https://github.com/advisories/GHSA-qppj-fm5r-hxr3
	// - https://github.com/advisories/GHSA-4374-p667-p6c8
	disableHTTP2 := func(c *tls.Config) {
		setupLog.Info("Disabling HTTP/2")
		c.NextProtos = []string{"http/1.1"}
	}

	if !enableHTTP2 {
		tlsOpts = append(tlsOpts, disableHTTP2)
	}

	// Initial webhook TLS options
	webhookTLSOpts := tlsOpts
	webhookServerOptions := webhook.Options{
		TLSOpts: webhookTLSOpts,
		Host:    webhookHost,
		Port:    webhookPort,
	}

	if len(webhookCertPath) > 0 {
		setupLog.Info("Initializing webhook certificate watcher using provided certificates",
			"webhook-cert-path", webhookCertPath, "webhook-cert-name", webhookCertName, "webhook-cert-key", webhookCertKey)

		webhookServerOptions.CertDir = webhookCertPath
		webhookServerOptions.CertName = webhookCertName
		webhookServerOptions.KeyName = webhookCertKey
	}

	webhookServer := webhook.NewServer(webhookServerOptions)
	// With the rotation, the server starts only once the rotator has put
	// the certificate in the cert directory (it cannot start without one);
	// until then the readiness probe fails, so the Service sends the API
	// server no requests, and reading CustomPods in the version not stored
	// fails.
	var certsReady chan struct{}
	if webhookCertRotation {
		certsReady = make(chan struct{})
		webhookServer = &serverAfter{Server: webhookServer, ready: certsReady}
	}

	// Metrics endpoint is enabled in 'config/default/kustomization.yaml'. The Metrics options configure the server.
	// More info:
	// - https://pkg.go.dev/sigs.k8s.io/controller-runtime@v0.25.0/pkg/metrics/server
	// - https://book.kubebuilder.io/reference/metrics.html
	metricsServerOptions := metricsserver.Options{
		BindAddress:   metricsAddr,
		SecureServing: secureMetrics,
		TLSOpts:       tlsOpts,
	}

	if secureMetrics {
		// FilterProvider is used to protect the metrics endpoint with authn/authz.
		// These configurations ensure that only authorized users and service accounts
		// can access the metrics endpoint. The RBAC are configured in 'config/rbac/kustomization.yaml'. More info:
		// https://pkg.go.dev/sigs.k8s.io/controller-runtime@v0.25.0/pkg/metrics/filters#WithAuthenticationAndAuthorization
		// metricsauth makes the same TokenReview and SubjectAccessReview with
		// client-go: the scaffold's filter links k8s.io/apiserver, 17 MB of
		// the manager's memory (docs/bench.md, "Memory, and the managers' limits").
		metricsServerOptions.FilterProvider = metricsauth.Filter
	}

	// If the certificate is not specified, controller-runtime will automatically
	// generate self-signed certificates for the metrics server. While convenient for development and testing,
	// this setup is not recommended for production.
	//
	// TODO(user): If you enable certManager, uncomment the following lines:
	// - [METRICS-WITH-CERTS] at config/default/kustomization.yaml to generate and use certificates
	// managed by cert-manager for the metrics server.
	// - [PROMETHEUS-WITH-CERTS] at config/prometheus/kustomization.yaml for TLS certification.
	if len(metricsCertPath) > 0 {
		setupLog.Info("Initializing metrics certificate watcher using provided certificates",
			"metrics-cert-path", metricsCertPath, "metrics-cert-name", metricsCertName, "metrics-cert-key", metricsCertKey)

		metricsServerOptions.CertDir = metricsCertPath
		metricsServerOptions.CertName = metricsCertName
		metricsServerOptions.KeyName = metricsCertKey
	}

	// The manager caches (and so watches) only the pods this controller
	// makes, by their label: caching every pod of a cluster would cost
	// memory for pods it never reads. Of those it caches, it keeps only what
	// the controller reads (StripPod). An empty DefaultNamespaces caches
	// every namespace. The controller never reads managedFields (who set
	// which field): the cache drops them, to save memory; a write without
	// them leaves the API server's as they are.
	cacheOptions := cache.Options{
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Pod{}: {
				Label:     labels.SelectorFromSet(labels.Set{controller.ManagedByLabel: controller.ControllerName}),
				Transform: controller.StripPod,
			},
		},
		DefaultTransform: cache.TransformStripManagedFields(),
	}
	if watchNamespace != "" {
		setupLog.Info("Restricting the manager to one namespace", "namespace", watchNamespace)
		cacheOptions.DefaultNamespaces = map[string]cache.Config{watchNamespace: {}}
	}

	if maxConcurrentReconciles < 1 {
		setupLog.Error(fmt.Errorf("--max-concurrent-reconciles must be at least 1, not %d",
			maxConcurrentReconciles), "Invalid flag")
		os.Exit(1)
	}

	restConfig := ctrl.GetConfigOrDie()
	restConfig.QPS = float32(kubeAPIQPS)
	restConfig.Burst = kubeAPIBurst
	// No gzip. The cache's watches start with their lists, and Kubernetes
	// 1.37 (WatchListCompression) compresses those streams, event after
	// event, for a client that asks, as Go's HTTP client does unless told
	// not to; the manager then inflates each event again. Beside its API
	// server a manager has bandwidth to spare and CPU to save
	// (docs/bench.md, "What made the controllers fast").
	restConfig.DisableCompression = true
	// Without KUBECONFIG, the config falls back to ~/.kube/config, which may
	// be another cluster: say which one this is, first thing.
	setupLog.Info("Using the API server", "host", restConfig.Host, "KUBECONFIG", os.Getenv("KUBECONFIG"))

	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{
		Scheme:                  scheme,
		Cache:                   cacheOptions,
		Controller:              config.Controller{MaxConcurrentReconciles: maxConcurrentReconciles},
		Metrics:                 metricsServerOptions,
		WebhookServer:           webhookServer,
		HealthProbeBindAddress:  probeAddr,
		LeaderElection:          enableLeaderElection,
		LeaderElectionNamespace: leaderElectionNamespace,
		LeaderElectionID:        "1e94dc68.mock.com",
		// LeaderElectionReleaseOnCancel defines if the leader should step down voluntarily
		// when the Manager ends. This requires the binary to immediately end when the
		// Manager is stopped, otherwise, this setting is unsafe. Setting this significantly
		// speeds up voluntary leader transitions as the new leader don't have to wait
		// LeaseDuration time first.
		//
		// In the default scaffold provided, the program ends immediately after
		// the manager stops, so would be fine to enable this option. However,
		// if you are doing or is intended to do any operation such as perform cleanups
		// after the manager stops then its usage might be unsafe.
		// LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		setupLog.Error(err, "Failed to start manager")
		os.Exit(1)
	}

	if err := (&controller.CustomPodReconciler{
		Client:    mgr.GetClient(),
		Scheme:    mgr.GetScheme(),
		APIReader: mgr.GetAPIReader(),
		Recorder:  mgr.GetEventRecorder(controller.ControllerName),
	}).SetupWithManager(mgr); err != nil {
		setupLog.Error(err, "Failed to create controller", "controller", "custompod")
		os.Exit(1)
	}
	// nolint:goconst
	if os.Getenv("ENABLE_WEBHOOKS") != "false" {
		if err := webhookCertPresent(webhookCertRotation, webhookCertPath, webhookCertName); err != nil {
			setupLog.Error(err, "No certificate for the webhook server")
			os.Exit(1)
		}
		if err := webhookv2.SetupCustomPodWebhookWithManager(mgr); err != nil {
			setupLog.Error(err, "Failed to create webhook", "webhook", "CustomPod")
			os.Exit(1)
		}
	}
	// +kubebuilder:scaffold:builder

	if webhookCertRotation {
		if webhookCertNamespace == "" {
			if webhookCertNamespace, err = certs.PodNamespace(); err != nil {
				setupLog.Error(err, "Failed to find the webhook certificate's namespace")
				os.Exit(1)
			}
		}
		ready, err := certs.Add(mgr, certs.Options{
			Namespace:   webhookCertNamespace,
			SecretName:  webhookCertSecret,
			ServiceName: webhookService,
			CertDir:     webhookCertPath,
			// The CRD's conversion webhook calls the Service
			// (config/crd/patches/webhook_in_custompods.yaml).
			ConversionCRDs: []string{"custompods.zhhnzw.mock.com"},
		})
		if err != nil {
			setupLog.Error(err, "Failed to set up the webhook certificate rotation")
			os.Exit(1)
		}
		go func() {
			<-ready
			setupLog.Info("Webhook certificate ready: starting the webhook server")
			close(certsReady)
		}()
	}

	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		setupLog.Error(err, "Failed to set up health check")
		os.Exit(1)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		setupLog.Error(err, "Failed to set up ready check")
		os.Exit(1)
	}
	// Not ready until the webhook server serves: until then the API server
	// can read and write CustomPods only in v2, the version it stores.
	if os.Getenv("ENABLE_WEBHOOKS") != "false" {
		if err := mgr.AddReadyzCheck("webhook", mgr.GetWebhookServer().StartedChecker()); err != nil {
			setupLog.Error(err, "Failed to set up the webhook server's ready check")
			os.Exit(1)
		}
	}

	setupLog.Info("Starting manager")
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		setupLog.Error(err, "Failed to run manager")
		os.Exit(1)
	}
}

// serverAfter is a webhook server that starts once ready is closed: the
// manager starts its webhook server first thing, before the certificate
// rotator has had a chance to write the certificate.
type serverAfter struct {
	webhook.Server
	ready <-chan struct{}
}

func (s *serverAfter) Start(ctx context.Context) error {
	select {
	case <-s.ready:
		return s.Server.Start(ctx)
	case <-ctx.Done():
		return nil
	}
}

// StartedChecker fails until the server has started (the wrapped one's
// would too, but says nothing of why).
func (s *serverAfter) StartedChecker() healthz.Checker {
	started := s.Server.StartedChecker()
	return func(req *http.Request) error {
		select {
		case <-s.ready:
			return started(req)
		default:
			return errors.New("the webhook server waits for its certificate (--webhook-cert-rotation)")
		}
	}
}

// webhookCertPresent says, before the manager starts, what the webhook
// server would only say once started, and less plainly: that it has no
// certificate (outside the cluster, a manager run as `bin/manager` has
// none unless given one).
func webhookCertPresent(rotation bool, dir, name string) error {
	if rotation {
		return nil // the rotator writes it; the server waits for it
	}
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "k8s-webhook-server", "serving-certs") // controller-runtime's default
	}
	if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
		return fmt.Errorf("%w: give --webhook-cert-path a directory with tls.crt and tls.key "+
			"(`make run` makes one, with ../bin/localwebhook), or run without webhooks: ENABLE_WEBHOOKS=false", err)
	}
	return nil
}
