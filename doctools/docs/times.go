package docs

import (
	"bufio"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// WordsPerMinute is the reading rate the index's times assume: a careful
// reading of technical prose, slower than a novel's 250.
const WordsPerMinute = 150

// ProseWords counts the words of a page a reader reads as prose: every line
// but the fenced blocks (code, output) and the comments.
func ProseWords(d *Doc) int {
	return countWords(d.prose())
}

// countWords counts the words of prose lines, comments left out.
func countWords(lines []string) int {
	n := 0
	for _, l := range lines {
		if _, ok := Comment(strings.TrimSpace(l)); ok {
			continue
		}
		n += len(strings.Fields(strings.TrimLeft(l, "#")))
	}
	return n
}

// PageWordLimits are the most prose words a reference page may hold, by its
// path from the repository root: bench.md is read in about 20 minutes.
var PageWordLimits = map[string]int{"docs/bench.md": 3000}

// ReadingOrderLimit is the most prose words the reading order (docs/README.md's
// numbered chapters) may hold: 12,000, about 80 minutes of reading. What a
// learner need not read while typing a chapter belongs on a reference page
// or in a module's README.
const ReadingOrderLimit = 12000

// CheckReadingOrder fails when the reading order's words are over limit.
func CheckReadingOrder(words, limit int) error {
	if words > limit {
		return fmt.Errorf("the reading order is %d prose words, over its limit of %d (%d minutes at %d words a minute): say less in the chapters, or move what a learner need not read to a reference page",
			words, limit, limit/WordsPerMinute, WordsPerMinute)
	}
	return nil
}

// CheckWordLimits fails for each page of limits over its limit, naming its
// count and its limit.
func CheckWordLimits(root string, limits map[string]int) error {
	var errs []error
	for _, rel := range slices.Sorted(maps.Keys(limits)) {
		d, err := ReadDoc(filepath.Join(root, rel))
		if err != nil {
			return err
		}
		if n := ProseWords(d); n > limits[rel] {
			errs = append(errs, fmt.Errorf("%s: %d prose words, over its limit of %d (%d minutes at %d words a minute): say less, or move what is not read to a page of its own",
				rel, n, limits[rel], limits[rel]/WordsPerMinute, WordsPerMinute))
		}
	}
	return errors.Join(errs...)
}

// ReaderTimes are the reader runner's timings of the chapters: the seconds
// it took to type each chapter's steps, and the commit it ran at.
type ReaderTimes struct {
	Commit  string
	Seconds map[string]int // by page name ("crd-demo")
}

// ReadReaderTimes reads a timings file: "# commit C" and lines
// "PAGE<tab>SECONDS".
func ReadReaderTimes(path string) (ReaderTimes, error) {
	rt := ReaderTimes{Seconds: map[string]int{}}
	f, err := os.Open(path)
	if err != nil {
		return rt, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if c, ok := strings.CutPrefix(line, "# commit "); ok {
			rt.Commit = strings.TrimSpace(c)
			continue
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		page, secs, ok := strings.Cut(line, "\t")
		n, err := strconv.Atoi(secs)
		if !ok || err != nil {
			return rt, fmt.Errorf("%s: %q: expected PAGE<tab>SECONDS", path, line)
		}
		rt.Seconds[page] = n
	}
	if rt.Commit == "" {
		return rt, fmt.Errorf("%s: no \"# commit\" line: the figures need the commit they were measured at", path)
	}
	return rt, sc.Err()
}

var (
	timesRowRe   = regexp.MustCompile(`^(\|[^|]*\|\s*\[[^\]]+\]\(([^)#]+\.md)\)\s*\|[^|]*\|)\s*[^|]*\|\s*[^|]*\|\s*$`)
	timesBlockRe = regexp.MustCompile(`(?s)<!-- times:begin -->.*?<!-- times:end -->`)
	numberedRe   = regexp.MustCompile(`^\|\s*\d+\s*\|`) // a row of the reading order
)

// Minutes says n minutes, the page's language's way.
func minutes(n int, zh bool) string {
	if zh {
		return fmt.Sprintf("%d 分钟", n)
	}
	return fmt.Sprintf("%d min", n)
}

// PageWords is a page of the reading order and its prose words.
type PageWords struct {
	Page  string
	Words int
}

// timedRow is a row of an index's tables that carries times: its line, the
// cells before them, the page it links (its base name) and that page's
// prose words, and whether it is a row of the reading order.
type timedRow struct {
	line     int // 0-based
	cells    string
	page     string
	words    int
	numbered bool
}

// timedRows reads the rows of index that carry times, counting the words of
// the English page each links.
func timedRows(root string, lines []string, index string) ([]timedRow, error) {
	var rows []timedRow
	for i, l := range lines {
		m := timesRowRe.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		page := strings.TrimSuffix(filepath.Base(m[2]), ".md")
		d, err := ReadDoc(filepath.Join(root, "docs", page+".md"))
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", index, i+1, err)
		}
		rows = append(rows, timedRow{line: i, cells: m[1], page: page, words: ProseWords(d), numbered: numberedRe.MatchString(l)})
	}
	return rows, nil
}

// ReadingOrderWords lists the pages of docs/README.md's numbered rows, the
// reading order, with the prose words UpdateTimes counts for each.
func ReadingOrderWords(root string) ([]PageWords, error) {
	b, err := os.ReadFile(filepath.Join(root, "docs", "README.md"))
	if err != nil {
		return nil, err
	}
	rows, err := timedRows(root, strings.Split(string(b), "\n"), "docs/README.md")
	if err != nil {
		return nil, err
	}
	var out []PageWords
	for _, r := range rows {
		if r.numbered {
			out = append(out, PageWords{Page: "docs/" + r.page + ".md", Words: r.words})
		}
	}
	return out, nil
}

// UpdateTimes writes, into an index page (docs/README.md or its Chinese
// twin), the last two cells of every table row that links a page of docs/
// and has them (reading, commands): the reading time from the English
// page's prose words, the commands' time from rt; and, between
// <!-- times:begin --> and <!-- times:end -->, how they were made. It
// returns the page as it should be, and the words of the reading order (the
// rows numbered 1, 2, ...).
func UpdateTimes(root, index string, rt ReaderTimes) (string, int, error) {
	b, err := os.ReadFile(filepath.Join(root, index))
	if err != nil {
		return "", 0, err
	}
	zh := strings.HasPrefix(index, "docs/zh/")
	lines := strings.Split(string(b), "\n")
	rows, err := timedRows(root, lines, index)
	if err != nil {
		return "", 0, err
	}
	total := 0
	for _, r := range rows {
		if r.numbered {
			total += r.words
		}
		reading := minutes((r.words+WordsPerMinute-1)/WordsPerMinute, zh)
		commands := "–"
		if s, ok := rt.Seconds[r.page]; ok {
			commands = minutes((s+59)/60, zh)
		}
		lines[r.line] = fmt.Sprintf("%s %s | %s |", r.cells, reading, commands)
	}
	out := strings.Join(lines, "\n")
	var note string
	if zh {
		note = fmt.Sprintf("阅读时间：按每分钟 %d 个英文单词计算英文页面的正文（不含代码块）；阅读顺序共 %d 个单词。命令时间：读者测试（`make test-docs` 的 reader，zsh，全新克隆，Go 构建缓存已预热）在 2 核机器上于提交 %s 键入各章步骤所用的时间；第一次运行、缓存为空时，构建会更久。`make verify` 会检查这些数字是否过时。",
			WordsPerMinute, total, rt.Commit)
	} else {
		note = fmt.Sprintf("Reading: the page's prose, code blocks left out, at %d words a minute; the reading order is %d words. Commands: the time the reader runner (`make test-docs`'s reader, zsh, a fresh clone, Go's build cache warm) took to type each chapter's steps, on 2 cores at commit %s; a first run, with an empty cache, builds for longer. `make verify` checks that these figures are current.",
			WordsPerMinute, total, rt.Commit)
	}
	if !timesBlockRe.MatchString(out) {
		return "", 0, fmt.Errorf("%s: no <!-- times:begin --> ... <!-- times:end --> block for the note on the figures", index)
	}
	out = timesBlockRe.ReplaceAllLiteralString(out, "<!-- times:begin -->\n"+note+"\n<!-- times:end -->")
	return out, total, nil
}
