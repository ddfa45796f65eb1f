package process

import (
	"context"
	"fmt"
	"net"
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

func start(t *testing.T, name, script string) *Process {
	t.Helper()
	p, err := Start(Spec{Name: name, Path: "sh", Args: []string{"-c", script}, LogFile: filepath.Join(t.TempDir(), name+".log")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Stop() })
	return p
}

func TestKillAndRestart(t *testing.T) {
	p := start(t, "sleeper", "echo started; exec sleep 300")
	started := regexp.MustCompile("started")
	if _, err := p.WaitForLog(context.Background(), started, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	if p.Running() || p.ExitErr() == nil || !strings.Contains(p.ExitErr().Error(), "killed") {
		t.Fatalf("after Kill: running=%v, exit=%v", p.Running(), p.ExitErr())
	}
	if err := p.Restart(); err != nil {
		t.Fatal(err)
	}
	if !p.Running() || p.ExitErr() != nil {
		t.Fatalf("after Restart: running=%v, exit=%v", p.Running(), p.ExitErr())
	}
	if _, err := p.WaitForLog(context.Background(), started, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	// The log keeps both runs; RunLog only the latest.
	if n := strings.Count(p.Log(), "\nstarted\n"); n != 2 {
		t.Errorf("the log holds %d runs' output, want 2:\n%s", n, p.Log())
	}
	if got := p.RunLog(); got != "started\n" {
		t.Errorf("RunLog = %q, want the latest run's output alone", got)
	}
}

func TestWaitForLog(t *testing.T) {
	ctx := context.Background()
	line := regexp.MustCompile("Starting workers")

	// It times from the start of the run, not of the wait.
	p := start(t, "slow-starter", "echo building; sleep 0.5; printf 'Starting %s\\n' workers; exec sleep 300")
	time.Sleep(100 * time.Millisecond)
	d, err := p.WaitForLog(ctx, line, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if d < 500*time.Millisecond || d > 10*time.Second {
		t.Errorf("the line came after %s by WaitForLog, want the half second it took", d)
	}

	// A program that exits first ends the wait at once.
	q := start(t, "crasher", "echo 'listen tcp :8081: bind: address already in use'; exit 1")
	began := time.Now()
	_, err = q.WaitForLog(ctx, line, time.Minute)
	if err == nil || !strings.Contains(err.Error(), `crasher exited (exit status 1) before it logged "Starting workers"`) {
		t.Errorf("want an error naming the program and how it exited, got %v", err)
	}
	if d := time.Since(began); d > 10*time.Second {
		t.Errorf("the wait went on for %s after the program had exited", d)
	}

	// A line written just before the program exits still counts.
	r := start(t, "quick", "printf 'Starting %s\\n' workers")
	if _, err := r.WaitForLog(ctx, line, 10*time.Second); err != nil {
		t.Error(err)
	}

	s := start(t, "silent", "exec sleep 300")
	if _, err := s.WaitForLog(ctx, line, 200*time.Millisecond); err == nil || !strings.Contains(err.Error(), "timed out after 200ms waiting for silent") {
		t.Errorf("want a timeout, got %v", err)
	}
}

// Stop reaches what the process started (its process group): `make run`
// starts go, and go the manager. It returns once that has exited too, even
// when it takes longer than its parent to.
func TestStopReachesChildren(t *testing.T) {
	p := start(t, "parent", `(trap "sleep 1; echo child got TERM; exit" TERM; echo child runs; while :; do sleep 0.1; done) & wait`)
	if _, err := p.WaitForLog(context.Background(), regexp.MustCompile("child runs"), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	pid := p.Pid()
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Log(), "child got TERM") {
		t.Errorf("Stop returned before the child had ended on its SIGTERM:\n%s", p.Log())
	}
	if groupAlive(pid) {
		t.Errorf("Stop returned while process group %d still has a live process", pid)
	}
}

// A `go run` stopped (SIGTERM) or killed (SIGKILL) leaves its work
// directory, with the binary it built, in TMPDIR unless Process gives each
// run a GOTMPDIR of its own and removes it.
func TestGoRunLeavesNothingInTMPDIR(t *testing.T) {
	mod := t.TempDir()
	for name, text := range map[string]string{
		"go.mod":  "module example.com/sleeper\n\ngo 1.21\n",
		"main.go": "package main\n\nimport (\n\t\"fmt\"\n\t\"time\"\n)\n\nfunc main() {\n\tfmt.Println(\"running\")\n\ttime.Sleep(time.Hour)\n}\n",
	} {
		if err := os.WriteFile(filepath.Join(mod, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	p, err := Start(Spec{Name: "go-run", Path: "go", Args: []string{"run", "."}, Dir: mod, Env: []string{"GOWORK=off"},
		LogFile: filepath.Join(t.TempDir(), "go-run.log")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Stop() })
	running := regexp.MustCompile("running")
	for _, end := range []struct {
		name string
		f    func() error
	}{{"Stop", p.Stop}, {"Kill", p.Kill}} {
		if _, err := p.WaitForLog(context.Background(), running, 2*time.Minute); err != nil {
			t.Fatal(err)
		}
		if err := end.f(); err != nil {
			t.Fatal(err)
		}
		left, err := os.ReadDir(tmp)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range left {
			names = append(names, e.Name())
		}
		if len(names) != 0 {
			t.Errorf("after %s, TMPDIR holds %v; want it empty", end.name, names)
		}
		if end.name == "Stop" {
			if err := p.Restart(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestPeakRSS(t *testing.T) {
	rss, err := PeakRSS(os.Getpid())
	if runtime.GOOS != "linux" {
		// There is no /proc to read it from.
		if err == nil {
			t.Errorf("PeakRSS on %s: %d bytes, want an error", runtime.GOOS, rss)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	// A Go test binary holds a few MB at least, and far less than 10 GB.
	if rss < 1<<20 || rss > 10<<30 {
		t.Errorf("PeakRSS = %d bytes", rss)
	}
}

// TestBuildOnceAndListening builds a small program twice (the second time
// from the cache) and checks that Listening sees the port it serves on.
func TestBuildOnceAndListening(t *testing.T) {
	mod := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(mod, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/listener\n\ngo 1.21\n")
	write("main.go", `package main

import (
	"fmt"
	"net"
	"time"
)

func main() {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	fmt.Println("listening on", l.Addr())
	time.Sleep(time.Hour)
}
`)
	var builds Builds
	var logged []string
	logf := func(format string, args ...any) { logged = append(logged, format) }
	out := filepath.Join(t.TempDir(), "listener")
	path, err := builds.Build(mod, ".", out, logf)
	if err != nil {
		t.Fatal(err)
	}
	again, err := builds.Build(mod, ".", filepath.Join(t.TempDir(), "elsewhere"), logf)
	if err != nil {
		t.Fatal(err)
	}
	if path != out || again != out || len(logged) != 1 {
		t.Errorf("built to %s, then %s, logging %d builds; want %s twice and one build", path, again, len(logged), out)
	}

	p, err := Start(Spec{Name: "listener", Path: path, LogFile: filepath.Join(t.TempDir(), "listener.log")})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Stop() }()
	if _, err := p.WaitForLog(context.Background(), regexp.MustCompile(`listening on \S+`), 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "linux" {
		t.Skip("Listening reads /proc, which only Linux has")
	}
	addr := strings.TrimSpace(strings.TrimPrefix(p.RunLog(), "listening on "))
	found, err := p.Listening()
	if err != nil {
		t.Fatal(err)
	}
	if got := found[p.Pid()]; len(got) != 1 || got[0] != addr {
		t.Errorf("Listening = %v, want %s for pid %d", found, addr, p.Pid())
	}
}

func TestFreePort(t *testing.T) {
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatalf("port %d, said to be free: %v", port, err)
	}
	l.Close()
}

func TestFreePortsAreDifferent(t *testing.T) {
	ports, err := FreePorts(6)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, port := range ports {
		if seen[port] {
			t.Fatalf("FreePorts(6) = %v: %d twice", ports, port)
		}
		seen[port] = true
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			t.Fatalf("port %d, said to be free: %v", port, err)
		}
		defer l.Close()
	}
}

// The ports must not come from the range the kernel takes outgoing
// connections' source ports from: one of those could take the port between
// the pick and the listen of the program it was picked for (it happened to
// crd-demo's conversion webhook during make test at 8fda665).
func TestFreePortsAreOutsideTheEphemeralRange(t *testing.T) {
	first, last := ephemeralRange(t)
	seen := map[int]bool{}
	for range 40 {
		ports, err := FreePorts(5)
		if err != nil {
			t.Fatal(err)
		}
		for _, port := range ports {
			if port >= first && port <= last {
				t.Fatalf("FreePorts gave %d, in the kernel's ephemeral range %d-%d", port, first, last)
			}
			if seen[port] {
				t.Fatalf("FreePorts gave %d twice in one process", port)
			}
			seen[port] = true
		}
	}
}

// ephemeralRange reads the kernel's range of source ports for outgoing
// connections.
func ephemeralRange(t *testing.T) (first, last int) {
	var out string
	switch runtime.GOOS {
	case "linux":
		b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
		if err != nil {
			t.Fatal(err)
		}
		out = string(b)
	case "darwin":
		b, err := exec.Command("sysctl", "-n", "net.inet.ip.portrange.first", "net.inet.ip.portrange.last").Output()
		if err != nil {
			t.Fatal(err)
		}
		out = string(b)
	default:
		t.Fatalf("the harness runs on Linux and macOS, not %s", runtime.GOOS)
	}
	if _, err := fmt.Sscan(out, &first, &last); err != nil {
		t.Fatalf("ephemeral port range %q: want two numbers: %v", out, err)
	}
	return first, last
}
