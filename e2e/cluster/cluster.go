// Package cluster brings up the Kubernetes clusters the demos and their tests
// run on, behind one interface:
//
//   - kwok: a real control plane (etcd, kube-apiserver, kube-controller-manager,
//     kube-scheduler) run as local processes by kwokctl, with fake nodes that
//     kwok keeps Ready and whose pods it marks Running. Offline, no Docker.
//   - kind: Kubernetes in Docker containers, created through kind's Go API.
//   - existing: whatever cluster KUBECONFIG points at; never created or deleted.
package cluster

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Provider is one way of getting a cluster.
type Provider interface {
	// Name is the provider's name, as CLUSTER spells it.
	Name() string
	// Preflight checks, quickly, that the provider can work on this machine,
	// and says what to do when it cannot.
	Preflight(ctx context.Context) error
	// Exists reports whether the cluster is already there.
	Exists(ctx context.Context) (bool, error)
	// Up creates the cluster, or starts it again, and waits until its nodes
	// are Ready. Calling it on a cluster that is up does nothing harmful.
	Up(ctx context.Context) error
	// Down deletes the cluster and everything it left on the machine.
	Down(ctx context.Context) error
	// Kubeconfig is the path of the kubeconfig file for the cluster.
	Kubeconfig() string
}

// Options configure every provider; each uses the fields that concern it.
type Options struct {
	// Name of the cluster (CLUSTER_NAME), so that several can coexist.
	Name string
	// BinDir holds the tools built by `make tools`.
	BinDir string
	// WorkDir holds the clusters' state (kwok's work directory, kind's
	// kubeconfig files). Down removes what it put there.
	WorkDir string
	// Nodes is the number of nodes that can run pods: kwok's fake nodes, or
	// kind's worker nodes (0 means the control-plane node runs them).
	Nodes int
	// NodePods is how many pods each of kwok's fake nodes takes
	// (CLUSTER_NODE_PODS); 0 leaves kwok's default, 110, a kubelet's.
	NodePods int
	// KubeSchedulerConfig is a KubeSchedulerConfiguration file for kwok's
	// scheduler; empty leaves kwokctl's defaults.
	KubeSchedulerConfig string
	// NodeImage is kind's node image (KIND_NODE_IMAGE).
	NodeImage string
	// KubeadmConfigPatches are extra patches for kind's kubeadm configuration,
	// such as the kubelet settings a particular host needs.
	KubeadmConfigPatches []string
	// Kubeconfig is the existing provider's kubeconfig (KUBECONFIG).
	Kubeconfig string
	// Log receives progress messages.
	Log io.Writer
}

// DefaultName is the cluster name when CLUSTER_NAME is not set.
const DefaultName = "k8s-demo"

// Providers lists the valid CLUSTER values.
var Providers = []string{"kwok", "kind", "existing"}

// ControlPlane is a provider that can stop its cluster's API server and start
// it again, state kept: what the robustness suite's outage test needs.
type ControlPlane interface {
	StopControlPlane(ctx context.Context) error
	StartControlPlane(ctx context.Context) error
}

// Processes is a provider whose cluster's components are processes on this
// machine (kwok's): the bench reads the CPU time each of them spends.
type Processes interface {
	// ProcessIDs names each running component (kube-apiserver, etcd,
	// kwok-controller, ...) with its process ID.
	ProcessIDs() map[string]int
}

// New returns the provider called name.
func New(name string, o Options) (Provider, error) {
	if o.Name == "" {
		o.Name = DefaultName
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	switch name {
	case "kwok":
		return newKwok(o), nil
	case "kind":
		return newKind(o), nil
	case "existing":
		return newExisting(o), nil
	}
	return nil, fmt.Errorf("unknown cluster provider %q: expected one of %s", name, strings.Join(Providers, ", "))
}

// OptionsFromEnv reads the options from the environment variables the
// Makefile and the docs use: CLUSTER_NAME, LOCALBIN, CLUSTER_WORKDIR,
// CLUSTER_NODES, CLUSTER_NODE_PODS, KIND_NODE_IMAGE, KIND_KUBEADM_PATCHES (files, separated by
// the OS path list separator) and KUBECONFIG. root is the repository root:
// the defaults are relative to it, and kind's default node image comes from
// its versions.env. The kubeadm patches this host needs (see
// hostKubeadmPatches) are added after the user's.
func OptionsFromEnv(root string) (Options, error) {
	versions, err := Versions(root)
	if err != nil {
		return Options{}, err
	}
	o := Options{
		Name:       envOr("CLUSTER_NAME", DefaultName),
		BinDir:     envOr("LOCALBIN", filepath.Join(root, "bin")),
		WorkDir:    envOr("CLUSTER_WORKDIR", filepath.Join(root, ".cache")),
		Nodes:      2,
		NodeImage:  envOr("KIND_NODE_IMAGE", versions["KIND_NODE_IMAGE_DEFAULT"]),
		Kubeconfig: os.Getenv("KUBECONFIG"),
	}
	if v := os.Getenv("CLUSTER_NODES"); v != "" {
		if _, err := fmt.Sscanf(v, "%d", &o.Nodes); err != nil || o.Nodes < 0 {
			return o, fmt.Errorf("CLUSTER_NODES=%q: expected a whole number, 0 or more", v)
		}
	}
	if v := os.Getenv("CLUSTER_NODE_PODS"); v != "" {
		if _, err := fmt.Sscanf(v, "%d", &o.NodePods); err != nil || o.NodePods < 1 {
			return o, fmt.Errorf("CLUSTER_NODE_PODS=%q: expected a whole number, 1 or more", v)
		}
	}
	for _, f := range filepath.SplitList(os.Getenv("KIND_KUBEADM_PATCHES")) {
		b, err := os.ReadFile(f)
		if err != nil {
			return o, fmt.Errorf("KIND_KUBEADM_PATCHES: %w", err)
		}
		o.KubeadmConfigPatches = append(o.KubeadmConfigPatches, string(b))
	}
	o.KubeadmConfigPatches = append(o.KubeadmConfigPatches, hostKubeadmPatches(cgroupV2Marker, o.KubeadmConfigPatches)...)
	return o, nil
}

// FindRoot returns the repository root: the nearest directory at or above dir
// that holds versions.env.
func FindRoot(dir string) (string, error) {
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "versions.env")); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no versions.env in %s or any directory above it: run from inside the repository", dir)
		}
		d = parent
	}
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// requireBinaries fails with the `make tools` hint when a tool is missing.
func requireBinaries(dir string, names ...string) error {
	var missing []string
	for _, n := range names {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing %s in %s: run `make tools` first", strings.Join(missing, ", "), dir)
	}
	return nil
}

// progress prints one line of progress with the time it took so far.
func progress(w io.Writer, start time.Time, format string, args ...any) {
	fmt.Fprintf(w, "  [%5.1fs] %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
}
