package harness

import (
	"path/filepath"

	"example.com/k8s-demo/e2e/process"
)

// builds is the test binary's: each program is built once, whichever test
// asks first.
var builds process.Builds

// Build compiles a main package of one of the repository's modules, as a
// reader would with `go build` in that module, once per test binary, into
// .cache/e2e-bin. dir is relative to the repository root.
func (h *H) Build(dir, pkg, name string) string {
	h.Helper()
	out := filepath.Join(h.Env.Root, ".cache", "e2e-bin", filepath.Base(dir), name)
	path, err := builds.Build(filepath.Join(h.Env.Root, dir), pkg, out, h.Logf)
	if err != nil {
		h.Fatal(err)
	}
	return path
}

// FreePort returns a loopback TCP port that nothing listens on now.
func (h *H) FreePort() int {
	h.Helper()
	port, err := process.FreePort()
	if err != nil {
		h.Fatal(err)
	}
	return port
}

// Path is a path inside the repository.
func (h *H) Path(elem ...string) string {
	return filepath.Join(append([]string{h.Env.Root}, elem...)...)
}
