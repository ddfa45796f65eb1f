package harness

import (
	"path/filepath"
	"regexp"
	"runtime"
	"time"

	"example.com/k8s-demo/e2e/process"
)

// ProcessSpec and Process are the process package's, named here so that a
// suite needs only the harness.
type (
	ProcessSpec = process.Spec
	Process     = process.Process
)

// Start runs a program beside the cluster with the test's kubeconfig, its
// output in <Dir>/<name>.log; it is stopped when the test ends.
func (h *H) Start(spec ProcessSpec) *Process {
	h.Helper()
	spec.Env = append([]string{"KUBECONFIG=" + h.Kubeconfig}, spec.Env...)
	spec.LogFile = filepath.Join(h.Dir, sanitize(spec.Name)+".log")
	p, err := process.Start(spec)
	if err != nil {
		h.Fatal(err)
	}
	h.procs = append(h.procs, p)
	h.Cleanup(func() { _ = p.Stop() })
	return p
}

// WaitForLog waits until what p's latest run has written matches re,
// failing at once, with its log, if p exits first. It is for a program that
// builds or starts before it works (`make run` builds first: on a cold build
// cache that takes minutes, which the waits for what the controller does
// should not have to cover).
func (h *H) WaitForLog(p *Process, re *regexp.Regexp, timeout time.Duration) {
	h.Helper()
	start := time.Now()
	if _, err := p.WaitForLog(h.Ctx, re, timeout); err != nil {
		h.Fatalf("%v:\n%s", err, p.Tail(30))
	}
	h.Logf("waited %s for %s to log %q", time.Since(start).Round(time.Millisecond), p.Spec.Name, re)
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
			if process.Wildcard(a) {
				h.Errorf("%s: pid %d listens on %s, every interface: want the loopback interface only (its listeners: %v)", p.Spec.Name, pid, a, addrs)
			}
		}
	}
}
