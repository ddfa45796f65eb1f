package harness

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"example.com/k8s-demo/e2e/cluster"
)

// InCluster reports whether the suites run the demos' controllers in the
// cluster, from images built here and deployed with `make deploy`
// (E2E_MANAGERS=in-cluster, which `make e2e CLUSTER=kind` sets), instead of
// beside it as `make run` does.
func InCluster() bool { return os.Getenv("E2E_MANAGERS") == "in-cluster" }

// Controller is a controller a test started: a process (Start) or a
// Deployment (Deploy).
type Controller interface {
	// Log is all it has written so far; Tail the last n lines of that.
	Log() string
	Tail(n int) string
	// Stop ends it gracefully; Kill at once, with SIGKILL, as a crash would.
	Stop() error
	Kill() error
	// Restart starts it again after Stop or Kill.
	Restart() error
}

var _ Controller = (*Process)(nil)
var _ Controller = (*Deployed)(nil)

// DeploySpec is a demo module's `make docker-build` and `make deploy`.
type DeploySpec struct {
	// Dir is the module, relative to the repository root.
	Dir string
	// Namespace and Deployment name the controller's Deployment that
	// `make deploy` creates.
	Namespace, Deployment string
	// MakeArgs are extra variables for `make deploy` (IMG is set for you).
	MakeArgs []string
	// FromRegistry takes the image to the nodes the articles' way: pushed
	// to the local registry, from which the nodes pull it (kind only),
	// instead of copied into them.
	FromRegistry bool
	// Restore lists files (relative to Dir) that `make deploy` edits, such as
	// the kustomization `kustomize edit set image` rewrites: they are put back
	// after the test so that a run leaves the working tree as it found it.
	Restore []string
}

// Deployed is a controller running in the cluster as a Deployment.
type Deployed struct {
	h     *H
	spec  DeploySpec
	image string

	mu sync.Mutex
	// past holds the logs of the pods that are gone (killed, stopped);
	// final, once the Deployment is removed, all of it.
	past  strings.Builder
	final *string
}

// images remembers the images this test binary built and loaded, or pushed.
var images sync.Map // dir, or the image pushed -> *imageBuild

type imageBuild struct {
	once sync.Once
	err  error
}

// ImageFor builds the module's image with `make docker-build` (once per test
// binary; Docker's layer cache makes later builds quick) and loads it into the
// cluster's nodes with kind's own `kind load docker-image` (bin/kind).
// E2E_DOCKER_BUILD_ARGS are passed as DOCKER_BUILD_ARGS (base images for a
// build with no registry).
func (h *H) ImageFor(dir string) string {
	h.Helper()
	image := "k8s-demo/" + dir + ":e2e"
	v, _ := images.LoadOrStore(dir, &imageBuild{})
	b := v.(*imageBuild)
	b.once.Do(func() {
		start := time.Now()
		var load []string
		if load, b.err = kindLoad(h.Env.BinDir, image); b.err != nil {
			return
		}
		if _, b.err = h.Command(h.Path(dir), "make", "docker-build", "IMG="+image,
			"DOCKER_BUILD_ARGS="+os.Getenv("E2E_DOCKER_BUILD_ARGS")); b.err != nil {
			return
		}
		if _, b.err = h.Command(h.Path(), load[0], load[1:]...); b.err != nil {
			return
		}
		h.Logf("image %s built and loaded in %s", image, time.Since(start).Round(time.Second))
	})
	if b.err != nil {
		h.Fatalf("image %s: %v", image, b.err)
	}
	return image
}

// kindLoad is the command that copies a local image into the nodes of the
// kind cluster the suite runs on (CLUSTER=kind, named CLUSTER_NAME): kind's
// own, as a reader types it. Only kind's nodes run containers from images
// made here: kwok's run none, and an existing cluster pulls from registries.
func kindLoad(binDir, image string) ([]string, error) {
	if p := envOr("CLUSTER", "kwok"); p != "kind" {
		return nil, fmt.Errorf("controllers run in the cluster (E2E_MANAGERS=in-cluster) only on kind, whose nodes "+
			"`kind load docker-image` copies the image into; this suite runs on CLUSTER=%q: "+
			"use CLUSTER=kind, or E2E_MANAGERS=out-of-cluster", p)
	}
	return []string{filepath.Join(binDir, "kind"), "load", "docker-image", image, "--name", os.Getenv("CLUSTER_NAME")}, nil
}

