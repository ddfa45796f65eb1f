package cluster

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	kindconfig "sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/yaml"
)

func TestNewRejectsUnknownProvider(t *testing.T) {
	_, err := New("minikube", Options{})
	if err == nil || !strings.Contains(err.Error(), `"minikube"`) || !strings.Contains(err.Error(), "kwok, kind, existing") {
		t.Fatalf("want an error naming the bad value and the valid ones, got %v", err)
	}
}

func TestOptionsFromEnv(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "versions.env"), "# pins\nKIND_NODE_IMAGE_DEFAULT=kindest/node:v1.36.4@sha256:abc\n")
	patch := filepath.Join(root, "patch.yaml")
	write(t, patch, "kind: KubeletConfiguration\nfailCgroupV1: false\n")
	t.Setenv("CLUSTER_NAME", "")
	t.Setenv("LOCALBIN", "")
	t.Setenv("CLUSTER_WORKDIR", "")
	t.Setenv("CLUSTER_NODES", "")
	t.Setenv("KIND_NODE_IMAGE", "")
	t.Setenv("KIND_KUBEADM_PATCHES", patch)

	o, err := OptionsFromEnv(root)
	if err != nil {
		t.Fatal(err)
	}
	if o.Name != DefaultName || o.BinDir != filepath.Join(root, "bin") || o.Nodes != 2 {
		t.Errorf("defaults: got name %q, bin %q, nodes %d", o.Name, o.BinDir, o.Nodes)
	}
	if o.NodeImage != "kindest/node:v1.36.4@sha256:abc" {
		t.Errorf("node image: want the pin from versions.env, got %q", o.NodeImage)
	}
	if len(o.KubeadmConfigPatches) != 1 || !strings.Contains(o.KubeadmConfigPatches[0], "failCgroupV1") {
		t.Errorf("kubeadm patches: got %q", o.KubeadmConfigPatches)
	}

	t.Setenv("KIND_NODE_IMAGE", "my/node:dev")
	if o, _ := OptionsFromEnv(root); o.NodeImage != "my/node:dev" {
		t.Errorf("KIND_NODE_IMAGE must win over the pin, got %q", o.NodeImage)
	}

	t.Setenv("CLUSTER_NODES", "two")
	if _, err := OptionsFromEnv(root); err == nil || !strings.Contains(err.Error(), `CLUSTER_NODES="two"`) {
		t.Errorf("want an error naming CLUSTER_NODES, got %v", err)
	}
}

func TestHostKubeadmPatches(t *testing.T) {
	dir := t.TempDir()
	v2 := filepath.Join(dir, "cgroup.controllers")
	write(t, v2, "cpu memory pids\n")
	v1 := filepath.Join(dir, "absent", "cgroup.controllers")

	if got := hostKubeadmPatches(v2, nil); len(got) != 0 {
		t.Errorf("cgroup v2 host: want no patches, got %q", got)
	}
	got := hostKubeadmPatches(v1, nil)
	if len(got) != 1 || got[0] != CgroupV1KubeletPatch {
		t.Fatalf("cgroup v1 host: want the failCgroupV1 patch, got %q", got)
	}
	// The patch must be one kind applies: it matches on kind and apiVersion.
	var p struct {
		APIVersion   string `json:"apiVersion"`
		Kind         string `json:"kind"`
		FailCgroupV1 *bool  `json:"failCgroupV1"`
	}
	if err := yaml.Unmarshal([]byte(got[0]), &p); err != nil {
		t.Fatal(err)
	}
	if p.APIVersion != "kubelet.config.k8s.io/v1beta1" || p.Kind != "KubeletConfiguration" || p.FailCgroupV1 == nil || *p.FailCgroupV1 {
		t.Errorf("patch: want KubeletConfiguration (kubelet.config.k8s.io/v1beta1) with failCgroupV1: false, got %+v", p)
	}
	if got := hostKubeadmPatches(v1, []string{"kind: KubeletConfiguration\nfailCgroupV1: false\n"}); len(got) != 0 {
		t.Errorf("cgroup v1 host whose user patches set failCgroupV1: want no second patch, got %q", got)
	}

	// OptionsFromEnv adds it after the user's patches, on such a host only.
	root := t.TempDir()
	write(t, filepath.Join(root, "versions.env"), "KIND_NODE_IMAGE_DEFAULT=kindest/node:v1.36.4\n")
	t.Setenv("KIND_KUBEADM_PATCHES", "")
	for _, tc := range []struct {
		marker string
		want   int
	}{{v1, 1}, {v2, 0}} {
		old := cgroupV2Marker
		cgroupV2Marker = tc.marker
		o, err := OptionsFromEnv(root)
		cgroupV2Marker = old
		if err != nil {
			t.Fatal(err)
		}
		if len(o.KubeadmConfigPatches) != tc.want {
			t.Errorf("marker %s: want %d patches, got %q", tc.marker, tc.want, o.KubeadmConfigPatches)
		}
	}
}

