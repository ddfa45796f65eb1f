package harness

import (
	"os"
	"path/filepath"
	"sync"

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

// made is the make targets that ran whole in this test binary, by module.
var made struct {
	sync.Mutex
	done map[[2]string]bool
}

// regenerates is, for the scaffolds' make targets the suites run, the
// prerequisites that only write files again: manifests and generate, which
// run controller-gen.
var regenerates = map[string][]string{
	"install": {"manifests"},
	"run":     {"manifests", "generate"},
}

// GeneratedChecked names the variable `make test` sets: its own make verify
// proves every generated file current, so no suite regenerates one.
const GeneratedChecked = "E2E_GENERATED_CHECKED"

// MakeArgs is the arguments of `make target` in the scaffold dir: the target
// alone the first time in this test binary, so that it runs whole, as a
// reader types it; after that, with make -o for each prerequisite the target
// regenerates. What they write is what the first run wrote, and make verify
// checks it is what is committed. Run each time, controller-gen took half of
// the e2e suites' CPU in make test (88 runs). Where GeneratedChecked is 1,
// the first time too is given the -o's.
func MakeArgs(dir, target string) []string {
	made.Lock()
	defer made.Unlock()
	key := [2]string{dir, target}
	if !made.done[key] && os.Getenv(GeneratedChecked) != "1" {
		if made.done == nil {
			made.done = map[[2]string]bool{}
		}
		made.done[key] = true
		return []string{target}
	}
	var args []string
	for _, r := range regenerates[target] {
		args = append(args, "-o", r)
	}
	return append(args, target)
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