// registry is the local registry, started once per test binary if it was
// not running, and removed at the end if this binary started it.
var registry struct {
	once    sync.Once
	err     error
	started bool
}

// ImageInRegistry builds the module's image as the articles do, for the
// local registry: `make registry-up` (the registry on localhost:5001, the
// nodes pointed at it), then `make docker-build docker-push
// IMG=localhost:5001/<dir>:e2e`. The nodes pull it from there.
func (h *H) ImageInRegistry(dir string) string {
	h.Helper()
	registry.once.Do(func() {
		if _, err := exec.Command("docker", "inspect", cluster.RegistryContainer).CombinedOutput(); err != nil {
			registry.started = true
		}
		_, registry.err = h.Command(h.Path(), "make", "-s", "registry-up")
	})
	if registry.err != nil {
		h.Fatalf("the local registry: %v", registry.err)
	}
	image := cluster.RegistryHost + "/" + dir + ":e2e"
	v, _ := images.LoadOrStore(image, &imageBuild{})
	b := v.(*imageBuild)
	b.once.Do(func() {
		start := time.Now()
		if _, b.err = h.Command(h.Path(dir), "make", "docker-build", "docker-push", "IMG="+image,
			"DOCKER_BUILD_ARGS="+os.Getenv("E2E_DOCKER_BUILD_ARGS")); b.err == nil {
			h.Logf("image %s built and pushed in %s", image, time.Since(start).Round(time.Second))
		}
	})
	if b.err != nil {
		h.Fatalf("image %s: %v", image, b.err)
	}
	return image
}

// stopRegistry removes the local registry if this test binary started it.
func stopRegistry(root string) {
	if !registry.started {
		return
	}
	cmd := exec.Command("make", "-s", "registry-down")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: removing the local registry: %v\n%s", err, out)
	}
}

// Deploy builds and loads the module's image, runs `make deploy IMG=...` as
// the articles do, and waits for the controller's Deployment to roll out. When
// the test ends it runs `make undeploy` (the CRDs go with it), after keeping
// the controller's logs for the failure dump.
func (h *H) Deploy(spec DeploySpec) *Deployed {
	h.Helper()
	d := &Deployed{h: h, spec: spec}
	if spec.FromRegistry {
		d.image = h.ImageInRegistry(spec.Dir)
	} else {
		d.image = h.ImageFor(spec.Dir)
	}
	dir := h.Path(spec.Dir)
	saved := map[string][]byte{}
	for _, f := range spec.Restore {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			h.Fatal(err)
		}
		saved[f] = b
	}
	h.Cleanup(func() {
		for f, b := range saved {
			_ = os.WriteFile(filepath.Join(dir, f), b, 0o644)
		}
	})
	h.deployed = append(h.deployed, d)
	h.Cleanup(d.undeploy)
	if _, err := h.Command(dir, "make", append([]string{"deploy", "IMG=" + d.image}, spec.MakeArgs...)...); err != nil {
		h.Fatal(err)
	}
	if err := d.waitForNewPod(nil); err != nil {
		h.Fatal(err)
	}
	// The CRDs `make deploy` created are served once Established.
	h.WaitEstablished("", "crd", "--all")
	return d
}

func (d *Deployed) name() string { return d.spec.Namespace + "/" + d.spec.Deployment }

