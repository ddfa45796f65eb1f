package harness

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/tools/clientcmd"

	"example.com/k8s-demo/e2e/cluster"
	"example.com/k8s-demo/e2e/retries"
)

// H is one test's view of the cluster: its own namespace, a kubeconfig whose
// context defaults to that namespace (so the tutorials' kubectl commands run
// there verbatim), the processes it started, and the objects to show if it
// fails.
type H struct {
	testing.TB
	Env *Env
	// Ctx ends when the test does.
	Ctx context.Context
	// Namespace is created for the test and deleted after it.
	Namespace string
	// Kubeconfig is the cluster's kubeconfig with Namespace as the default.
	Kubeconfig string
	// Dir is the test's artifacts directory: logs and the failure dump.
	Dir string

	procs    []*Process
	deployed []*Deployed
	tracked  []string
}

// New prepares a test: a namespace, its kubeconfig and artifacts directory,
// and a clean-up that dumps what went on if the test failed.
func New(t testing.TB) *H {
	t.Helper()
	return NewWith(t, Current(t))
}

// NewWith is New on a given Env.
func NewWith(t testing.TB, env *Env) *H {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h := &H{TB: t, Env: env, Ctx: ctx}
	t.Cleanup(cancel)

	h.Namespace = namespaceFor(t.Name())
	h.Dir = filepath.Join(env.ArtifactsDir, sanitize(t.Name()))
	// What an earlier run of the test left there would only mislead.
	if err := os.RemoveAll(h.Dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(h.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: h.Namespace, Labels: map[string]string{"e2e.k8s-demo/test": "true"}}}
	if _, err := env.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", h.Namespace, err)
	}
	t.Cleanup(func() {
		if os.Getenv("E2E_KEEP") == "1" && t.Failed() {
			return
		}
		// Not waited for: the next test has its own namespace.
		_ = env.Client.CoreV1().Namespaces().Delete(context.Background(), h.Namespace, metav1.DeleteOptions{})
	})

	// Pods are refused until the controller-manager has given the namespace
	// its default ServiceAccount (on a busy 2-core machine, at times over a
	// minute).
	if err := Wait(ctx, "the default ServiceAccount of "+h.Namespace, 3*time.Minute, 100*time.Millisecond, func(ctx context.Context) (bool, string, error) {
		_, err := env.Client.CoreV1().ServiceAccounts(h.Namespace).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, "", err
	}); err != nil {
		t.Fatal(err)
	}

	h.Kubeconfig = filepath.Join(h.Dir, "kubeconfig")
	if err := writeKubeconfig(env.Kubeconfig, h.Kubeconfig, h.Namespace); err != nil {
		t.Fatal(err)
	}

	// Registered after the namespace clean-up, so it runs before it; the
	// processes started later are stopped before it, so their logs are whole.
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		var b bytes.Buffer
		h.Dump(&b)
		path := filepath.Join(h.Dir, "dump.txt")
		_ = os.WriteFile(path, b.Bytes(), 0o644)
		t.Logf("the test failed; what the cluster and the processes show (also in %s):\n%s", path, b.String())
	})
	return h
}

// writeKubeconfig copies a kubeconfig, setting the current context's namespace.
func writeKubeconfig(from, to, namespace string) error {
	cfg, err := clientcmd.LoadFromFile(from)
	if err != nil {
		return fmt.Errorf("loading kubeconfig %s: %w", from, err)
	}
	c, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok {
		return fmt.Errorf("kubeconfig %s: current context %q not found", from, cfg.CurrentContext)
	}
	c.Namespace = namespace
	return clientcmd.WriteToFile(*cfg, to)
}

var unsafeChars = regexp.MustCompile(`[^a-z0-9-]+`)

func sanitize(s string) string {
	return strings.Trim(unsafeChars.ReplaceAllString(strings.ToLower(s), "-"), "-")
}

