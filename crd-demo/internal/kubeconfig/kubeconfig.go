// Package kubeconfig finds the cluster the controllers talk to, and sets how
// fast they may talk to it.
package kubeconfig

import (
	"flag"
	"fmt"
	"os"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
)

// Flags are the connection flags both crd-demo controllers take.
type Flags struct {
	MasterURL string
	Path      string
	// QPS and Burst feed client-go's client-side rate limiter (a token
	// bucket): at most Burst requests at once, refilled at QPS per second.
	// client-go's defaults, 5 and 10, are what a controller gets when it sets
	// nothing; a negative QPS turns the limiter off.
	QPS   float64
	Burst int
}

// AddFlags registers --kubeconfig, --master, --kube-api-qps and --kube-api-burst.
func (f *Flags) AddFlags(fs *flag.FlagSet) {
	fs.StringVar(&f.Path, "kubeconfig", "", "Path to a kubeconfig. Default: $KUBECONFIG, then ~/.kube/config, then the in-cluster service account.")
	fs.StringVar(&f.MasterURL, "master", "", "The address of the Kubernetes API server. Overrides the one in the kubeconfig.")
	fs.Float64Var(&f.QPS, "kube-api-qps", float64(rest.DefaultQPS), "Requests per second the controller may send to the API server, on average (client-go's default). Negative: no limit.")
	fs.IntVar(&f.Burst, "kube-api-burst", rest.DefaultBurst, "Requests the controller may send at once, above --kube-api-qps (client-go's default).")
}

// Check reports flags that cannot work.
func (f *Flags) Check() error {
	if f.QPS >= 0 && f.Burst < 1 {
		return fmt.Errorf("--kube-api-burst must be at least 1 when --kube-api-qps limits the rate, not %d", f.Burst)
	}
	return nil
}

// Load returns the client configuration with the flags' rate limits, asking
// for uncompressed responses.
func (f *Flags) Load() (*rest.Config, error) {
	cfg, err := Load(f.MasterURL, f.Path)
	if err != nil {
		return nil, err
	}
	cfg.QPS = float32(f.QPS)
	cfg.Burst = f.Burst
	// No gzip. An informer's watch starts with its list, and Kubernetes 1.37
	// (WatchListCompression) compresses that stream, event after event, for
	// a client that asks, as Go's HTTP client does unless told not to; the
	// controller then inflates each event again. Beside its API server a
	// controller has bandwidth to spare and CPU to save (docs/bench.md,
	// "What made the controllers fast"). client-go honours this over TLS
	// only, as an API server speaks.
	cfg.DisableCompression = true
	return cfg, nil
}

// Load returns the client configuration the way kubectl finds it: the file
// named by path if it is not empty, else $KUBECONFIG, else ~/.kube/config,
// else the service account of the pod the controller runs in. masterURL, if
// not empty, overrides the server address. (clientcmd.BuildConfigFromFlags
// reads only the file it is given and ignores $KUBECONFIG.)
func Load(masterURL, path string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = path
	overrides := &clientcmd.ConfigOverrides{}
	overrides.ClusterInfo.Server = masterURL
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig (pass --kubeconfig, set KUBECONFIG, or run in a cluster): %w", err)
	}
	// A terminal without KUBECONFIG quietly falls back to ~/.kube/config,
	// which may be another cluster: say which one this is, first thing.
	klog.InfoS("Using the API server", "host", cfg.Host, "from", source(path))
	return cfg, nil
}

// source says where Load found the configuration, in the order it looks.
func source(path string) string {
	if path != "" {
		return path
	}
	if env := os.Getenv(clientcmd.RecommendedConfigPathEnvVar); env != "" {
		return "$KUBECONFIG=" + env
	}
	if _, err := os.Stat(clientcmd.RecommendedHomeFile); err == nil {
		return clientcmd.RecommendedHomeFile
	}
	return "the in-cluster service account"
}