// pods lists the Deployment's pods.
func (d *Deployed) pods(ctx context.Context) ([]corev1.Pod, error) {
	dep, err := d.h.Env.Client.AppsV1().Deployments(d.spec.Namespace).Get(ctx, d.spec.Deployment, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	sel, err := metav1.LabelSelectorAsSelector(dep.Spec.Selector)
	if err != nil {
		return nil, err
	}
	list, err := d.h.Env.Client.CoreV1().Pods(d.spec.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

// podLog is a pod's log: its previous container's too, if it restarted.
func (d *Deployed) podLog(ctx context.Context, p corev1.Pod) string {
	var b strings.Builder
	restarted := len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].RestartCount > 0
	for _, previous := range []bool{true, false} {
		if previous && !restarted {
			continue
		}
		raw, err := d.h.Env.Client.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{Previous: previous}).DoRaw(ctx)
		fmt.Fprintf(&b, "=== pod %s (node %s)%s\n", p.Name, p.Spec.NodeName, map[bool]string{true: ", previous container", false: ""}[previous])
		if err != nil {
			fmt.Fprintf(&b, "(no log: %v)\n", err)
			continue
		}
		b.Write(raw)
	}
	return b.String()
}

// Log is what the controller's pods have written, those gone included.
func (d *Deployed) Log() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.final != nil {
		return *d.final
	}
	return d.past.String() + d.currentLog()
}

func (d *Deployed) currentLog() string {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pods, err := d.pods(ctx)
	if err != nil {
		return fmt.Sprintf("(listing the pods of %s: %v)\n", d.name(), err)
	}
	var b strings.Builder
	for _, p := range pods {
		b.WriteString(d.podLog(ctx, p))
	}
	return b.String()
}

// keepLogs moves the current pods' logs into past, before the pods go.
func (d *Deployed) keepLogs() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.past.WriteString(d.currentLog())
}

