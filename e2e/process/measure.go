package process

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
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

// FreePorts returns n loopback TCP ports that nothing listens on now, all
// different: each is held until the last is chosen. The kernel picks each
// from its ephemeral range, starting at a random place, so that callers at
// the same moment, in this process or another, get different ones but by
// rare chance.
func FreePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
