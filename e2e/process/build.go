package process

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"
)

// Builds compiles main packages of the repository's modules, each once: the
// suites and the bench start the same controller many times. The zero value
// is ready to use.
type Builds struct {
	mu    sync.Mutex
	built map[string]string
}

// Build compiles the main package pkg of the module in moduleDir into out,
// as a reader would with `go build` in that module (GOWORK=off: each module
// stands alone), unless it has already, and returns where the binary is.
// logf, if not nil, is told what was built and how long it took.
func (b *Builds) Build(moduleDir, pkg, out string, logf func(format string, args ...any)) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	key := moduleDir + "|" + pkg
	if path, ok := b.built[key]; ok {
		return path, nil
	}
	start := time.Now()
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = moduleDir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if o, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s in %s: %v\n%s", pkg, moduleDir, err, o)
	}
	if logf != nil {
		logf("built %s %s in %s", filepath.Base(moduleDir), pkg, time.Since(start).Round(time.Millisecond))
	}
	if b.built == nil {
		b.built = map[string]string{}
	}
	b.built[key] = out
	return out, nil
}
