package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"example.com/k8s-demo/e2e/cluster"
	"example.com/k8s-demo/e2e/process"
	"example.com/k8s-demo/e2e/retries"
)

// These tests run against a real cluster (kwok by default): they check the
// cluster the providers bring up and the harness the suites stand on.

func TestMain(m *testing.M) { Main(m) }

func TestClusterHasReadyNodesAndRunsPods(t *testing.T) {
	h := New(t)
	nodes, err := h.Env.Client.CoreV1().Nodes().List(h.Ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ready := 0
	for _, n := range nodes.Items {
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				ready++
			}
		}
	}
	if ready < 2 {
		t.Fatalf("want at least 2 Ready nodes, got %d of %d", ready, len(nodes.Items))
	}

	h.Kubectl("run", "busybox", "--image=busybox", "--restart=Never", "--", "sleep", "3600")
	h.Track("pod/busybox")
	h.WaitFor("pod busybox to be Running", time.Minute, func(ctx context.Context) (bool, string, error) {
		p, err := h.Env.Client.CoreV1().Pods(h.Namespace).Get(ctx, "busybox", metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		return p.Status.Phase == corev1.PodRunning, fmt.Sprintf("phase %s on node %q", p.Status.Phase, p.Spec.NodeName), nil
	})
}

func TestImagesAreLoadedWithKindsOwnCommand(t *testing.T) {
	t.Setenv("CLUSTER", "kind")
	t.Setenv("CLUSTER_NAME", "demo")
	got, err := kindLoad("/repo/bin", "k8s-demo/crd-demo:e2e")
	if want := "/repo/bin/kind load docker-image k8s-demo/crd-demo:e2e --name demo"; err != nil || strings.Join(got, " ") != want {
		t.Errorf("want %q, got %q (%v)", want, strings.Join(got, " "), err)
	}
	for _, p := range []string{"kwok", "existing"} {
		t.Setenv("CLUSTER", p)
		if _, err := kindLoad("/repo/bin", "x:dev"); err == nil || !strings.Contains(err.Error(), "CLUSTER=kind") {
			t.Errorf("CLUSTER=%s: want an error that says to use CLUSTER=kind, got %v", p, err)
		}
	}
}

func TestKubectlAndServerArePinnedVersion(t *testing.T) {
	h := New(t)
	versions, err := cluster.Versions(h.Env.Root)
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Client struct{ GitVersion string } `json:"clientVersion"`
		Server struct{ GitVersion string } `json:"serverVersion"`
	}
	if err := json.Unmarshal([]byte(h.Kubectl("version", "-o", "json")), &v); err != nil {
		t.Fatal(err)
	}
	want := versions["KUBERNETES_VERSION"]
	if h.Env.Provider.Name() == "existing" && v.Server.GitVersion != want {
		t.Skipf("an existing cluster runs %s; the pinned %s is only checked on clusters the harness made", v.Server.GitVersion, want)
	}
	if v.Client.GitVersion != want || v.Server.GitVersion != want {
		t.Errorf("want kubectl and server at %s, got client %s, server %s", want, v.Client.GitVersion, v.Server.GitVersion)
	}
}

func TestKubeconfigDefaultsToTheTestNamespace(t *testing.T) {
	h := New(t)
	h.Kubectl("create", "configmap", "marker", "--from-literal=k=v")
	if _, err := h.Env.Client.CoreV1().ConfigMaps(h.Namespace).Get(h.Ctx, "marker", metav1.GetOptions{}); err != nil {
		t.Fatalf("kubectl without -n must act in %s: %v", h.Namespace, err)
	}
}

func TestKubectlErrorsSayWhatFailed(t *testing.T) {
	h := New(t)
	_, err := h.KubectlErr("get", "pod", "no-such-pod")
	if err == nil || !strings.Contains(err.Error(), "kubectl get pod no-such-pod") || !strings.Contains(err.Error(), "NotFound") {
		t.Fatalf("want an error naming the command and the server's answer, got %v", err)
	}
}