// namespaceFor makes a valid, unique namespace name from a test name.
func namespaceFor(test string) string {
	base := sanitize(test)
	if len(base) > 40 {
		base = strings.Trim(base[:40], "-")
	}
	return "e2e-" + base + "-" + rand.String(5)
}

// Command runs a command with the test's kubeconfig and the pinned tools
// first on PATH, and returns its combined output.
func (h *H) Command(dir, name string, args ...string) (string, error) {
	h.Helper()
	cmd := exec.CommandContext(h.Ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = h.environ()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	h.Logf("$ %s %s   (%s)\n%s", name, strings.Join(args, " "), time.Since(start).Round(time.Millisecond), strings.TrimRight(out.String(), "\n"))
	if err != nil {
		return out.String(), fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out.String())
	}
	return out.String(), nil
}

func (h *H) environ() []string {
	return append(os.Environ(),
		"KUBECONFIG="+h.Kubeconfig,
		"PATH="+h.Env.BinDir+string(os.PathListSeparator)+os.Getenv("PATH"),
	)
}

// KubectlErr runs the pinned kubectl; use it where an error is expected.
func (h *H) KubectlErr(args ...string) (string, error) {
	h.Helper()
	return h.Command("", filepath.Join(h.Env.BinDir, "kubectl"), args...)
}

// Kubectl runs the pinned kubectl and fails the test if it fails.
func (h *H) Kubectl(args ...string) string {
	h.Helper()
	out, err := h.KubectlErr(args...)
	if err != nil {
		h.Fatal(err)
	}
	return out
}

// KubectlIn is Kubectl from a directory, for the tutorials' relative paths.
func (h *H) KubectlIn(dir string, args ...string) string {
	h.Helper()
	out, err := h.Command(dir, filepath.Join(h.Env.BinDir, "kubectl"), args...)
	if err != nil {
		h.Fatal(err)
	}
	return out
}

