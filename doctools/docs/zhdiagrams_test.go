package docs

import (
	"strings"
	"testing"
)

// TestChineseDiagrams: the repository's Chinese pages embed only Chinese
// diagrams; a page that embeds an English one, or a Chinese one with no
// source, is named.
func TestChineseDiagrams(t *testing.T) {
	if problems, err := CheckChineseDiagrams(repoRoot(t)); err != nil || len(problems) > 0 {
		t.Fatalf("the repository's Chinese pages: %v %v", err, problems)
	}
	tmp := t.TempDir()
	writeFiles(t, tmp, map[string]string{
		"README.zh.md":           "# 标题\n",
		"docs/diagrams/a.d2":     "a -> b\n",
		"docs/diagrams/a.zh.d2":  "甲 -> 乙\n",
		"docs/zh/concepts.md":    "![图](../diagrams/a.zh.svg)\n\n![图](../diagrams/a.svg)\n\n![图](../diagrams/b.zh.svg)\n",
		"docs/diagrams/a.svg":    "<svg/>",
		"docs/diagrams/a.zh.svg": "<svg/>",
	})
	problems, err := CheckChineseDiagrams(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 2 || !strings.Contains(problems[0], "docs/zh/concepts.md:3: the English diagram docs/diagrams/a.svg") ||
		!strings.Contains(problems[1], "docs/zh/concepts.md:5: docs/diagrams/b.zh.svg has no source") {
		t.Errorf("got %q", problems)
	}
}
