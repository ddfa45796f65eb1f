package harness

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"example.com/k8s-demo/e2e/cluster"
)

// ProcessSpec describes a program to run beside the cluster, typically a
// controller run out of the cluster, as `make run` does.
type ProcessSpec struct {
	// Name labels the process in logs and dumps.
	Name string
	// Path and Args are the command; Dir its working directory.
	Path string
	Args []string
	Dir  string
	// Env is added to the test's environment (KUBECONFIG is set for you).
	Env []string
}

// Process is a running ProcessSpec whose output goes to a log file.
type Process struct {
	Spec    ProcessSpec
	LogPath string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	err  error
	// runStart is where the latest run's output starts in LogPath.
	runStart int64
}

// start launches the process, appending its output to LogPath.
func (p *Process) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.running() {
		return fmt.Errorf("%s is already running", p.Spec.Name)
	}
	log, err := os.OpenFile(p.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "=== %s: %s %s\n", time.Now().Format(time.RFC3339), p.Spec.Path, strings.Join(p.Spec.Args, " "))
	if st, err := log.Stat(); err == nil {
		p.runStart = st.Size()
	}
	cmd := exec.Command(p.Spec.Path, p.Spec.Args...)
	cmd.Dir = p.Spec.Dir
	cmd.Env = append(os.Environ(), p.Spec.Env...)
	cmd.Stdout, cmd.Stderr = log, log
	// Its own process group, so that a stop reaches what it started too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("starting %s (%s): %w", p.Spec.Name, p.Spec.Path, err)
	}
	done := make(chan struct{})
	go func() {
		err := cmd.Wait()
		log.Close()
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(done)
	}()
	p.cmd, p.done = cmd, done
	return nil
}

func (p *Process) running() bool {
	if p.done == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Running reports whether the process has not exited.
func (p *Process) Running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.running()
}

// Stop asks the process to end (SIGTERM, as a Deployment's pod gets) and
// kills it if it has not within 10 seconds.
func (p *Process) Stop() error { return p.signal(syscall.SIGTERM, 10*time.Second) }

// Kill ends the process at once (SIGKILL), as a crash or an OOM kill would:
// no clean-up code runs.
func (p *Process) Kill() error { return p.signal(syscall.SIGKILL, 10*time.Second) }

func (p *Process) signal(sig syscall.Signal, grace time.Duration) error {
	p.mu.Lock()
	if !p.running() {
		p.mu.Unlock()
		return nil
	}
	pid, done := p.cmd.Process.Pid, p.done
	p.mu.Unlock()
	_ = syscall.Kill(-pid, sig)
	select {
	case <-done:
	case <-time.After(grace):
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		<-done
	}
	return nil
}

// Restart stops the process and starts it again with the same spec.
func (p *Process) Restart() error {
	if err := p.Stop(); err != nil {
		return err
	}
	return p.start()
}

// Log returns what the process has written so far.
func (p *Process) Log() string {
	b, err := os.ReadFile(p.LogPath)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", p.LogPath, err)
	}
	return string(b)
}

// RunLog is what the latest run has written: Log without the earlier runs
// and without the line that names the command.
func (p *Process) RunLog() string {
	p.mu.Lock()
	start := p.runStart
	p.mu.Unlock()
	log := p.Log()
	if start > int64(len(log)) {
		return ""
	}
	return log[start:]
}

// Tail returns the last n lines of the log.
func (p *Process) Tail(n int) string {
	lines := bytes.Split(bytes.TrimRight([]byte(p.Log()), "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// ExitErr is how the process ended: nil while it runs or after a clean exit.
func (p *Process) ExitErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Listening returns the TCP addresses that the process, and every process
// it started (its process group: `make run` starts go, go the manager),
// listen on, by pid. It reads /proc: Linux only.
func (p *Process) Listening() (map[int][]string, error) {
	p.mu.Lock()
	pgid := p.cmd.Process.Pid
	p.mu.Unlock()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		return nil, err
	}
	found := map[int][]string{}
	for _, stat := range stats {
		data, err := os.ReadFile(stat)
		if err != nil {
			continue // gone since the glob
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces, so count
		// from its closing parenthesis.
		fields := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
		if len(fields) < 3 || fields[2] != strconv.Itoa(pgid) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(stat)))
		addrs, err := cluster.Listening(pid)
		if err != nil {
			continue // exited while being read
		}
		if len(addrs) > 0 {
			found[pid] = addrs
		}
	}
	return found, nil
}

// RequireLoopbackOnly fails the test if p, or a process it started, listens
// on every interface (0.0.0.0 or [::]): a local run serves only this machine.
func (h *H) RequireLoopbackOnly(p *Process) {
	h.Helper()
	if runtime.GOOS != "linux" {
		h.Logf("%s's listeners not checked: they are read from /proc, which only Linux has", p.Spec.Name)
		return
	}
	found, err := p.Listening()
	if err != nil {
		h.Fatal(err)
	}
	if len(found) == 0 {
		h.Fatalf("%s: want its processes to listen on the loopback interface, found no listener at all", p.Spec.Name)
	}
	for pid, addrs := range found {
		for _, a := range addrs {
			if cluster.Wildcard(a) {
				h.Errorf("%s: pid %d listens on %s, every interface: want the loopback interface only (its listeners: %v)", p.Spec.Name, pid, a, addrs)
			}
		}
	}
}