// TestWaitKeepsWhatItSawWhenTheDeadlineCutsACheckShort: a check refused by
// the client's rate limiter because its turn would come after the deadline
// (as make test's busy machines saw, at 94264a5) must not hide what the checks
// before it saw.
func TestWaitKeepsWhatItSawWhenTheDeadlineCutsACheckShort(t *testing.T) {
	checks := 0
	err := Wait(context.Background(), "3 pods", 300*time.Millisecond, 50*time.Millisecond, func(ctx context.Context) (bool, string, error) {
		if checks++; checks == 1 {
			return false, "0 pods", nil
		}
		return false, "", fmt.Errorf("client rate limiter Wait returned an error: %w", errors.New("rate: Wait(n=1) would exceed context deadline"))
	})
	if err == nil || !strings.Contains(err.Error(), "last seen: 0 pods") {
		t.Fatalf("want a timeout that says it last saw 0 pods, got %v", err)
	}
}

func TestWaitTimeoutSaysWhatAndWhatWasSeen(t *testing.T) {
	h := New(t)
	err := Wait(h.Ctx, "3 pods in "+h.Namespace, time.Second, 100*time.Millisecond, func(ctx context.Context) (bool, string, error) {
		pods, err := h.Env.Client.CoreV1().Pods(h.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		return len(pods.Items) == 3, fmt.Sprintf("%d pods", len(pods.Items)), nil
	})
	if err == nil {
		t.Fatal("want a timeout: nothing creates pods")
	}
	for _, want := range []string{"timed out after", "waiting for 3 pods in " + h.Namespace, "last seen: 0 pods"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("timeout error lacks %q: %v", want, err)
		}
	}

	err = Wait(h.Ctx, "a configmap", 500*time.Millisecond, 100*time.Millisecond, func(ctx context.Context) (bool, string, error) {
		_, err := h.Env.Client.CoreV1().ConfigMaps(h.Namespace).Get(ctx, "absent", metav1.GetOptions{})
		return err == nil, "", err
	})
	if err == nil || !strings.Contains(err.Error(), `last seen: error: configmaps "absent" not found`) {
		t.Errorf("a wait that only saw errors must report the last one, got %v", err)
	}
}

func TestWaitReturnsAsSoonAsDone(t *testing.T) {
	calls := 0
	err := Wait(context.Background(), "the third call", time.Minute, time.Millisecond, func(context.Context) (bool, string, error) {
		calls++
		return calls == 3, "", nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("want success on the third call, got %v after %d calls", err, calls)
	}
}

// failedTB is a test that has failed, whose log is kept for inspection.
type failedTB struct {
	testing.TB
	log bytes.Buffer
}

func (f *failedTB) Failed() bool { return true }
func (f *failedTB) Logf(format string, args ...any) {
	fmt.Fprintf(&f.log, format+"\n", args...)
}

func TestFailureDumpShowsControllerLogEventsAndObjects(t *testing.T) {
	env := Current(t)
	var failed *failedTB
	t.Run("failing", func(t *testing.T) {
		failed = &failedTB{TB: t}
		h := NewWith(failed, env)
		h.Start(ProcessSpec{Name: "controller", Path: "sh", Args: []string{"-c", "echo reconciling custompod/sample; echo KUBECONFIG=$KUBECONFIG; sleep 300"}})
		h.Kubectl("create", "configmap", "involved", "--from-literal=k=v")
		h.Track("configmap/involved")
		h.Kubectl("run", "busybox", "--image=busybox", "--restart=Never", "--", "sleep", "3600")
		h.WaitFor("an event about pod busybox", time.Minute, func(ctx context.Context) (bool, string, error) {
			ev, err := h.Env.Client.CoreV1().Events(h.Namespace).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=busybox"})
			if err != nil {
				return false, "", err
			}
			return len(ev.Items) > 0, fmt.Sprintf("%d events", len(ev.Items)), nil
		})
		h.WaitFor("the controller to have written its log", 10*time.Second, func(context.Context) (bool, string, error) {
			return strings.Contains(h.procs[0].Log(), "KUBECONFIG="), "", nil
		})
	})
	// The clean-ups of the subtest have run: the dump is in its log.
	dump := failed.log.String()
	for _, want := range []string{
		"the test failed",
		"=== log of controller",
		"reconciling custompod/sample",   // the controller's own output
		"KUBECONFIG=" + env.ArtifactsDir, // it ran with the test's kubeconfig
		"kubectl get events",
		"Scheduled", // the scheduler's event for the busybox pod
		"name: involved",
		"busybox",
	} {
		if !strings.Contains(dump, want) {
			t.Errorf("the failure dump lacks %q; it was:\n%s", want, dump)
		}
	}
}

func TestKubeconfigAsHasOnlyTheBoundRole(t *testing.T) {
	h := New(t)
	h.Kubectl("create", "clusterrole", h.Namespace+"-pod-reader", "--verb=get,list,watch", "--resource=pods")
	t.Cleanup(func() { _, _ = h.KubectlErr("delete", "clusterrole", h.Namespace+"-pod-reader") })
	kc := h.KubeconfigAs("reader", h.Namespace+"-pod-reader")
	if !h.Can(kc, "list", "pods") {
		t.Error("the ServiceAccount cannot list pods, which its role allows")
	}
	if h.Can(kc, "create", "pods") {
		t.Error("the ServiceAccount can create pods, which its role does not allow")
	}
	if _, err := h.KubectlErr("--kubeconfig", kc, "create", "configmap", "x"); err == nil || !strings.Contains(err.Error(), "forbidden") {
		t.Errorf("creating a configmap as the ServiceAccount: want forbidden, got %v", err)
	}
}

// fatalTB records the test's Fatalf and stops there, as testing.T would.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}
func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	panic(f)
}
func (f *fatalTB) Fatal(args ...any) {
	f.msg = fmt.Sprint(args...)
	panic(f)
}

