package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUpdateTimes: the reading time comes from the page's prose alone (its
// code blocks and comments left out), the commands' time from the reader's
// timings, rounded up to the minute; a page the reader does not type says
// "–", and the note names the commit.
func TestUpdateTimes(t *testing.T) {
	root := t.TempDir()
	write := func(rel, text string) { writeFiles(t, root, map[string]string{rel: text}) }
	// 300 words of prose, and code that must not count.
	write("docs/a.md", "# A\n\n"+strings.Repeat("word ", 299)+"\n\n```go\n"+strings.Repeat("code ", 500)+"\n```\n<!-- a comment of many words here -->\n")
	write("docs/b.md", "# B\n\n"+strings.Repeat("word ", 151)+"\n")
	write("docs/README.md", "# T\n\n| | chapter | what | reading | commands |\n|---|---|---|---|---|\n"+
		"| 1 | [A](a.md) | the first | 9 min | 9 min |\n"+
		"| – | [B](b.md) | more | | |\n\n<!-- times:begin -->\nold\n<!-- times:end -->\n")
	got, words, err := UpdateTimes(root, "docs/README.md", ReaderTimes{Commit: "abc1234", Seconds: map[string]int{"a": 61}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| 1 | [A](a.md) | the first | 2 min | 2 min |", // 300 words: 2 minutes; 61 s: 2 minutes
		"| – | [B](b.md) | more | 2 min | – |",          // 152 words: 2 minutes; not typed
		"at commit abc1234",
		"the reading order is 300 words",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("want %q in:\n%s", want, got)
		}
	}
	if words != 300 {
		t.Errorf("the reading order's words: got %d, want 300 (the numbered rows only)", words)
	}
}

// TestWordLimits: a page over its limit of prose words fails, with its count
// and its limit; code blocks do not count.
func TestWordLimits(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	page := "# R\n\n" + strings.Repeat("word ", 99) + "\n\n```sh\n" + strings.Repeat("code ", 500) + "\n```\n"
	if err := os.WriteFile(filepath.Join(root, "docs/r.md"), []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := CheckWordLimits(root, map[string]int{"docs/r.md": 100}); err != nil {
		t.Errorf("100 prose words against a limit of 100: %v", err)
	}
	err := CheckWordLimits(root, map[string]int{"docs/r.md": 99})
	if err == nil || !strings.Contains(err.Error(), "docs/r.md: 100 prose words, over its limit of 99") {
		t.Errorf("100 prose words against a limit of 99: got %v", err)
	}
}

// readingOrderWords is the reading order's words as UpdateTimes counts them for
// the repository's docs/README.md.
func readingOrderWords(t *testing.T) (root string, words int) {
	t.Helper()
	root = repoRoot(t)
	rt, err := ReadReaderTimes(filepath.Join(root, "docs", "reader-times.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	_, words, err = UpdateTimes(root, "docs/README.md", rt)
	if err != nil {
		t.Fatal(err)
	}
	return root, words
}

// TestReadingOrderLimit: the repository's reading order is within its limit;
// one word over fails, naming the count and the limit.
func TestReadingOrderLimit(t *testing.T) {
	_, words := readingOrderWords(t)
	if err := CheckReadingOrder(words, ReadingOrderLimit); err != nil {
		t.Error(err)
	}
	err := CheckReadingOrder(words, words-1)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("the reading order is %d prose words, over its limit of %d", words, words-1)) {
		t.Errorf("one word over: got %v", err)
	}
}

// TestReadingOrderWords: the pages doctimes -words lists add up to the
// reading order UpdateTimes counts, and are the numbered chapters.
func TestReadingOrderWords(t *testing.T) {
	root, want := readingOrderWords(t)
	pages, err := ReadingOrderWords(root)
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for _, p := range pages {
		got += p.Words
	}
	if got != want {
		t.Errorf("the pages add up to %d words; UpdateTimes counts %d", got, want)
	}
	if len(pages) == 0 || pages[0].Page != "docs/concepts.md" {
		t.Errorf("the reading order starts with %v; want docs/concepts.md first", pages)
	}
}
