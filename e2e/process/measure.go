package process

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// PeakRSS is a process's peak resident set size so far (VmHWM), in bytes.
// It reads /proc: elsewhere it fails.
func PeakRSS(pid int) (uint64, error) { return statusBytes(pid, "VmHWM") }

// RSSAnon is a process's anonymous resident memory now (RssAnon), in bytes:
// its heap, stacks and other private memory, without the pages of its own
// binary that RSS also counts, which the kernel can drop and read again.
func RSSAnon(pid int) (uint64, error) { return statusBytes(pid, "RssAnon") }

// statusBytes reads a "NAME:  N kB" line of /proc/PID/status.
func statusBytes(pid int, name string) (uint64, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", name, pid)
}

// PeakAnon samples a process's RssAnon every interval until stop is
// called, which returns the highest value seen (0 if none could be read).
// The kernel keeps no high-water mark of anonymous memory, as it does of
// RSS (VmHWM): a peak shorter than interval can be missed.
func PeakAnon(pid int, interval time.Duration) (stop func() uint64) {
	done := make(chan struct{})
	result := make(chan uint64, 1)
	go func() {
		var peak uint64
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			if v, err := RSSAnon(pid); err == nil && v > peak {
				peak = v
			}
			select {
			case <-done:
				result <- peak
				return
			case <-tick.C:
			}
		}
	}()
	var once sync.Once
	var peak uint64
	return func() uint64 {
		once.Do(func() { close(done); peak = <-result })
		return peak
	}
}

// FreePort returns a loopback TCP port that nothing listens on now.
func FreePort() (int, error) {
	ports, err := FreePorts(1)
	if err != nil {
		return 0, err
	}
	return ports[0], nil
}

// The window FreePorts picks from lies below the kernels' ephemeral ranges
// (Linux's starts at 32768, macOS's at 49152), where the kernel takes the
// source port of every outgoing connection. A port from the ephemeral range
// can be free when it is picked and taken a moment later by one of the
// thousands of connections a test run makes (kubectl, envtest, the API
// servers' clients), before the program it was picked for binds it. It also
// stays below Kubernetes' NodePort range (30000-32767).
const (
	freePortFirst = 20000
	freePortLast  = 29999
)

var (
	handedOutMu sync.Mutex
	// handedOut holds every port this process has returned, so that two
	// callers here never get the same one, even after the first has closed
	// it for the program that will listen there.
	handedOut = map[int]bool{}
)

// FreePorts returns n loopback TCP ports that nothing listens on now, all
// different and none returned before in this process. Each is chosen at
// random from a window the kernel never hands out as a source port, checked
// by listening on it, and held until the last is chosen. Callers in other
// processes at the same moment get the same port only by rare chance.
func FreePorts(n int) ([]int, error) {
	handedOutMu.Lock()
	defer handedOutMu.Unlock()
	ports := make([]int, 0, n)
	for tries := 0; len(ports) < n; tries++ {
		if tries == 1000 {
			return nil, fmt.Errorf("found %d free loopback ports of the %d wanted in %d tries between %d and %d",
				len(ports), n, tries, freePortFirst, freePortLast)
		}
		port := freePortFirst + rand.IntN(freePortLast-freePortFirst+1)
		if handedOut[port] {
			continue
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if errors.Is(err, syscall.EADDRINUSE) {
			continue
		}
		if err != nil {
			return nil, err
		}
		defer l.Close()
		handedOut[port] = true
		ports = append(ports, port)
	}
	return ports, nil
}
