package docs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"example.com/k8s-demo/e2e/harness"
)

func TestMain(m *testing.M) { harness.Main(m) }

// readingOrder is docs/README.md's order (its chapters, then the pages to
// look things up in); any other file runs after these.
var readingOrder = []string{
	"README.md", "concepts.md", "crd-demo.md", "kubebuilder-demo.md",
	"operator-demo.md", "comparison.md", "bench.md", "robustness.md",
	"changes.md", "harness.md", "workshop.md",
}

// chapters returns the docs' markdown files in reading order.
func chapters(t *testing.T, root string) []string {
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no docs/*.md under %s (%v)", root, err)
	}
	rank := func(f string) int {
		if i := slices.Index(readingOrder, filepath.Base(f)); i >= 0 {
			return i
		}
		return len(readingOrder)
	}
	sort.SliceStable(files, func(i, j int) bool {
		if ri, rj := rank(files[i]), rank(files[j]); ri != rj {
			return ri < rj
		}
		return files[i] < files[j]
	})
	return files
}

// TestDocs runs every runnable block of the docs against the cluster, one
// subtest per file, blocks in order, as a reader would type them: in the
// repository root (or the block's dir=), with the pinned tools first on
// PATH, KUBECONFIG set, and NS naming a fresh namespace that is also the
// kubeconfig's default. Background blocks run until a runnable-stop
// directive or the end of the file. `go test ./docs -run TestDocs/crd-demo`
// runs one chapter.
func TestDocs(t *testing.T) {
	root := harness.Current(t).Root
	for _, file := range chapters(t, root) {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".md"), func(t *testing.T) {
			d, err := ReadDoc(file)
			if err != nil {
				t.Fatal(err)
			}
			runChapter(t, root, d)
		})
	}
}

// step is a runnable block or a runnable-stop directive, in file order.
type step struct {
	line  int
	block *Block
	opts  Options
	stop  string
}

func runChapter(t *testing.T, root string, d *Doc) {
	var steps []step
	for i := range d.Blocks {
		b := &d.Blocks[i]
		ok, opts, err := b.Runnable()
		if err != nil {
			t.Fatalf("%s: %v", d.Path, err)
		}
		if ok {
			steps = append(steps, step{line: b.Fence, block: b, opts: opts})
		}
	}
	for _, s := range d.Stops {
		steps = append(steps, step{line: s.Line, stop: s.Name})
	}
	if len(steps) == 0 {
		t.Skip("no runnable blocks")
	}
	sort.Slice(steps, func(i, j int) bool { return steps[i].line < steps[j].line })

	h := harness.New(t)
	env := []string{
		"PATH=" + h.Env.BinDir + string(os.PathListSeparator) + os.Getenv("PATH"),
		"NS=" + h.Namespace,
	}
	bg := map[string]*harness.Process{}
	rel, _ := filepath.Rel(root, d.Path)
	for _, s := range steps {
		where := fmt.Sprintf("%s:%d", rel, s.line+1)
		if s.stop != "" {
			p, ok := bg[s.stop]
			if !ok {
				t.Fatalf("%s: runnable-stop %s: no background block of that name runs", where, s.stop)
			}
			_ = p.Stop()
			delete(bg, s.stop)
			t.Logf("%s: stopped %s", where, s.stop)
			continue
		}
		if s.block.Lang() != "sh" && s.block.Lang() != "bash" {
			t.Fatalf("%s: runnable blocks must be sh or bash, not %q", where, s.block.Lang())
		}
		script := "set -euo pipefail\n" + strings.Join(s.block.Content, "\n") + "\n"
		dir := filepath.Join(root, s.opts.Dir)
		if s.opts.Background != "" {
			p := h.Start(harness.ProcessSpec{Name: s.opts.Background, Path: "bash", Args: []string{"-c", script}, Dir: dir, Env: env})
			bg[s.opts.Background] = p
			t.Logf("%s: started %s in the background (log: %s):\n%s", where, s.opts.Background, p.LogPath, strings.Join(s.block.Content, "\n"))
			if s.opts.Ready != nil {
				h.WaitForLog(p, s.opts.Ready, s.opts.Timeout)
			}
			continue
		}
		out, err := runScript(h, dir, script, env, s.opts.Timeout)
		t.Logf("%s (in %s):\n%s\n--- output:\n%s", where, relOr(root, dir), strings.Join(s.block.Content, "\n"), out)
		switch {
		case s.opts.Fails && err == nil:
			t.Fatalf("%s: the block should have failed, and succeeded", where)
		case !s.opts.Fails && err != nil:
			t.Fatalf("%s: the block failed: %v\n%s", where, err, out)
		}
		if s.opts.Expect != nil && !s.opts.Expect.MatchString(out) {
			t.Fatalf("%s: the output does not match %q:\n%s", where, s.opts.Expect, out)
		}
	}
}

func runScript(h *harness.H, dir, script string, env []string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(h.Ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), append([]string{"KUBECONFIG=" + h.Kubeconfig}, env...)...)
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("timed out after %s: %w", timeout, err)
	}
	return out.String(), err
}

func relOr(root, dir string) string {
	if r, err := filepath.Rel(root, dir); err == nil {
		return r
	}
	return dir
}
