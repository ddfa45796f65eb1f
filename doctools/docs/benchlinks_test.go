package docs

import (
	"strings"
	"testing"
)

// TestChapterBenchLinks: the repository's chapters hold no link into
// bench.md; a chapter, or its twin, that links one is named, and
// comparison may.
func TestChapterBenchLinks(t *testing.T) {
	if problems, err := CheckChapterBenchLinks(repoRoot(t)); err != nil || len(problems) > 0 {
		t.Fatalf("the repository's chapters: %v %v", err, problems)
	}
	tmp := t.TempDir()
	writeFiles(t, tmp, map[string]string{
		"docs/crd-demo.md":    "Fast ([bench.md](bench.md#what-made-the-controllers-fast)).\n",
		"docs/zh/versions.md": "见[性能测试（英文）](../bench.md)。\n",
		"docs/comparison.md":  "See [the bench](bench.md).\n",
	})
	problems, err := CheckChapterBenchLinks(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 2 || !strings.HasPrefix(problems[0], "docs/crd-demo.md:1: a link into bench.md") ||
		!strings.HasPrefix(problems[1], "docs/zh/versions.md:1: a link into bench.md") {
		t.Errorf("got %q", problems)
	}
}
