package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	kindconfig "sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	kindcluster "sigs.k8s.io/kind/pkg/cluster"
)

// kind creates clusters through kind's Go API (sigs.k8s.io/kind/pkg/cluster),
// the same code the kind CLI runs, so no kind binary is involved.
type kind struct {
	o Options
	// docker runs the docker CLI; tests replace it.
	docker func(ctx context.Context, args ...string) (string, error)
}

// cgroupV2Marker exists only on hosts with the unified (v2) cgroup hierarchy.
var cgroupV2Marker = "/sys/fs/cgroup/cgroup.controllers"

// CgroupV1KubeletPatch lets the kubelet run on a cgroup v1 host: since
// Kubernetes 1.35 it refuses to start there unless failCgroupV1 is false.
// kind's nodes share the host's cgroup version.
const CgroupV1KubeletPatch = `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
`

// hostKubeadmPatches returns the kubeadm patches this host needs and the
// user's patches (have) do not already make: on a host without marker (cgroup
// v1), the kubelet must be told to accept it. A cgroup v2 host needs none.
func hostKubeadmPatches(marker string, have []string) []string {
	if _, err := os.Stat(marker); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	for _, p := range have {
		if strings.Contains(p, "failCgroupV1") {
			return nil
		}
	}
	return []string{CgroupV1KubeletPatch}
}

func newKind(o Options) *kind { return &kind{o: o, docker: dockerCLI} }

func (k *kind) Name() string { return "kind" }

func (k *kind) Kubeconfig() string {
	return filepath.Join(k.o.WorkDir, "kind", k.o.Name, "kubeconfig")
}

// preflightTimeout bounds the Docker check: without a daemon the answer must
// come in seconds, not after kind's own minutes-long timeouts.
const preflightTimeout = 4 * time.Second

func (k *kind) Preflight(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, preflightTimeout)
	defer cancel()
	out, err := k.docker(ctx, "info", "--format", "{{.ServerVersion}}")
	if err != nil {
		return fmt.Errorf("kind needs a running Docker daemon, and none answered (docker info: %s).\n"+
			"Start Docker, or use CLUSTER=kwok for the offline cluster (no Docker needed)", firstLine(err.Error()))
	}
	if strings.TrimSpace(out) == "" {
		return fmt.Errorf("kind needs a running Docker daemon, but `docker info` reported no server version.\n" +
			"Start Docker, or use CLUSTER=kwok for the offline cluster (no Docker needed)")
	}
	return nil
}

func (k *kind) provider() *kindcluster.Provider {
	return kindcluster.NewProvider(kindcluster.ProviderWithDocker())
}

func (k *kind) Exists(ctx context.Context) (bool, error) {
	if err := k.Preflight(ctx); err != nil {
		return false, err
	}
	names, err := k.provider().List()
	if err != nil {
		return false, fmt.Errorf("listing kind clusters: %w", err)
	}
	return slices.Contains(names, k.o.Name), nil
}

// Config is the kind cluster configuration Up creates: one control-plane
// node, o.Nodes workers, the pinned node image and any extra kubeadm patches.
func (k *kind) Config() *kindconfig.Cluster {
	c := &kindconfig.Cluster{
		TypeMeta:             kindconfig.TypeMeta{APIVersion: "kind.x-k8s.io/v1alpha4", Kind: "Cluster"},
		Name:                 k.o.Name,
		KubeadmConfigPatches: k.o.KubeadmConfigPatches,
	}
	c.Nodes = append(c.Nodes, kindconfig.Node{Role: kindconfig.ControlPlaneRole, Image: k.o.NodeImage})
	for range k.o.Nodes {
		c.Nodes = append(c.Nodes, kindconfig.Node{Role: kindconfig.WorkerRole, Image: k.o.NodeImage})
	}
	kindconfig.SetDefaultsCluster(c)
	return c
}

func (k *kind) Up(ctx context.Context) error {
	start := time.Now()
	exists, err := k.Exists(ctx)
	if err != nil {
		return err
	}
	if k.o.NodeImage == "" {
		return fmt.Errorf("kind: no node image: set KIND_NODE_IMAGE or KIND_NODE_IMAGE_DEFAULT in versions.env")
	}
	p := k.provider()
	if exists {
		progress(k.o.Log, start, "kind cluster %q exists: refreshing its kubeconfig", k.o.Name)
		if err := p.ExportKubeConfig(k.o.Name, k.Kubeconfig(), false); err != nil {
			return fmt.Errorf("exporting kubeconfig of kind cluster %q: %w", k.o.Name, err)
		}
	} else {
		progress(k.o.Log, start, "creating kind cluster %q from %s (%d worker nodes)", k.o.Name, k.o.NodeImage, k.o.Nodes)
		if err := os.MkdirAll(filepath.Dir(k.Kubeconfig()), 0o755); err != nil {
			return err
		}
		if err := p.Create(k.o.Name,
			kindcluster.CreateWithV1Alpha4Config(k.Config()),
			kindcluster.CreateWithKubeconfigPath(k.Kubeconfig()),
			kindcluster.CreateWithWaitForReady(3*time.Minute),
			kindcluster.CreateWithDisplayUsage(false),
			kindcluster.CreateWithDisplaySalutation(false),
		); err != nil {
			return fmt.Errorf("creating kind cluster %q: %w", k.o.Name, err)
		}
		if err := ForgetDiscovery(k.Kubeconfig()); err != nil {
			return err
		}
	}
	if err := WaitForNodes(ctx, k.Kubeconfig(), k.o.Nodes+1, 3*time.Minute, k.o.Log); err != nil {
		return err
	}
	// Pods can be created only once the default ServiceAccount exists. A
	// new controller-manager on a busy 2-core machine has taken over a minute.
	if err := WaitForDefaultServiceAccount(ctx, k.Kubeconfig(), 3*time.Minute); err != nil {
		return err
	}
	if err := WaitForDaemonSets(ctx, k.Kubeconfig(), 3*time.Minute, k.o.Log); err != nil {
		return err
	}
	progress(k.o.Log, start, "kind cluster %q is ready; kubeconfig: %s", k.o.Name, k.Kubeconfig())
	return nil
}

func (k *kind) Down(ctx context.Context) error {
	exists, err := k.Exists(ctx)
	if err != nil {
		return err
	}
	if exists {
		start := time.Now()
		if err := k.provider().Delete(k.o.Name, k.Kubeconfig()); err != nil {
			return fmt.Errorf("deleting kind cluster %q: %w", k.o.Name, err)
		}
		progress(k.o.Log, start, "deleted kind cluster %q", k.o.Name)
	}
	_ = os.Remove(k.Kubeconfig())
	removeEmptyDirs(filepath.Dir(k.Kubeconfig()), k.o.WorkDir)
	return nil
}

func dockerCLI(ctx context.Context, args ...string) (string, error) {
	if _, err := exec.LookPath("docker"); err != nil {
		return "", fmt.Errorf("no docker command on PATH")
	}
	cmd := exec.CommandContext(ctx, "docker", args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("docker %s: no answer within %s", args[0], preflightTimeout)
		}
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return "", fmt.Errorf("%s", msg)
	}
	return stdout.String(), nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
