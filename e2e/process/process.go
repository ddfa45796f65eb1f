// Package process runs the programs the e2e suites, the bench and compare
// start beside the cluster: it builds them from their modules, starts them
// with their output in a log file, waits for a line of that log, stops them,
// and reads their peak memory and the ports they listen on. It does not
// depend on testing: harness.H wraps it for tests, and the commands use it
// as it is.
package process

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Spec describes a program to run beside the cluster, typically a
// controller run out of the cluster, as `make run` does.
type Spec struct {
	// Name labels the process in logs and messages.
	Name string
	// Path and Args are the command; Dir its working directory.
	Path string
	Args []string
	Dir  string
	// Env is added to this program's environment.
	Env []string
	// LogFile receives its output. Each run appends to it, after a line
	// that names the command, so that a restart keeps the runs before it.
	LogFile string
}

// Process is a running Spec.
type Process struct {
	Spec Spec

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	err  error
	// runStart is where the latest run's output starts in LogFile, and
	// started when that run was started.
	runStart int64
	started  time.Time
	// gotmp is the latest run's GOTMPDIR.
	gotmp string
}

// Start starts the program.
func Start(spec Spec) (*Process, error) {
	p := &Process{Spec: spec}
	return p, p.start()
}

func (p *Process) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.running() {
		return fmt.Errorf("%s is already running", p.Spec.Name)
	}
	log, err := os.OpenFile(p.Spec.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "=== %s: %s %s\n", time.Now().Format(time.RFC3339), p.Spec.Path, strings.Join(p.Spec.Args, " "))
	if st, err := log.Stat(); err == nil {
		p.runStart = st.Size()
	}
	// go run builds its binary in a work directory under GOTMPDIR (TMPDIR by
	// default) and removes it when it exits on its own or on Ctrl-C, not on
	// the SIGTERM or SIGKILL that Stop and Kill send: `make run`'s would be
	// left behind, about 33 MB a run. So each run has a GOTMPDIR of its own,
	// removed once it has ended.
	gotmp, err := os.MkdirTemp("", "k8s-demo-gotmp-")
	if err != nil {
		log.Close()
		return err
	}
	cmd := exec.Command(p.Spec.Path, p.Spec.Args...)
	cmd.Dir = p.Spec.Dir
	cmd.Env = append(append(os.Environ(), "GOTMPDIR="+gotmp), p.Spec.Env...)
	cmd.Stdout, cmd.Stderr = log, log
	// Its own process group, so that a stop reaches what it started too
	// (`make run` starts go, go the manager).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p.started = time.Now()
	if err := cmd.Start(); err != nil {
		log.Close()
		os.RemoveAll(gotmp)
		return fmt.Errorf("starting %s (%s): %w", p.Spec.Name, p.Spec.Path, err)
	}
	done := make(chan struct{})
	go func() {
		err := cmd.Wait()
		log.Close()
		// What it started may still run (signal waits for them): a program
		// go run started runs on with its binary removed, as Linux and macOS
		// allow.
		os.RemoveAll(gotmp)
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(done)
	}()
	p.cmd, p.done, p.err, p.gotmp = cmd, done, nil, gotmp
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

// Pid is the latest run's process ID, which is also its process group's.
func (p *Process) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd.Process.Pid
}

// Stop asks the process and what it started to end (SIGTERM, as a
// Deployment's pod gets), kills them if they have not within 10 seconds, and
// returns once they have all exited: the ports they listened on are free
// then.
func (p *Process) Stop() error { return p.signal(syscall.SIGTERM, 10*time.Second) }

// Kill ends the process and what it started at once (SIGKILL), as a crash or
// an OOM kill would: no clean-up code runs.
func (p *Process) Kill() error { return p.signal(syscall.SIGKILL, 10*time.Second) }

