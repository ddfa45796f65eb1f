// Package ports checks, before the suites start, that the loopback ports
// their out-of-cluster programs listen on are free, and names the process
// holding one that is not. It imports nothing but the standard library, so
// that `go run ./cmd/preflight` is quick even on an empty build cache.
package ports

import (
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
)

// Fixed are the loopback ports the suites' programs listen on as the
// tutorial runs them, with what listens there: `make run` has no flag for its
// address, so a second manager on the same machine cannot start.
var Fixed = []struct {
	Port int
	What string
}{
	{8081, "the health probes of kubebuilder-demo's and operator-demo's `make run`"},
	{8090, "crd-demo's network backend (`make run` in crd-demo, docs/crd-demo.md)"},
	{9443, "operator-demo's webhook server (`make run`, docs/webhooks.md)"},
}

// Check fails, in one line a port, when a program the suites would start
// could not listen because something else already does: typically a
// `make run` from the tutorial left running in another terminal.
func Check() error {
	var msgs []string
	for _, p := range Fixed {
		l, err := net.Listen("tcp", ":"+strconv.Itoa(p.Port))
		if err == nil {
			l.Close()
			continue
		}
		msgs = append(msgs, fmt.Sprintf("port %d is in use by %s; the suites need it for %s. Stop that process (a `make run` left running in another terminal?) and run again.",
			p.Port, holder(p.Port), p.What))
	}
	if len(msgs) > 0 {
		return fmt.Errorf("%s", strings.Join(msgs, "\n"))
	}
	return nil
}

// holder names the process listening on a TCP port, with lsof (Linux and
// macOS) or ss (Linux); "another process" when neither can tell.
func holder(port int) string {
	if out, err := exec.Command("lsof", "-nP", "-iTCP:"+strconv.Itoa(port), "-sTCP:LISTEN", "-Fpc").Output(); err == nil {
		var pid, cmd string
		for _, line := range strings.Split(string(out), "\n") {
			switch {
			case strings.HasPrefix(line, "p") && pid == "":
				pid = line[1:]
			case strings.HasPrefix(line, "c") && cmd == "":
				cmd = line[1:]
			}
		}
		if pid != "" {
			return fmt.Sprintf("pid %s (%s)", pid, cmd)
		}
	}
	if out, err := exec.Command("ss", "-Hltnp", "sport = :"+strconv.Itoa(port)).Output(); err == nil {
		// users:(("manager",pid=4242,fd=7))
		s := string(out)
		if i := strings.Index(s, `users:(("`); i >= 0 {
			rest := s[i+len(`users:(("`):]
			if name, after, ok := strings.Cut(rest, `",pid=`); ok {
				pid, _, _ := strings.Cut(after, ",")
				return fmt.Sprintf("pid %s (%s)", pid, name)
			}
		}
	}
	return "another process"
}
