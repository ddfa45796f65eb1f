package harness

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"
)

var (
	buildMu sync.Mutex
	built   = map[string]string{}
)

// Build compiles a main package of one of the repository's modules, as a
// reader would with `go build` in that module (GOWORK=off: each module stands
// alone), once per test binary. dir is relative to the repository root.
func (h *H) Build(dir, pkg, name string) string {
	h.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	key := dir + "|" + pkg
	if path, ok := built[key]; ok {
		return path
	}
	out := filepath.Join(h.Env.Root, ".cache", "e2e-bin", filepath.Base(dir), name)
	start := time.Now()
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = filepath.Join(h.Env.Root, dir)
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		h.Fatalf("go build %s in %s: %v\n%s", pkg, dir, err, b)
	}
	h.Logf("built %s/%s in %s", dir, pkg, time.Since(start).Round(time.Millisecond))
	built[key] = out
	return out
}

// FreePort returns a loopback TCP port that nothing listens on now.
func (h *H) FreePort() int {
	h.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		h.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Path is a path inside the repository.
func (h *H) Path(elem ...string) string {
	return filepath.Join(append([]string{h.Env.Root}, elem...)...)
}