func (p *Process) signal(sig syscall.Signal, grace time.Duration) error {
	p.mu.Lock()
	if !p.running() {
		p.mu.Unlock()
		return nil
	}
	pid, done, gotmp := p.cmd.Process.Pid, p.done, p.gotmp
	p.mu.Unlock()
	_ = syscall.Kill(-pid, sig)
	deadline := time.NewTimer(grace)
	defer deadline.Stop()
	select {
	case <-done:
	case <-deadline.C:
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		<-done
	}
	// What it started can outlive it: make exits at once on SIGTERM, the
	// manager that `make run` started through go run shuts down in its own
	// time. Wait for the whole group, as long as the grace allows.
	for groupAlive(pid) {
		select {
		case <-deadline.C:
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		case <-time.After(20 * time.Millisecond):
		}
	}
	// Again, now that nothing of the group can write there.
	return os.RemoveAll(gotmp)
}

// Restart stops the process and starts it again with the same spec.
func (p *Process) Restart() error {
	if err := p.Stop(); err != nil {
		return err
	}
	return p.start()
}

// ExitErr is how the process ended: nil while it runs or after a clean exit.
func (p *Process) ExitErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Log returns what the process has written so far.
func (p *Process) Log() string {
	b, err := os.ReadFile(p.Spec.LogFile)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", p.Spec.LogFile, err)
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

// WaitForLog waits until what the latest run has written matches re, and
// returns how long after its start it saw that. It fails at once if the
// process exits first: waiting longer could not help. It looks every 5 ms,
// since compare times start-ups of a few hundred milliseconds with it, and
// reads the log only when it has grown.
func (p *Process) WaitForLog(ctx context.Context, re *regexp.Regexp, timeout time.Duration) (time.Duration, error) {
	p.mu.Lock()
	started := p.started
	p.mu.Unlock()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	size := int64(-1)
	for {
		// Whether it ran before the log is read: a line written just
		// before it exited still counts.
		exited := !p.Running()
		if st, err := os.Stat(p.Spec.LogFile); err == nil && st.Size() != size {
			size = st.Size()
			if re.MatchString(p.RunLog()) {
				return time.Since(started), nil
			}
		}
		if exited {
			return 0, fmt.Errorf("%s exited (%v) before it logged %q", p.Spec.Name, p.ExitErr(), re)
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			return 0, fmt.Errorf("timed out after %s waiting for %s to log %q", timeout, p.Spec.Name, re)
		case <-ctx.Done():
			return 0, fmt.Errorf("waiting for %s to log %q: %w", p.Spec.Name, re, ctx.Err())
		}
	}
}

// PeakRSS is the process's peak resident set size so far, in bytes.
func (p *Process) PeakRSS() (uint64, error) { return PeakRSS(p.Pid()) }

// Listening returns the TCP addresses that the process, and every process
// it started (its process group), listen on, by pid. It reads /proc: Linux
// only.
func (p *Process) Listening() (map[int][]string, error) {
	pids, err := group(p.Pid())
	if err != nil {
		return nil, err
	}
	found := map[int][]string{}
	for _, pid := range pids {
		addrs, err := Listening(pid)
		if err != nil {
			continue // exited while being read
		}
		if len(addrs) > 0 {
			found[pid] = addrs
		}
	}
	return found, nil
}

// group lists the live processes of process group pgid, read from /proc
// (Linux only): those that have exited but wait for their parent to read
// their status (zombies) are left out.
func group(pgid int) ([]int, error) {
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, stat := range stats {
		data, err := os.ReadFile(stat)
		if err != nil {
			continue // gone since the glob
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces, so count
		// from its closing parenthesis.
		fields := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
		if len(fields) < 3 || fields[2] != strconv.Itoa(pgid) || fields[0] == "Z" || fields[0] == "X" {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(stat)))
		pids = append(pids, pid)
	}
	return pids, nil
}

// groupAlive reports whether a process of group pgid has not exited. Where
// there is no /proc, a zombie counts as alive.
func groupAlive(pgid int) bool {
	if pids, err := group(pgid); err == nil && runtime.GOOS == "linux" {
		return len(pids) > 0
	}
	return syscall.Kill(-pgid, 0) == nil
}
