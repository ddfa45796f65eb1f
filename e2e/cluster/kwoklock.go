package cluster

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// kwokctl chooses each component's port by counting down from 32766 and
// taking the first one nothing listens on yet. Two kwokctl processes that
// create clusters at the same time (two terminals, or CI's lanes side by
// side) therefore choose the same ports, and the components that bind second
// fail: a controller-manager that never makes the default ServiceAccount, an
// API server with the other cluster's certificate. startLock makes them take
// turns, across every process and clone on the machine, until the components
// are up and hold their ports. An outage (StopControlPlane) holds it too,
// until the processes it stopped listen again on the ports they freed.
var startLockPath = filepath.Join(os.TempDir(), "k8s-demo-kwok-start.lock")

// startLock waits until no other process is starting a kwok cluster and
// returns the function that lets the next one go. The lock is the kernel's
// (flock), so a process that dies holding it releases it.
func startLock(ctx context.Context, log io.Writer, start time.Time) (func(), error) {
	f, err := os.OpenFile(startLockPath, os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, fmt.Errorf("opening the kwok start lock %s: %w", startLockPath, err)
	}
	said := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if err != syscall.EWOULDBLOCK {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", startLockPath, err)
		}
		if !said {
			progress(log, start, "another kwok cluster on this machine is starting; waiting for it to hold its ports (%s)", startLockPath)
			said = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for another kwok cluster to start (%s): %w", startLockPath, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
	// Closing the file releases the lock.
	return func() { f.Close() }, nil
}

// components says which of the cluster's processes have exited, with the
// end of each one's log; when all run, the end of the controller-manager's,
// which makes the default ServiceAccount. It explains a cluster that came up
// but does not work.
func (k *kwok) components() string {
	var dead, names []string
	pids := k.pids()
	for name := range pids {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if syscall.Kill(pids[name], 0) != nil {
			dead = append(dead, name)
		}
	}
	var b strings.Builder
	show := dead
	if len(dead) == 0 {
		fmt.Fprintf(&b, "its %d processes (%s) are running", len(names), strings.Join(names, ", "))
		show = []string{"kube-controller-manager"}
	} else {
		fmt.Fprintf(&b, "these of its processes have exited: %s", strings.Join(dead, ", "))
	}
	for _, name := range show {
		p := filepath.Join(k.clusterDir(), "logs", name+".log")
		fmt.Fprintf(&b, "\nthe end of %s:\n%s", p, tail(p, 10))
	}
	return b.String()
}

// tail returns the last n lines of a file, indented.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "    (" + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "    " + strings.Join(lines, "\n    ")
}
