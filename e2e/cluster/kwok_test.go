package cluster

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"example.com/k8s-demo/e2e/process"
	"example.com/k8s-demo/e2e/retries"
	"example.com/k8s-demo/e2e/tier"
)

func TestComponentsNamesTheExitedOnes(t *testing.T) {
	k := newKwok(Options{Name: "c", WorkDir: t.TempDir()})
	for _, d := range []string{"pids", "logs"} {
		if err := os.MkdirAll(filepath.Join(k.clusterDir(), d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// This process runs; a PID past the kernel's default limit does not.
	write(t, filepath.Join(k.clusterDir(), "pids", "kube-apiserver.pid"), fmt.Sprint(os.Getpid()))
	write(t, filepath.Join(k.clusterDir(), "pids", "kube-controller-manager.pid"), "4194999")
	write(t, filepath.Join(k.clusterDir(), "logs", "kube-controller-manager.log"), "line 1\nfailed to listen on 0.0.0.0:32762: bind: address already in use\n")

	got := k.components()
	for _, want := range []string{"have exited: kube-controller-manager", "address already in use"} {
		if !strings.Contains(got, want) {
			t.Errorf("want %q in:\n%s", want, got)
		}
	}
	if strings.Contains(got, "kube-apiserver") {
		t.Errorf("the API server runs, yet it is named:\n%s", got)
	}
}

// TestKwokClustersStartedTogether creates two kwok clusters at once, as two
// terminals or make test's lanes side by side do, with nothing making them
// take turns: each must come up, its components listening on the ports its
// configuration names, none of them the other's. (Left to choose, both
// kwokctl processes would take the same ports, counting down from 32766, and
// one cluster would never work.) Then it stops one and starts it again, as
// `make cluster-up` does for a cluster that exists: its components listen
// where they did.
func TestKwokClustersStartedTogether(t *testing.T) {
	tier.Extended(t)
	o := kwokOptions(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	var wg sync.WaitGroup
	clusters := make([]*kwok, 2)
	for i := range clusters {
		o := o
		o.Name = fmt.Sprintf("k8s-demo-together-%d", i)
		k := newKwok(o)
		clusters[i] = k
		t.Cleanup(func() {
			if err := k.Down(context.Background()); err != nil {
				t.Errorf("deleting %s: %v", o.Name, err)
			}
		})
		wg.Go(func() {
			if err := k.Up(ctx); err != nil {
				t.Errorf("%s: %v", o.Name, err)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	ports := make([][]int, len(clusters))
	for i, k := range clusters {
		ports[i] = listensWhereConfigured(t, k)
	}
	for _, p := range ports[0] {
		if slices.Contains(ports[1], p) {
			t.Errorf("both clusters listen on port %d: %v and %v", p, ports[0], ports[1])
		}
	}
	for i, k := range clusters {
		cfg, err := clientcmd.BuildConfigFromFlags("", k.Kubeconfig())
		if err != nil {
			t.Fatal(err)
		}
		if _, port, _ := net.SplitHostPort(strings.TrimPrefix(cfg.Host, "https://")); !slices.Contains(ports[i], atoi(port)) {
			t.Errorf("%s's kubeconfig names %s, not one of its configured ports %v", k.o.Name, cfg.Host, ports[i])
		}
	}

	// Stopped and started again, the first listens on the same ports.
	// `kwokctl stop` signals the processes and returns; they take a second
	// or two to let go of their ports, and a user types the next command
	// later than that.
	k := clusters[0]
	stopped := k.pids()
	if _, err := k.kwokctl(ctx, "stop", "cluster", "--name", k.o.Name); err != nil {
		t.Fatal(err)
	}
	if err := waitForExit(ctx, stopped, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := k.Up(ctx); err != nil {
		t.Fatal(err)
	}
	if again := listensWhereConfigured(t, k); !slices.Equal(again, ports[0]) {
		t.Errorf("%s, started again, listens on %v; it was created on %v", k.o.Name, again, ports[0])
	}

	// Started while another process holds one of its ports, the component
	// that needs it exits, and Up says which, not "ready".
	k = clusters[1]
	stopped = k.pids()
	if _, err := k.kwokctl(ctx, "stop", "cluster", "--name", k.o.Name); err != nil {
		t.Fatal(err)
	}
	if err := waitForExit(ctx, stopped, time.Minute); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", fmt.Sprintf(":%d", configuredPort(t, k, "kwokControllerPort")))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	err = k.Up(ctx)
	if err == nil || !strings.Contains(err.Error(), "kwok-controller did not start") || !strings.Contains(err.Error(), "address already in use") {
		t.Errorf("Up with kwok-controller's port taken: want an error naming kwok-controller and the port in use, got %v", err)
	}
}

// TestKwokStartsAgainAControllerManagerThatExits kills a cluster's
// controller-manager, as its own check of the API server's health does on a
// busy machine (it exits when /healthz is not ok within 10 seconds), and
// deletes the default ServiceAccount, which only the controller-manager
// makes: while supervise runs, the ServiceAccount comes back, made by a new
// controller-manager, and the restart is in the retries list.
func TestKwokStartsAgainAControllerManagerThatExits(t *testing.T) {
	tier.Extended(t)
	o := kwokOptions(t)
	o.Name = "k8s-demo-supervised"
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	k := newKwok(o)
	t.Cleanup(func() {
		if err := k.Down(context.Background()); err != nil {
			t.Errorf("deleting %s: %v", o.Name, err)
		}
	})
	if err := k.Up(ctx); err != nil {
		t.Fatal(err)
	}
	// The list of this test's own restart, from here: on a busy machine Up
	// may have restarted a controller-manager that lost its Lease or found
	// the API server unhealthy at its start, a retry for make test's list.
	list := filepath.Join(t.TempDir(), "retries.log")
	t.Setenv(retries.Env, list)

	old := k.pids()["kube-controller-manager"]
	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := waitForExit(ctx, map[string]int{"kube-controller-manager": old}, time.Minute); err != nil {
		t.Fatal(err)
	}
	cs, err := Clientset(k.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().ServiceAccounts("default").Delete(ctx, "default", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	stop := k.supervise(ctx, time.Now())
	err = WaitForDefaultServiceAccount(ctx, k.Kubeconfig(), 2*time.Minute)
	stop()
	if err != nil {
		t.Fatalf("with the controller-manager killed and supervised: %v; %s", err, k.components())
	}
	if pid := k.pids()["kube-controller-manager"]; pid == old || syscall.Kill(pid, 0) != nil {
		t.Errorf("the controller-manager: pid %d before, %d after; want a new one, running", old, pid)
	}
	b, err := os.ReadFile(list)
	if err != nil {
		t.Fatalf("the retries list: %v", err)
	}
	if lines := strings.Split(strings.TrimSpace(string(b)), "\n"); len(lines) != 1 || !strings.Contains(lines[0], "kube-controller-manager exited") || !strings.Contains(lines[0], o.Name) {
		t.Errorf("the retries list holds %q; want one line naming %s's kube-controller-manager", b, o.Name)
	}
}

// kwokOptions are the options of a test's own kwok clusters: the
// repository's tools, a work directory of the test's own, no nodes, and no
// progress lines.
func kwokOptions(t *testing.T) Options {
	t.Helper()
	root, err := FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	o, err := OptionsFromEnv(root)
	if err != nil {
		t.Fatal(err)
	}
	o.WorkDir, o.Nodes, o.Log = t.TempDir(), 0, io.Discard
	return o
}

// configuredPort returns one port option of k's saved configuration.
func configuredPort(t *testing.T, k *kwok, option string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(k.clusterDir(), "kwok.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), option+":"); ok {
			return atoi(strings.TrimSpace(v))
		}
	}
	t.Fatalf("%s's kwok.yaml has no %s", k.o.Name, option)
	return 0
}

// listensWhereConfigured fails the test unless the ports k's components
// listen on are, within a minute (a component started again may still be
// starting), exactly the ports of its saved configuration (every port
// option: six), and returns them, sorted.
func listensWhereConfigured(t *testing.T, k *kwok) []int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(k.clusterDir(), "kwok.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var configured []int
	for _, doc := range strings.Split(string(b), "\n---") {
		var c struct {
			Kind    string         `json:"kind"`
			Options map[string]any `json:"options"`
		}
		if err := yaml.Unmarshal([]byte(doc), &c); err != nil {
			t.Fatalf("%s's kwok.yaml: %v", k.o.Name, err)
		}
		if c.Kind != "KwokctlConfiguration" {
			continue
		}
		for key, v := range c.Options {
			if n, ok := v.(float64); ok && strings.HasSuffix(key, "Port") && n != 0 {
				configured = append(configured, int(n))
			}
		}
	}
	slices.Sort(configured)
	if len(configured) != 6 {
		t.Errorf("%s's configuration names ports %v; want the six this package chose", k.o.Name, configured)
	}
	var listening []int
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Second) {
		listening = listening[:0]
		for name, pid := range k.pids() {
			addrs, err := process.Listening(pid)
			if err != nil {
				t.Fatalf("%s (pid %d): %v", name, pid, err)
			}
			for _, a := range addrs {
				_, port, _ := net.SplitHostPort(a)
				listening = append(listening, atoi(port))
			}
		}
		slices.Sort(listening)
		listening = slices.Compact(listening)
		if slices.Equal(listening, configured) || time.Now().After(deadline) {
			break
		}
	}
	t.Logf("%s listens on %v", k.o.Name, listening)
	if !slices.Equal(listening, configured) {
		t.Errorf("%s's components listen on %v; its configuration names %v", k.o.Name, listening, configured)
	}
	return configured
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
