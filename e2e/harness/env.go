// Package harness is what the e2e suites use to talk to a cluster: it gets the
// cluster, runs the real kubectl, starts controllers as child processes with
// their logs captured, waits for conditions with messages that say what was
// awaited and what was last seen, and on failure dumps the events, the objects
// involved and the controllers' logs.
//
// A suite's TestMain calls Main; each test calls New:
//
//	func TestMain(m *testing.M) { harness.Main(m) }
//
//	func TestScale(t *testing.T) {
//		h := harness.New(t) // a fresh namespace, dumped if the test fails
//		h.Kubectl("apply", "-f", "config/samples/x.yaml")
//		...
//	}
package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"example.com/k8s-demo/e2e/cluster"
	"example.com/k8s-demo/e2e/ports"
)

// Env is the cluster a test binary runs against.
type Env struct {
	// Root is the repository root; BinDir holds the pinned tools.
	Root, BinDir string
	// Provider is the cluster provider; Kubeconfig the path of its kubeconfig.
	Provider   cluster.Provider
	Kubeconfig string
	// Config and Client talk to the cluster directly.
	Config *rest.Config
	Client kubernetes.Interface
	// ArtifactsDir receives the controllers' logs and the failure dumps.
	ArtifactsDir string

	created bool
}

// Setup gets the cluster for a test binary. With E2E_KUBECONFIG set (as
// `cluster run` and `make e2e` set it) it uses that cluster as it is, which
// also makes re-running a suite fast: `export E2E_KUBECONFIG=$(make -s kubeconfig)`.
// Otherwise it brings up the cluster CLUSTER names (kwok by default, named by
// CLUSTER_NAME, default "k8s-demo-e2e"), and Teardown deletes it if Setup
// created it.
func Setup(ctx context.Context) (*Env, error) {
	wd, _ := os.Getwd()
	root, err := cluster.FindRoot(wd)
	if err != nil {
		return nil, err
	}
	if os.Getenv("CLUSTER_NAME") == "" {
		os.Setenv("CLUSTER_NAME", "k8s-demo-e2e")
	}
	opts, err := cluster.OptionsFromEnv(root)
	if err != nil {
		return nil, err
	}
	opts.Log = os.Stderr
	env := &Env{
		Root:         root,
		BinDir:       opts.BinDir,
		ArtifactsDir: envOr("E2E_ARTIFACTS", filepath.Join(root, "_artifacts")),
	}
	if kc := os.Getenv("E2E_KUBECONFIG"); kc != "" {
		opts.Kubeconfig = kc
		env.Provider, _ = cluster.New("existing", opts)
	} else {
		env.Provider, err = cluster.New(envOr("CLUSTER", "kwok"), opts)
		if err != nil {
			return nil, err
		}
		existed, err := env.Provider.Exists(ctx)
		if err != nil {
			return nil, err
		}
		if err := env.Provider.Up(ctx); err != nil {
			return nil, err
		}
		env.created = !existed
	}
	return env, env.connect()
}

// connect makes the clients of the provider's cluster.
func (env *Env) connect() error {
	var err error
	env.Kubeconfig = env.Provider.Kubeconfig()
	env.Config, err = clientcmd.BuildConfigFromFlags("", env.Kubeconfig)
	if err != nil {
		return fmt.Errorf("loading kubeconfig %s: %w", env.Kubeconfig, err)
	}
	// Tests poll: client-go's default of 5 requests a second would throttle them.
	env.Config.QPS, env.Config.Burst = 50, 100
	env.Client, err = kubernetes.NewForConfig(env.Config)
	if err != nil {
		return err
	}
	return os.MkdirAll(env.ArtifactsDir, 0o755)
}

// PrivateKwok brings up a kwok cluster of the test's own, for a test that
// harms its cluster (stopping the API server), and deletes it when the test
// ends. Use it with NewWith.
func PrivateKwok(t testing.TB, name string) *Env {
	t.Helper()
	shared := Current(t)
	opts, err := cluster.OptionsFromEnv(shared.Root)
	if err != nil {
		t.Fatal(err)
	}
	opts.Name, opts.Log = name, os.Stderr
	p, err := cluster.New("kwok", opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Up(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Down(context.Background()); err != nil {
			t.Errorf("deleting the private cluster %s: %v", name, err)
		}
	})
	env := &Env{Root: shared.Root, BinDir: shared.BinDir, Provider: p, ArtifactsDir: shared.ArtifactsDir, created: true}
	if err := env.connect(); err != nil {
		t.Fatal(err)
	}
	return env
}

// Teardown deletes the cluster if Setup created it, unless E2E_KEEP=1.
func (e *Env) Teardown(ctx context.Context) error {
	if !e.created {
		return nil
	}
	if os.Getenv("E2E_KEEP") == "1" {
		fmt.Fprintf(os.Stderr, "E2E_KEEP=1: leaving the cluster up; KUBECONFIG=%s\n", e.Kubeconfig)
		return nil
	}
	return e.Provider.Down(ctx)
}

// current is the Env of the running test binary, set by Main.
var current *Env

// Main is a suite's TestMain: it sets the cluster up, runs the tests and
// tears down what it created.
func Main(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if err := ports.Check(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	env, err := Setup(ctx)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: cannot get a cluster: %v\n", err)
		return 1
	}
	current = env
	code := m.Run()
	stopRegistry(env.Root)
	if err := env.Teardown(context.Background()); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: tearing the cluster down: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// Current is the Env that Main set up.
func Current(t testing.TB) *Env {
	t.Helper()
	if current == nil {
		t.Fatal("harness: no cluster: the suite's TestMain must call harness.Main(m)")
	}
	return current
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// Maker returns the provider that made the cluster under test. With
// E2E_KUBECONFIG the provider is "existing"; the one CLUSTER names is used
// instead when its kubeconfig is that same file.
func (e *Env) Maker() (cluster.Provider, error) {
	name := envOr("CLUSTER", "kwok")
	if e.Provider.Name() != "existing" || name == "existing" {
		return e.Provider, nil
	}
	opts, err := cluster.OptionsFromEnv(e.Root)
	if err != nil {
		return nil, err
	}
	opts.Log = os.Stderr
	p, err := cluster.New(name, opts)
	if err != nil {
		return nil, err
	}
	if p.Kubeconfig() != e.Kubeconfig {
		return nil, fmt.Errorf("the cluster under test (kubeconfig %s) is not the %s cluster %q (kubeconfig %s)", e.Kubeconfig, name, opts.Name, p.Kubeconfig())
	}
	return p, nil
}

// ControlPlane returns the cluster's provider if it can stop and start the
// API server (kwok can).
func (e *Env) ControlPlane() (cluster.ControlPlane, error) {
	p, err := e.Maker()
	if err != nil {
		return nil, fmt.Errorf("%w: not stopping either", err)
	}
	cp, ok := p.(cluster.ControlPlane)
	if !ok {
		return nil, fmt.Errorf("the %s provider cannot stop and start its API server", p.Name())
	}
	return cp, nil
}

// Full reports whether E2E_FULL=1 asks for the larger robustness runs (more
// kill rounds, more concurrent editors) that `make test` leaves out.
func Full() bool { return os.Getenv("E2E_FULL") == "1" }
