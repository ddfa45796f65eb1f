package docs

import (
	"path/filepath"
	"slices"
	"sort"
	"testing"
)

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
