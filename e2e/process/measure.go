package process

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
)

// PeakRSS is a process's peak resident set size so far (VmHWM), in bytes.
// It reads /proc: elsewhere it fails.
func PeakRSS(pid int) (uint64, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
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