// Tail is the last n lines of Log.
func (d *Deployed) Tail(n int) string {
	lines := strings.Split(strings.TrimRight(d.Log(), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Stop scales the Deployment to zero and waits for its pods to be gone: the
// pods get SIGTERM and their grace period, as on any rollout.
func (d *Deployed) Stop() error {
	d.keepLogs()
	if err := d.scale(0); err != nil {
		return err
	}
	return Wait(d.h.Ctx, "no pods left of "+d.name(), 2*time.Minute, 250*time.Millisecond, func(ctx context.Context) (bool, string, error) {
		pods, err := d.pods(ctx)
		return err == nil && len(pods) == 0, fmt.Sprintf("%d pods", len(pods)), err
	})
}

// Kill ends the controller's containers at once: the CRI's StopContainer with
// no grace period, which is SIGKILL, run on their kind nodes. No clean-up code
// of the controller runs, as in a crash or an OOM kill.
func (d *Deployed) Kill() error {
	d.keepLogs()
	pods, err := d.pods(d.h.Ctx)
	if err != nil {
		return err
	}
	for _, p := range pods {
		for _, c := range p.Status.ContainerStatuses {
			if c.State.Running == nil || c.ContainerID == "" {
				continue
			}
			id := c.ContainerID[strings.Index(c.ContainerID, "://")+3:]
			// stop's --timeout is the grace period (0: SIGKILL). crictl's own
			// --timeout bounds each call to containerd, 2 s by default, which
			// a loaded machine exceeds while the killed process is reaped:
			// "StopContainer from runtime service failed ... DeadlineExceeded".
			out, err := exec.CommandContext(d.h.Ctx, "docker", "exec", p.Spec.NodeName,
				"crictl", "--timeout", "30s", "stop", "--timeout", "0", id).CombinedOutput()
			if err != nil {
				return fmt.Errorf("killing container %s of pod %s on node %s: %v: %s", c.Name, p.Name, p.Spec.NodeName, err, out)
			}
		}
	}
	return nil
}

// Restart brings the controller back in a new pod: the Deployment scaled to
// one, its old pods deleted at once, and a new one running.
func (d *Deployed) Restart() error {
	pods, err := d.pods(d.h.Ctx)
	if err != nil {
		return err
	}
	var old []string
	zero := int64(0)
	for _, p := range pods {
		old = append(old, p.Name)
		if err := d.h.Env.Client.CoreV1().Pods(p.Namespace).Delete(d.h.Ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
			return err
		}
	}
	if err := d.scale(1); err != nil {
		return err
	}
	return d.waitForNewPod(old)
}

func (d *Deployed) scale(n int32) error {
	s, err := d.h.Env.Client.AppsV1().Deployments(d.spec.Namespace).GetScale(d.h.Ctx, d.spec.Deployment, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if s.Spec.Replicas == n {
		return nil
	}
	s.Spec.Replicas = n
	_, err = d.h.Env.Client.AppsV1().Deployments(d.spec.Namespace).UpdateScale(d.h.Ctx, d.spec.Deployment, s, metav1.UpdateOptions{})
	return err
}

// waitForNewPod waits for a pod of the Deployment, not one of old, whose
// containers run.
func (d *Deployed) waitForNewPod(old []string) error {
	return Wait(d.h.Ctx, "a running pod of "+d.name(), 3*time.Minute, 250*time.Millisecond, func(ctx context.Context) (bool, string, error) {
		pods, err := d.pods(ctx)
		if err != nil {
			return false, "", err
		}
		var seen []string
		for _, p := range pods {
			state := string(p.Status.Phase)
			for _, c := range p.Status.ContainerStatuses {
				if w := c.State.Waiting; w != nil {
					state += " " + w.Reason
				}
			}
			seen = append(seen, p.Name+" "+state)
			if slices.Contains(old, p.Name) || p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
				continue
			}
			running := len(p.Status.ContainerStatuses) > 0
			for _, c := range p.Status.ContainerStatuses {
				running = running && c.State.Running != nil
			}
			if running {
				return true, "", nil
			}
		}
		return false, strings.Join(seen, "; "), nil
	})
}

// undeploy keeps the logs (and, if the test failed, the state of the
// controller's namespace) and runs `make undeploy`.
func (d *Deployed) undeploy() {
	h := d.h
	log := d.Log()
	if h.Failed() {
		var b strings.Builder
		b.WriteString(log)
		for _, args := range [][]string{
			{"get", "deployments,pods", "-o", "wide", "-n", d.spec.Namespace},
			{"get", "events", "--sort-by=.metadata.creationTimestamp", "-n", d.spec.Namespace},
		} {
			out, _ := exec.Command(filepath.Join(h.Env.BinDir, "kubectl"), append(args, "--kubeconfig", h.Env.Kubeconfig)...).CombinedOutput()
			fmt.Fprintf(&b, "\n--- kubectl %s\n%s", strings.Join(args, " "), out)
		}
		log = b.String()
	}
	d.mu.Lock()
	d.final = &log
	d.mu.Unlock()
	if os.Getenv("E2E_KEEP") == "1" && h.Failed() {
		return
	}
	// Not through h.Command: the test may be over, its context cancelled.
	cmd := exec.Command("make", append([]string{"undeploy", "IMG=" + d.image, "ignore-not-found=true"}, d.spec.MakeArgs...)...)
	cmd.Dir = h.Path(d.spec.Dir)
	cmd.Env = h.environ()
	if out, err := cmd.CombinedOutput(); err != nil {
		h.Errorf("make undeploy in %s: %v\n%s", d.spec.Dir, err, out)
	}
}

// PodReachableHost is an address of this machine that the cluster's pods can
// reach, for a server the test runs beside the cluster: the gateway of kind's
// Docker network, or 127.0.0.1 when the cluster's nodes are not containers.
func (h *H) PodReachableHost() string {
	h.Helper()
	if !InCluster() {
		return "127.0.0.1"
	}
	out, err := exec.CommandContext(h.Ctx, "docker", "network", "inspect", "kind",
		"-f", "{{range .IPAM.Config}}{{.Gateway}} {{end}}").Output()
	if err != nil {
		h.Fatalf("finding kind's Docker network gateway (docker network inspect kind): %v", err)
	}
	for _, ip := range strings.Fields(string(out)) {
		if !strings.Contains(ip, ":") {
			return ip
		}
	}
	h.Fatalf("kind's Docker network has no IPv4 gateway: got %q", strings.TrimSpace(string(out)))
	return ""
}
