package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// The Chinese pages are twins of English ones: docs/zh/X.md of docs/X.md,
// and README.zh.md of README.md. A twin translates the prose and keeps
// every fenced block, with the comment before its fence, as the English page
// has it, in the same order: the commands, output and excerpts are checked
// on the English page (excerpts, doctools/reader), and the twin must not fall
// behind them.

// LearnerPath is the pages every reader meets, each of which must have a
// Chinese twin (paths relative to the repository root).
var LearnerPath = []string{
	"README.md", "docs/README.md", "docs/concepts.md", "docs/crd-demo.md",
	"docs/kubebuilder-demo.md", "docs/operator-demo.md", "docs/webhooks.md",
	"docs/versions.md", "docs/comparison.md", "docs/articles.md",
	"docs/changes.md", "docs/workshop.md", "docs/glossary.md", "docs/mirrors.md",
}

// Twin is an English page and its Chinese translation, relative to the root.
type Twin struct{ English, Chinese string }

// ChineseOf returns the path of an English page's Chinese twin.
func ChineseOf(english string) string {
	if english == "README.md" {
		return "README.zh.md"
	}
	return filepath.ToSlash(filepath.Join(filepath.Dir(english), "zh", filepath.Base(english)))
}

// EnglishOf returns the English page of a Chinese one.
func EnglishOf(chinese string) string {
	if chinese == "README.zh.md" {
		return "README.md"
	}
	return filepath.ToSlash(filepath.Join(filepath.Dir(filepath.Dir(chinese)), filepath.Base(chinese)))
}

// Twins lists the Chinese pages under root (README.zh.md, docs/zh/*.md)
// with their English pages.
func Twins(root string) ([]Twin, error) {
	zh, err := filepath.Glob(filepath.Join(root, "docs", "zh", "*.md"))
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(root, "README.zh.md")); err == nil {
		zh = append(zh, filepath.Join(root, "README.zh.md"))
	}
	sort.Strings(zh)
	var twins []Twin
	for _, f := range zh {
		rel := filepath.ToSlash(mustRel(root, f))
		twins = append(twins, Twin{English: EnglishOf(rel), Chinese: rel})
	}
	return twins, nil
}

// generatedRegions are written by a command into the English page and its
// twin. A region perLanguage is written in each page's language (the
// command that writes it checks each); the twin of any other carries the
// English text, untranslated. Either way both pages have it.
var generatedRegions = []struct {
	begin, end  string
	perLanguage bool
}{
	{"<!-- compare:begin", "<!-- compare:end", true},
	{"<!-- bench:begin", "<!-- bench:end", false},
	{"<!-- bench-summary:begin", "<!-- bench-summary:end", true},
}

func region(d *Doc, begin, end string) ([]string, bool) {
	for i, l := range d.Lines {
		if !strings.HasPrefix(l, begin) {
			continue
		}
		for j := i; j < len(d.Lines); j++ {
			if strings.HasPrefix(d.Lines[j], end) {
				return d.Lines[i : j+1], true
			}
		}
	}
	return nil, false
}

// CheckTwin compares a Chinese page's fenced blocks (info string, the
// comment before the fence, every line) and generated regions with its
// English page's, in order. Each problem names both places, what the
// English page has and what the Chinese one has.
func CheckTwin(root string, t Twin) []error {
	en, err := ReadDoc(filepath.Join(root, t.English))
	if err != nil {
		return []error{fmt.Errorf("%s: its English page: %w", t.Chinese, err)}
	}
	zh, err := ReadDoc(filepath.Join(root, t.Chinese))
	if err != nil {
		return []error{err}
	}
	var errs []error
	n := min(len(en.Blocks), len(zh.Blocks))
	for i := 0; i < n; i++ {
		e, z := en.Blocks[i], zh.Blocks[i]
		where := fmt.Sprintf("%s:%d: code block %d (%s:%d has it)", t.Chinese, z.Fence+1, i+1, t.English, e.Fence+1)
		switch {
		case e.Info != z.Info:
			errs = append(errs, fmt.Errorf("%s: fence info %q, expected %q", where, z.Info, e.Info))
		case e.Directive != z.Directive:
			errs = append(errs, fmt.Errorf("%s: the comment before the fence is %q, expected %q", where, z.Directive, e.Directive))
		case !equalLines(e.Content, z.Content):
			errs = append(errs, fmt.Errorf("%s: its lines differ (- Chinese, + English):\n%s", where, Diff(z.Content, e.Content)))
		}
		if len(errs) > 0 {
			// The blocks after a missing or extra one all differ: one
			// problem says enough.
			return errs
		}
	}
	if len(en.Blocks) != len(zh.Blocks) {
		next := func(d *Doc) string {
			if n < len(d.Blocks) {
				return fmt.Sprintf("the next at line %d", d.Blocks[n].Fence+1)
			}
			return "none after"
		}
		errs = append(errs, fmt.Errorf("%s has %d code blocks, %s has %d; the first %d match (%s: %s; %s: %s)",
			t.Chinese, len(zh.Blocks), t.English, len(en.Blocks), n, t.English, next(en), t.Chinese, next(zh)))
	}
	for _, r := range generatedRegions {
		e, okE := region(en, r.begin, r.end)
		z, okZ := region(zh, r.begin, r.end)
		if okE != okZ {
			errs = append(errs, fmt.Errorf("%s: the region %s ... %s is in one of the two pages only (%s: %v; %s: %v)", t.Chinese, r.begin, r.end, t.English, okE, t.Chinese, okZ))
			continue
		}
		if !r.perLanguage && !equalLines(e, z) {
			errs = append(errs, fmt.Errorf("%s: the region %s ... %s differs from %s's (- Chinese, + English):\n%s", t.Chinese, r.begin, r.end, t.English, Diff(z, e)))
		}
	}
	return errs
}

// CheckTwins checks every Chinese page against its English page, and that
// every page of the learner path has a twin and every twin an English page.
func CheckTwins(root string) ([]error, error) {
	twins, err := Twins(root)
	if err != nil {
		return nil, err
	}
	var errs []error
	have := map[string]bool{}
	for _, t := range twins {
		have[t.English] = true
		if _, err := os.Stat(filepath.Join(root, t.English)); err != nil {
			errs = append(errs, fmt.Errorf("%s: no English page %s to translate", t.Chinese, t.English))
			continue
		}
		errs = append(errs, CheckTwin(root, t)...)
	}
	for _, p := range LearnerPath {
		if !have[p] {
			errs = append(errs, fmt.Errorf("%s is on the learner path but has no Chinese twin %s", p, ChineseOf(p)))
		}
	}
	return errs, nil
}