func TestWaitForLog(t *testing.T) {
	h := New(t)
	p := h.Start(ProcessSpec{Name: "slow-starter", Path: "sh", Args: []string{"-c", "echo building; sleep 1; printf 'Starting %s\\n' workers; exec sleep 300"}})
	start := time.Now()
	h.WaitForLog(p, regexp.MustCompile("Starting workers"), 30*time.Second)
	if d := time.Since(start); d < time.Second {
		t.Errorf("the wait ended after %s, before the program logged the line (a second in)", d)
	}
	// After a restart, only the new run's output counts.
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := p.Restart(); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	h.WaitForLog(p, regexp.MustCompile("Starting workers"), 30*time.Second)
	if d := time.Since(start); d < time.Second {
		t.Errorf("after a restart the wait ended after %s: it read the first run's output", d)
	}

	// A program that exits first ends the wait at once, with its output.
	q := h.Start(ProcessSpec{Name: "crasher", Path: "sh", Args: []string{"-c", "echo 'listen tcp :8081: bind: address already in use'; exit 1"}})
	fatal := &fatalTB{TB: t}
	start = time.Now()
	func() {
		defer func() {
			if r := recover(); r != nil && r != fatal {
				panic(r)
			}
		}()
		(&H{TB: fatal, Env: h.Env, Ctx: h.Ctx}).WaitForLog(q, regexp.MustCompile("Starting workers"), time.Minute)
	}()
	if !strings.Contains(fatal.msg, `crasher exited (exit status 1) before it logged "Starting workers"`) || !strings.Contains(fatal.msg, "address already in use") {
		t.Errorf("want a failure naming the program and showing its output, got %q", fatal.msg)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the wait went on for %s after the program had exited", d)
	}
}

// A cluster the harness starts as processes on this machine (kwok) serves on
// the loopback interface only: kwokctl's default, 0.0.0.0, would put etcd
// (plain HTTP, no authentication) and the API server on every network the
// machine joins.
func TestClusterProcessesListenOnLoopbackOnly(t *testing.T) {
	h := New(t)
	maker, err := h.Env.Maker()
	if err != nil {
		t.Fatal(err)
	}
	p, ok := maker.(cluster.Processes)
	if !ok {
		t.Skipf("the %s provider's components are not processes of this machine", maker.Name())
	}
	pids := p.ProcessIDs()
	if len(pids) == 0 {
		t.Fatalf("the %s provider names no processes", maker.Name())
	}
	for name, pid := range pids {
		addrs, err := process.Listening(pid)
		if err != nil {
			t.Fatalf("%s (pid %d): %v", name, pid, err)
		}
		for _, a := range addrs {
			if process.Wildcard(a) {
				t.Errorf("%s (pid %d) listens on %s: want the loopback interface only (all its listeners: %v)", name, pid, a, addrs)
			}
		}
	}
}

