package cluster

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
)

func TestStartLockTakesTurns(t *testing.T) {
	startLockPath = filepath.Join(t.TempDir(), "start.lock")
	t.Cleanup(func() { startLockPath = filepath.Join(os.TempDir(), "k8s-demo-kwok-start.lock") })

	unlock, err := startLock(context.Background(), io.Discard, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	// A second starter, even in the same process, waits and says why.
	var log bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := startLock(ctx, &log, time.Now()); err == nil || !strings.Contains(err.Error(), startLockPath) {
		t.Errorf("while the lock is held: want an error naming %s, got %v", startLockPath, err)
	}
	if !strings.Contains(log.String(), "another kwok cluster on this machine is starting") {
		t.Errorf("while the lock is held: want a progress line, got %q", log.String())
	}
	unlock()
	again, err := startLock(context.Background(), io.Discard, time.Now())
	if err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	again()
}

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

// TestKwokClustersStartedTogether starts two kwok clusters at once, as two
// terminals or CI's lanes side by side do. Without the start lock both
// kwokctl processes choose the same ports, and one cluster never works.
func TestKwokClustersStartedTogether(t *testing.T) {
	root, err := FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	o, err := OptionsFromEnv(root)
	if err != nil {
		t.Fatal(err)
	}
	o.WorkDir, o.Nodes, o.Log = t.TempDir(), 0, io.Discard
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	var wg sync.WaitGroup
	servers := make([]string, 2)
	for i := range servers {
		o := o
		o.Name = fmt.Sprintf("k8s-demo-together-%d", i)
		k := newKwok(o)
		t.Cleanup(func() {
			if err := k.Down(context.Background()); err != nil {
				t.Errorf("deleting %s: %v", o.Name, err)
			}
		})
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := k.Up(ctx); err != nil {
				t.Errorf("%s: %v", o.Name, err)
				return
			}
			cfg, err := clientcmd.BuildConfigFromFlags("", k.Kubeconfig())
			if err != nil {
				t.Errorf("%s: %v", o.Name, err)
				return
			}
			servers[i] = cfg.Host
		}()
	}
	wg.Wait()
	if servers[0] != "" && servers[0] == servers[1] {
		t.Errorf("both clusters' API servers are at %s", servers[0])
	}
}
