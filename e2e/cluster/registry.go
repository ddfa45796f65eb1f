package cluster

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// The local registry of articles 000 and 001, run the way kind's
// documentation runs one ("Local Registry"): a registry container published
// on the host's 127.0.0.1:5001, attached to kind's Docker network, and in
// each node a containerd host file saying that localhost:5001 is that
// container. So `docker push localhost:5001/x` on the host, and an image
// `localhost:5001/x` in a pod spec, mean the same registry. Port 5001, as in
// kind's documentation: on macOS, port 5000 is taken by the AirPlay receiver.
const (
	RegistryContainer = "k8s-demo-registry"
	RegistryHost      = "localhost:5001"
)

// Registrar is a provider that can run the local registry: kind's. kwok's
// nodes run no container, so they pull nothing; an existing cluster has
// registries of its own.
type Registrar interface {
	RegistryUp(ctx context.Context, root string) error
	RegistryDown(ctx context.Context) error
}

var _ Registrar = (*kind)(nil)

// registryConfig is the registry's configuration: storage on the
// container's filesystem, plain HTTP on port 5000.
const registryConfig = `version: 0.1
log:
  level: info
storage:
  filesystem:
    rootdirectory: /var/lib/registry
http:
  addr: :5000
`

// registryDockerfile makes the registry's image from bin/registry (CNCF
// distribution, built from its Go module at DISTRIBUTION_VERSION by
// scripts/tools.sh): a static binary, so FROM scratch, and nothing pulled.
const registryDockerfile = `FROM scratch
COPY registry /registry
COPY config.yml /etc/registry/config.yml
ENV OTEL_TRACES_EXPORTER=none
VOLUME /var/lib/registry
EXPOSE 5000
ENTRYPOINT ["/registry", "serve", "/etc/registry/config.yml"]
`

// RegistryUp starts the local registry, if it is not running, and points
// the kind cluster's nodes at it. It can be called again at any time: a
// node added since gets its host file.
func (k *kind) RegistryUp(ctx context.Context, root string) error {
	if err := k.Preflight(ctx); err != nil {
		return err
	}
	start := time.Now()
	versions, err := Versions(root)
	if err != nil {
		return err
	}
	image := "k8s-demo/registry:" + versions["DISTRIBUTION_VERSION"]
	if _, err := k.docker(ctx, "image", "inspect", image); err != nil {
		if err := k.buildRegistryImage(ctx, image); err != nil {
			return err
		}
	}
	state, err := k.docker(ctx, "inspect", "-f", "{{.State.Running}}", RegistryContainer)
	switch {
	case err != nil:
		if _, err := k.docker(ctx, "run", "-d", "--restart=always", "--name", RegistryContainer,
			"-p", "127.0.0.1:5001:5000", image); err != nil {
			return fmt.Errorf("starting the registry container: %w", err)
		}
	case strings.TrimSpace(state) != "true":
		if _, err := k.docker(ctx, "start", RegistryContainer); err != nil {
			return fmt.Errorf("starting the registry container again: %w", err)
		}
	}
	// On kind's network the nodes reach it by its container name.
	if _, err := k.docker(ctx, "network", "connect", "kind", RegistryContainer); err != nil && !strings.Contains(err.Error(), "already exists") {
		return fmt.Errorf("connecting the registry to kind's network: %w", err)
	}
	all, err := k.provider().ListInternalNodes(k.o.Name)
	if err != nil {
		return fmt.Errorf("listing nodes of kind cluster %q: %w", k.o.Name, err)
	}
	dir := "/etc/containerd/certs.d/" + RegistryHost
	hosts := fmt.Sprintf("[host.\"http://%s:5000\"]\n", RegistryContainer)
	for _, n := range all {
		if err := n.CommandContext(ctx, "mkdir", "-p", dir).Run(); err != nil {
			return fmt.Errorf("node %s: %w", n, err)
		}
		if err := n.CommandContext(ctx, "cp", "/dev/stdin", dir+"/hosts.toml").SetStdin(strings.NewReader(hosts)).Run(); err != nil {
			return fmt.Errorf("node %s: writing %s/hosts.toml: %w", n, dir, err)
		}
	}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		resp, err := http.Get("http://" + RegistryHost + "/v2/")
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	}); err != nil {
		logs, _ := k.docker(ctx, "logs", "--tail", "20", RegistryContainer)
		return fmt.Errorf("the registry did not answer on http://%s/v2/ in 30s:\n%s", RegistryHost, logs)
	}
	progress(k.o.Log, start, "registry %s (container %s) is up; the nodes of kind cluster %q pull %s/... from it", RegistryHost, RegistryContainer, k.o.Name, RegistryHost)
	return nil
}

// RegistryDown removes the registry container, and the images pushed to it.
func (k *kind) RegistryDown(ctx context.Context) error {
	if _, err := k.docker(ctx, "rm", "-f", "-v", RegistryContainer); err != nil && !strings.Contains(err.Error(), "No such container") {
		return err
	}
	fmt.Fprintf(k.o.Log, "registry %s removed\n", RegistryContainer)
	return nil
}

func (k *kind) buildRegistryImage(ctx context.Context, image string) error {
	bin := filepath.Join(k.o.BinDir, "registry")
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("the registry image needs %s (build it: scripts/tools.sh registry): %w", bin, err)
	}
	dir, err := os.MkdirTemp("", "registry-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := os.Link(bin, filepath.Join(dir, "registry")); err != nil {
		b, err := os.ReadFile(bin)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "registry"), b, 0o755); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "config.yml"), []byte(registryConfig), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(registryDockerfile), 0o644); err != nil {
		return err
	}
	// The classic builder: it never looks for buildx or a registry.
	cmd := exec.CommandContext(ctx, "docker", "build", "-q", "-t", image, dir)
	cmd.Env = append(os.Environ(), "DOCKER_BUILDKIT=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building the registry image %s: %w\n%s", image, err, out)
	}
	return nil
}