// WaitEstablished waits until the API server serves the CRDs the kubectl
// arguments name (from dir, for relative paths: "-f", FILE or "crd/NAME").
// kubectl 1.37's wait fails at once, rather than waiting, when it reads a new
// CRD whose .status.conditions is still null ("<nil> is not array or slice
// and cannot be filtered"): that answer is tried again, any other fails the
// test.
func (h *H) WaitEstablished(dir string, what ...string) {
	h.Helper()
	deadline := time.Now().Add(time.Minute)
	for tries := 1; ; tries++ {
		args := append([]string{"wait", cluster.WaitEstablished, "--timeout=60s"}, what...)
		out, err := h.Command(dir, filepath.Join(h.Env.BinDir, "kubectl"), args...)
		if err == nil {
			if tries > 1 {
				retries.Note(h, fmt.Sprintf("kubectl wait for %s answered \"is not array or slice\" (the CRD's conditions still null) %d times before it waited", strings.Join(what, " "), tries-1))
			}
			return
		}
		if !strings.Contains(out, "is not array or slice") || time.Now().After(deadline) {
			h.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// EnforceRestricted makes the test's namespace enforce the "restricted" Pod
// Security Standard: the API server's PodSecurity admission refuses any pod
// that asks for more (root, privilege escalation, capabilities...).
func (h *H) EnforceRestricted() {
	h.Helper()
	h.Kubectl("label", "namespace", h.Namespace, "pod-security.kubernetes.io/enforce=restricted")
}

// Track adds objects ("kind/name", in the test's namespace, or "kind" for all
// of a kind) to what a failure dump shows.
func (h *H) Track(objs ...string) { h.tracked = append(h.tracked, objs...) }

// WaitFor waits for check, failing the test with what was awaited and what
// was last seen if it does not happen within timeout.
func (h *H) WaitFor(what string, timeout time.Duration, check Check) {
	h.Helper()
	start := time.Now()
	if err := Wait(h.Ctx, what, timeout, 250*time.Millisecond, check); err != nil {
		h.Fatal(err)
	}
	h.Logf("waited %s for %s", time.Since(start).Round(time.Millisecond), what)
}

// ExpectEvent waits for an event with reason about the object of kind and
// name in the test's namespace, and fails the test if none comes. A
// controller's recorder drops an event the API server refuses, and only logs
// it: the event in the API is what shows the controller's role lets it
// record events.
func (h *H) ExpectEvent(kind, name, reason string) {
	h.Helper()
	h.WaitFor(fmt.Sprintf("a %s event about %s %s", reason, kind, name), 30*time.Second, func(ctx context.Context) (bool, string, error) {
		list, err := h.Env.Client.EventsV1().Events(h.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		var seen []string
		for _, e := range list.Items {
			if e.Regarding.Kind == kind && e.Regarding.Name == name {
				if e.Reason == reason {
					return true, "", nil
				}
				seen = append(seen, e.Reason)
			}
		}
		return false, fmt.Sprintf("events about it: %v", seen), nil
	})
}

// ExpectManager fails the test unless obj's managedFields have an entry of
// manager for subresource ("" for the object itself): the controller's
// writes name it, not the program the API server would take from the user
// agent.
func (h *H) ExpectManager(obj metav1.Object, manager, subresource string) {
	h.Helper()
	var seen []string
	for _, m := range obj.GetManagedFields() {
		if m.Manager == manager && m.Subresource == subresource {
			return
		}
		seen = append(seen, m.Manager+" "+m.Subresource)
	}
	h.Errorf("%s: no managedFields entry of %s for subresource %q; entries: %q", obj.GetName(), manager, subresource, seen)
}

// Dump writes what a reader needs to see why a test failed: the namespace's
// events, its pods and the tracked objects, and the processes' logs.
func (h *H) Dump(w io.Writer) {
	kubectl := func(args ...string) {
		cmd := exec.Command(filepath.Join(h.Env.BinDir, "kubectl"), args...)
		cmd.Env = h.environ()
		out, err := cmd.CombinedOutput()
		fmt.Fprintf(w, "\n--- kubectl %s\n%s", strings.Join(args, " "), out)
		if err != nil {
			fmt.Fprintf(w, "(%v)\n", err)
		}
	}
	fmt.Fprintf(w, "=== namespace %s\n", h.Namespace)
	kubectl("get", "events", "--sort-by=.metadata.creationTimestamp")
	kubectl("get", "pods", "-o", "wide")
	for _, obj := range h.tracked {
		kubectl("get", obj, "-o", "yaml")
	}
	for _, p := range h.procs {
		state := "running"
		if !p.Running() {
			state = fmt.Sprintf("exited: %v", p.ExitErr())
		}
		fmt.Fprintf(w, "\n=== log of %s (%s; last 200 lines of %s)\n%s\n", p.Spec.Name, state, p.Spec.LogFile, p.Tail(200))
	}
	for _, d := range h.deployed {
		fmt.Fprintf(w, "\n=== log of the in-cluster controller %s (image %s; last 300 lines)\n%s\n", d.name(), d.image, d.Tail(300))
	}
}

// ExpectAPIServerLogged fails the test unless the controller's log names the
// API server it talks to, on a line with "Using the API server": beside the
// cluster, the one the harness's kubeconfig names. A controller started in a
// terminal without KUBECONFIG falls back to ~/.kube/config; this line is how
// its reader finds out.
func (h *H) ExpectAPIServerLogged(c Controller) {
	h.Helper()
	log := c.Log()
	i := strings.Index(log, "Using the API server")
	if i < 0 {
		h.Errorf("the controller's log has no \"Using the API server\" line naming the cluster it talks to:\n%s", c.Tail(20))
		return
	}
	line, _, _ := strings.Cut(log[i:], "\n")
	if !InCluster() && !strings.Contains(line, h.Env.Config.Host) {
		h.Errorf("the controller logged %q; expected it to name %s, the API server of the cluster under test", line, h.Env.Config.Host)
	}
}