func TestFindRoot(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "versions.env"), "")
	deep := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := FindRoot(deep); err != nil || got != root {
		t.Errorf("FindRoot(%s) = %q, %v; want %q", deep, got, err, root)
	}
	if _, err := FindRoot(t.TempDir()); err == nil {
		t.Error("want an error outside the repository")
	}
}

func TestVersionsFileOfTheRepository(t *testing.T) {
	root, err := FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	v, err := Versions(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"KUBERNETES_VERSION", "K8S_LIBS_VERSION", "CONTROLLER_RUNTIME_VERSION", "KIND_VERSION", "KWOK_VERSION", "KIND_NODE_IMAGE_DEFAULT"} {
		if v[key] == "" {
			t.Errorf("versions.env has no %s", key)
		}
	}
	// kind's node image must be the Kubernetes minor the server binaries are.
	minor := v["KUBERNETES_VERSION"][:strings.LastIndex(v["KUBERNETES_VERSION"], ".")]
	if !strings.Contains(v["KIND_NODE_IMAGE_DEFAULT"], ":"+minor+".") || !strings.Contains(v["KIND_NODE_IMAGE_DEFAULT"], "@sha256:") {
		t.Errorf("KIND_NODE_IMAGE_DEFAULT %q: want a %s image pinned by digest", v["KIND_NODE_IMAGE_DEFAULT"], minor)
	}
}

func TestKindConfig(t *testing.T) {
	k := newKind(Options{Name: "demo", Nodes: 2, NodeImage: "kindest/node:v1.36.4@sha256:abc",
		KubeadmConfigPatches: []string{"kind: KubeletConfiguration\nfailCgroupV1: false\n"}})
	c := k.Config()
	if c.Name != "demo" || len(c.Nodes) != 3 {
		t.Fatalf("want cluster demo with 3 nodes, got %q with %d", c.Name, len(c.Nodes))
	}
	if c.Nodes[0].Role != kindconfig.ControlPlaneRole || c.Nodes[1].Role != kindconfig.WorkerRole || c.Nodes[2].Role != kindconfig.WorkerRole {
		t.Errorf("roles: got %s, %s, %s", c.Nodes[0].Role, c.Nodes[1].Role, c.Nodes[2].Role)
	}
	for i, n := range c.Nodes {
		if n.Image != "kindest/node:v1.36.4@sha256:abc" {
			t.Errorf("node %d image: got %q", i, n.Image)
		}
	}
	// The configuration must be one kind accepts as a file, too.
	b, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"apiVersion: kind.x-k8s.io/v1alpha4", "kind: Cluster", "failCgroupV1: false", "role: control-plane"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("config YAML lacks %q:\n%s", want, b)
		}
	}

	if n := len(newKind(Options{Name: "x", Nodes: 0}).Config().Nodes); n != 1 {
		t.Errorf("Nodes=0: want a lone control-plane node, got %d nodes", n)
	}
}

func TestKindPreflightWithoutDocker(t *testing.T) {
	// The real docker CLI, pointed at a socket where nothing listens.
	t.Setenv("DOCKER_HOST", "unix://"+filepath.Join(t.TempDir(), "docker.sock"))
	k := newKind(Options{Name: "x", Log: io.Discard})
	start := time.Now()
	err := k.Up(context.Background())
	if err == nil {
		t.Fatal("Up succeeded without a Docker daemon")
	}
	if !strings.Contains(err.Error(), "CLUSTER=kwok") || !strings.Contains(err.Error(), "Docker daemon") {
		t.Errorf("the error must say Docker is missing and name CLUSTER=kwok, got: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("preflight took %s; it must answer within 5s", d)
	}
}

func TestKindPreflightTimesOut(t *testing.T) {
	k := newKind(Options{Name: "x"})
	k.docker = func(ctx context.Context, args ...string) (string, error) {
		<-ctx.Done() // a daemon that never answers
		return "", errors.New("docker info: no answer")
	}
	start := time.Now()
	err := k.Preflight(context.Background())
	if err == nil || !strings.Contains(err.Error(), "CLUSTER=kwok") {
		t.Fatalf("want a preflight error naming CLUSTER=kwok, got %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("preflight waited %s for a silent daemon; want under 5s", d)
	}
}

func TestKindPreflightWithDocker(t *testing.T) {
	k := newKind(Options{Name: "x"})
	k.docker = func(ctx context.Context, args ...string) (string, error) { return "28.2.2\n", nil }
	if err := k.Preflight(context.Background()); err != nil {
		t.Fatalf("a daemon answered, yet preflight failed: %v", err)
	}
}

func TestKwokPreflightNamesMissingTools(t *testing.T) {
	err := newKwok(Options{BinDir: t.TempDir()}).Preflight(context.Background())
	if err == nil || !strings.Contains(err.Error(), "kwokctl") || !strings.Contains(err.Error(), "make tools") {
		t.Errorf("want an error naming kwokctl and `make tools`, got %v", err)
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
