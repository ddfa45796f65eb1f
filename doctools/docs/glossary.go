package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Rejected is a Chinese rendering that docs/glossary.md's third column says
// the Chinese pages do not use for a term: 应用配置 for "apply
// configuration" reads as "application configuration", 辐条版本 for a spoke
// version is a word no Chinese Kubernetes text uses. Except lists phrases
// that hold the word in another sense (模式 alone is not "schema", but
// "Operator 模式" is the pattern).
type Rejected struct {
	Term   string // the glossary's English term
	Use    string // the rendering the glossary gives
	Word   string
	Except []string
}

// The third column: words separated by "、", each optionally followed by
// "（除了 A、B）", the phrases in which the word is right.
var rejectedRe = regexp.MustCompile(`([^、（）]+)(?:（除了([^）]*)）)?`)

// ReadRejected reads the rejected renderings from docs/glossary.md: the rows
// of its table that have a third cell.
func ReadRejected(root string) ([]Rejected, error) {
	path := filepath.Join(root, "docs", "glossary.md")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []Rejected
	for i, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "| ") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) < 3 || cells[0] == "English" || strings.TrimSpace(cells[2]) == "" {
			continue
		}
		if len(cells) > 3 {
			return nil, fmt.Errorf("%s:%d: want 3 cells (English, 中文, not in the Chinese pages), got %d", path, i+1, len(cells))
		}
		for _, m := range rejectedRe.FindAllStringSubmatch(strings.TrimSpace(cells[2]), -1) {
			r := Rejected{Term: cells[0], Use: cells[1], Word: strings.TrimSpace(m[1])}
			if r.Word == "" {
				continue
			}
			for _, e := range strings.Split(m[2], "、") {
				if e = strings.TrimSpace(e); e != "" {
					if !strings.Contains(e, r.Word) {
						return nil, fmt.Errorf("%s:%d: the exception %q does not contain %q", path, i+1, e, r.Word)
					}
					r.Except = append(r.Except, e)
				}
			}
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no row has a third cell (the renderings the Chinese pages do not use)", path)
	}
	return out, nil
}

// linkTargetRe is a link's target: an anchor made from a heading ("#operator-模式")
// is not prose.
var linkTargetRe = regexp.MustCompile(`\]\([^)]*\)`)

// CheckRejected reports each line of the Chinese pages (README.zh.md and
// docs/zh/*.md, the glossary aside) whose prose uses a rejected rendering.
// Code blocks and link targets are not prose.
func CheckRejected(root string) ([]string, error) {
	rejected, err := ReadRejected(root)
	if err != nil {
		return nil, err
	}
	files, _ := filepath.Glob(filepath.Join(root, "docs", "zh", "*.md"))
	files = append([]string{filepath.Join(root, "README.zh.md")}, files...)
	var problems []string
	for _, f := range files {
		if filepath.Base(f) == "glossary.md" {
			continue
		}
		d, err := ReadDoc(f)
		if err != nil {
			return nil, err
		}
		inBlock := make([]bool, len(d.Lines))
		for _, b := range d.Blocks {
			for i := b.Fence; i <= b.Close; i++ {
				inBlock[i] = true
			}
		}
		rel, _ := filepath.Rel(root, f)
		for i, line := range d.Lines {
			if inBlock[i] {
				continue
			}
			prose := linkTargetRe.ReplaceAllString(line, "]")
			for _, r := range rejected {
				p := prose
				for _, e := range r.Except {
					p = strings.ReplaceAll(p, e, "")
				}
				if strings.Contains(p, r.Word) {
					problems = append(problems, fmt.Sprintf("%s:%d: %q for %q: docs/glossary.md says %s", rel, i+1, r.Word, r.Term, r.Use))
				}
			}
		}
	}
	return problems, nil
}

// CheckEnglishLinks reports each link of a Chinese page to a page that has
// no Chinese version (bench.md, a module's README, CONTRIBUTING.md) whose
// text does not say it is English (“（英文）” in it or right after it): a
// Chinese reader should know before following it. The language switch
// ("[English](../x.md)") is the exception.
func CheckEnglishLinks(root string) ([]string, error) {
	files, _ := filepath.Glob(filepath.Join(root, "docs", "zh", "*.md"))
	files = append([]string{filepath.Join(root, "README.zh.md")}, files...)
	var problems []string
	for _, f := range files {
		d, err := ReadDoc(f)
		if err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(root, f)
		for _, l := range d.Links() {
			target := RepoPath(filepath.ToSlash(rel), l.Dest)
			if l.Image || l.Text == "English" || !strings.HasSuffix(target, ".md") || strings.HasPrefix(target, "docs/zh/") || target == "README.zh.md" {
				continue
			}
			if _, err := os.Stat(filepath.Join(root, "docs", "zh", strings.TrimPrefix(target, "docs/"))); err == nil && strings.HasPrefix(target, "docs/") {
				continue // an English page with a Chinese twin: the link should go to the twin, which CheckTwins' links see
			}
			line := d.Lines[l.Line-1]
			after := line[strings.Index(line, "]("+l.Dest+")")+len("]("+l.Dest+")"):]
			if strings.Contains(l.Text, "英文") || strings.HasPrefix(after, "（英文）") {
				continue
			}
			problems = append(problems, fmt.Sprintf("%s:%d: the link [%s](%s) leads to an English page: say so, [%s（英文）](%s)", rel, l.Line, l.Text, l.Dest, l.Text, l.Dest))
		}
	}
	return problems, nil
}
