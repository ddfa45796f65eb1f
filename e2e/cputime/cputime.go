// Package cputime runs a command and measures the CPU time that it and every
// process it started spent (user and system, children included), beside its
// wall time. The test tiers print both for each step: on a shared 2-core
// machine wall time swings threefold from day to day, CPU-seconds far less.
//
// A process that outlives its parent (a daemon: tmux's server, a kwok
// cluster's components) is counted too where the system allows it: on Linux
// the runner makes itself a child subreaper, so such orphans become its
// children and their CPU time reaches it when they end. Elsewhere, and for a
// process still running when the command ends (a cluster left up for a later
// step), it is not counted here.
package cputime

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

// Result is what Run measured.
type Result struct {
	Wall time.Duration
	CPU  time.Duration
	// ExitCode is the command's exit status, or 128 + the signal that ended it.
	ExitCode int
}

// grace is how long Run still reaps, after the command ended, the processes it
// left behind that are ending too (a cluster being torn down).
const grace = 2 * time.Second

// Run starts the command with this process's standard streams and
// environment, waits for it, and returns its times. It may be called once a
// process: the CPU time it reports is all this process's children's.
func Run(name string, args []string) (Result, error) {
	if err := becomeSubreaper(); err != nil {
		return Result{}, fmt.Errorf("becoming the orphans' parent: %w", err)
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return Result{}, err
	}
	start := time.Now()
	p, err := os.StartProcess(path, append([]string{name}, args...), &os.ProcAttr{
		Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
	})
	if err != nil {
		return Result{}, err
	}
	// A terminal's Ctrl-C reaches the command's process group directly; a
	// signal sent to this process alone (timeout, kill) is passed on.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	go func() {
		for s := range sigs {
			if s != syscall.SIGINT {
				_ = p.Signal(s)
			}
		}
	}()
	code, err := reap(p.Pid)
	if err != nil {
		return Result{}, err
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return Result{}, fmt.Errorf("getrusage: %w", err)
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return Result{Wall: time.Since(start), CPU: cpu, ExitCode: code}, nil
}

// reap waits for every child, the orphans given to this process included,
// until the command has ended; then for up to grace for the others.
func reap(pid int) (int, error) {
	code := -1
	deadline := time.Time{}
	for {
		var ws syscall.WaitStatus
		options := 0
		if code >= 0 {
			options = syscall.WNOHANG
		}
		got, err := syscall.Wait4(-1, &ws, options, nil)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.ECHILD):
			return code, nil
		case err != nil:
			return code, fmt.Errorf("wait4: %w", err)
		}
		if got == pid {
			code = exitCode(ws)
			deadline = time.Now().Add(grace)
			continue
		}
		if got == 0 { // WNOHANG: some still run
			if time.Now().After(deadline) {
				return code, nil
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func exitCode(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}
