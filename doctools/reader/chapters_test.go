package reader

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"example.com/k8s-demo/doctools/docs"
	"example.com/k8s-demo/e2e/cluster"
)

// readerChapters are the pages a reader types commands from, in reading
// order: docs/README.md's "Before you start", then the chapters. The other
// pages hold no steps to follow (comparison.md's one block is for
// maintainers), but for the workshop, which starts from a fresh clone of its
// own (its pre-work) and so runs only alone.
var readerChapters = []string{
	"README.md", "concepts.md", "crd-demo.md", "kubebuilder-demo.md",
	"operator-demo.md", "webhooks.md", "versions.md",
}

// TestEveryTypedBlockIsFollowed: a page outside readerChapters and the
// workshop has no block a reader would type, so none goes untested.
func TestEveryTypedBlockIsFollowed(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoRoot(t), "docs", "*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no docs/*.md: %v", err)
	}
	for _, f := range files {
		base := filepath.Base(f)
		if slices.Contains(readerChapters, base) || base == "workshop.md" {
			continue
		}
		d, err := docs.ReadDoc(f)
		if err != nil {
			t.Fatal(err)
		}
		steps, _, err := ReaderSteps(d)
		if err != nil {
			t.Errorf("%s: %v", base, err)
			continue
		}
		for _, s := range steps {
			if s.Commands != nil || s.File != "" {
				t.Errorf("docs/%s:%d: a block a reader would type or save, on a page TestReader does not follow: add the page to readerChapters, or say in its lead-in that it is optional or not run here", base, s.Line)
			}
		}
	}
}

func repoRoot(t *testing.T) string {
	wd, _ := os.Getwd()
	root, err := cluster.FindRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	return root
}
