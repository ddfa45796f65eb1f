package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestHugeBodyIsRefusedInBoundedMemory runs the backend as its own process
// and sends it one 64 MiB request: it must answer 413 without reading the
// body into memory (before the limit, such a request made it allocate
// 931 MiB), and its peak RSS must stay under 50 MB.
func TestHugeBodyIsRefusedInBoundedMemory(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "network-backend")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "--listen", "127.0.0.1:0", "--state-file", filepath.Join(dir, "state.json"))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	// The log names the address it serves on: address="127.0.0.1:PORT".
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`address="([^"]+)"`)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	var url string
	select {
	case a := <-addr:
		url = "http://" + a + "/v2.0/networks"
	case <-time.After(30 * time.Second):
		t.Fatal("the backend did not log the address it serves on within 30s")
	}

	const size = 64 << 20
	body := io.MultiReader(
		strings.NewReader(`{"network": {"name": "ns/huge", "cidr": "10.0.0.0/8", "gateway_ip": "10.0.0.1", "description": "`),
		io.LimitReader(repeatReader('x'), size),
		strings.NewReader(`"}}`),
	)
	resp, err := http.Post(url, "application/json", body)
	if err != nil {
		t.Fatalf("POST of %d MiB: %v", size>>20, err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("POST of %d MiB: want 413, got %d %s", size>>20, resp.StatusCode, answer)
	}

	if runtime.GOOS != "linux" {
		t.Logf("peak RSS not checked: it is read from /proc, which only Linux has")
		return
	}
	peak, err := peakRSS(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("peak RSS after a %d MiB request: %.1f MB", size>>20, float64(peak)/1e6)
	if peak >= 50e6 {
		t.Fatalf("peak RSS %.1f MB after a %d MiB request: want under 50 MB", float64(peak)/1e6, size>>20)
	}
}

// repeatReader reads as an endless run of one byte.
type repeatReader byte

func (r repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

// peakRSS reads a process's high-water mark of resident memory, in bytes.
func peakRSS(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		if f := strings.Fields(string(line)); len(f) == 3 && f[0] == "VmHWM:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}