func TestMakeArgsRunATargetWholeOnlyTheFirstTime(t *testing.T) {
	t.Setenv(GeneratedChecked, "")
	made.Lock()
	made.done = nil // as in a new test binary (-count=2 runs this again)
	made.Unlock()
	for _, c := range []struct {
		dir, target, want string
	}{
		{"kubebuilder-demo", "install", "install"},
		{"kubebuilder-demo", "install", "-o manifests install"},
		{"kubebuilder-demo", "run", "run"},
		{"operator-demo", "install", "install"},
		{"kubebuilder-demo", "run", "-o manifests -o generate run"},
	} {
		if got := strings.Join(MakeArgs(c.dir, c.target), " "); got != c.want {
			t.Errorf("MakeArgs(%q, %q) = %q, want %q", c.dir, c.target, got, c.want)
		}
	}
}

func TestMakeArgsRegenerateNothingOnceVerifyChecked(t *testing.T) {
	t.Setenv(GeneratedChecked, "1")
	made.Lock()
	made.done = nil
	made.Unlock()
	for _, target := range []string{"install", "install"} {
		if got, want := strings.Join(MakeArgs("kubebuilder-demo", target), " "), "-o manifests install"; got != want {
			t.Errorf("MakeArgs(%q) = %q, want %q", target, got, want)
		}
	}
}

// WaitEstablished tries kubectl 1.37's answer for a CRD whose conditions are
// still null again, and says so in make test's list of retries (package
// retries); any other answer fails the test at once. (A kubectl of the
// test's own answers: the API server's race is rare.)
func TestWaitEstablishedTriesOnlyTheNullConditionsAnswerAgain(t *testing.T) {
	bin := t.TempDir()
	count := filepath.Join(bin, "count")
	fake := func(answer string) {
		t.Helper()
		script := "#!/bin/sh\nn=$(cat '" + count + "' 2>/dev/null || echo 0); n=$((n+1)); echo $n >'" + count + "'\n" +
			"if [ $n -le 2 ]; then echo '" + answer + "' >&2; exit 1; fi\necho 'condition met'\n"
		if err := os.WriteFile(filepath.Join(bin, "kubectl"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		os.Remove(count)
	}
	list := filepath.Join(t.TempDir(), "retries.log")
	t.Setenv(retries.Env, list)

	fake("error: <nil> is not array or slice and cannot be filtered")
	(&H{TB: t, Env: &Env{BinDir: bin}, Ctx: context.Background()}).WaitEstablished(".", "crd/custompods.zhhnzw.mock.com")
	b, err := os.ReadFile(list)
	if err != nil {
		t.Fatalf("no retry recorded: %v", err)
	}
	want := t.Name() + `: kubectl wait for crd/custompods.zhhnzw.mock.com answered "is not array or slice" (the CRD's conditions still null) 2 times before it waited` + "\n"
	if string(b) != want {
		t.Errorf("the list of retries holds %q, want %q", b, want)
	}

	fake("error: no matching resources found")
	fatal := &fatalTB{TB: t}
	func() {
		defer func() {
			if r := recover(); r != nil && r != fatal {
				panic(r)
			}
		}()
		(&H{TB: fatal, Env: &Env{BinDir: bin}, Ctx: context.Background()}).WaitEstablished(".", "crd/custompods.zhhnzw.mock.com")
	}()
	if !strings.Contains(fatal.msg, "no matching resources found") {
		t.Errorf("another answer: want the test failed with it, got %q", fatal.msg)
	}
	if n, _ := os.ReadFile(count); strings.TrimSpace(string(n)) != "1" {
		t.Errorf("another answer: kubectl ran %s times, want 1", strings.TrimSpace(string(n)))
	}
}
