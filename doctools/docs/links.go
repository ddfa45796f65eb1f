package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

// Link is a markdown link or image outside code.
type Link struct {
	Line  int // 1-based
	Text  string
	Dest  string
	Image bool
}

var (
	// [text](dest) and ![alt](dest); text may hold `code` but no brackets.
	linkRe       = regexp.MustCompile(`(!?)\[([^\[\]]*)\]\(([^()\s]+)(?:\s+"[^"]*")?\)`)
	inlineCodeRe = regexp.MustCompile("`[^`]*`")
	headingRe    = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	htmlAnchorRe = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
)

// prose returns the doc's lines with every fenced block blanked, so that
// links and headings are looked for in the prose alone.
func (d *Doc) prose() []string {
	lines := append([]string(nil), d.Lines...)
	for _, b := range d.Blocks {
		for i := b.Fence; i <= b.Close; i++ {
			lines[i] = ""
		}
	}
	return lines
}

// Links returns the doc's links and images, in order. A link's text may
// run over lines, as a wrapped paragraph has it: each paragraph is read as
// one line, and a link is reported at the line where it starts.
func (d *Doc) Links() []Link {
	var links []Link
	prose := d.prose()
	for start := 0; start < len(prose); {
		if strings.TrimSpace(prose[start]) == "" {
			start++
			continue
		}
		end := start
		for end < len(prose) && strings.TrimSpace(prose[end]) != "" {
			end++
		}
		// offsets[k] is where line start+k begins in the joined paragraph.
		var offsets []int
		var b strings.Builder
		for _, l := range prose[start:end] {
			offsets = append(offsets, b.Len())
			b.WriteString(l)
			b.WriteByte(' ')
		}
		// A link inside `code` is not a link.
		para := inlineCodeRe.ReplaceAllStringFunc(b.String(), func(s string) string {
			if strings.Contains(s, "](") {
				return strings.Repeat(" ", len(s))
			}
			return s
		})
		for _, m := range linkRe.FindAllStringSubmatchIndex(para, -1) {
			line := start
			for k, off := range offsets {
				if off <= m[0] {
					line = start + k
				}
			}
			links = append(links, Link{Line: line + 1, Image: para[m[2]:m[3]] == "!", Text: para[m[4]:m[5]], Dest: para[m[6]:m[7]]})
		}
		start = end
	}
	return links
}

// Headings returns the doc's headings: level and text, in order.
func (d *Doc) Headings() (levels []int, texts []string) {
	for _, line := range d.prose() {
		if m := headingRe.FindStringSubmatch(line); m != nil {
			levels = append(levels, len(m[1]))
			texts = append(texts, m[2])
		}
	}
	return levels, texts
}

// Anchors returns the fragment ids of the doc's headings, as GitHub and
// Hugo (autoHeadingIDType "github") make them, and of <a id> / <a name>.
func (d *Doc) Anchors() map[string]bool {
	ids := map[string]bool{}
	seen := map[string]int{}
	_, texts := d.Headings()
	for _, t := range texts {
		s := Slug(t)
		if n := seen[s]; n > 0 {
			ids[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			ids[s] = true
		}
		seen[s]++
	}
	for _, line := range d.prose() {
		for _, m := range htmlAnchorRe.FindAllStringSubmatch(line, -1) {
			ids[m[1]] = true
		}
	}
	return ids
}

// Slug is the fragment id GitHub gives a heading: its text as rendered
// (links by their text, code without backticks), lower-cased, with every
// character but letters, digits, spaces, hyphens and underscores dropped,
// and each space made a hyphen. Chinese characters are letters and stay.
func Slug(heading string) string {
	text := linkRe.ReplaceAllString(heading, "$2")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// LinkProblem is a relative link that does not resolve.
type LinkProblem struct {
	Doc  string
	Line int
	Dest string
	Err  string
}

func (p LinkProblem) Error() string {
	return fmt.Sprintf("%s:%d: (%s) %s", p.Doc, p.Line, p.Dest, p.Err)
}

// CheckLinks checks every relative link and image of the markdown files
// under root: the file or directory it names must exist, and a fragment
// into a markdown file must be one of its anchors. Links with a scheme
// (https:, mailto:) are left alone.
func CheckLinks(root string, files []string) ([]LinkProblem, error) {
	docs := map[string]*Doc{}
	read := func(path string) (*Doc, error) {
		if d, ok := docs[path]; ok {
			return d, nil
		}
		d, err := ReadDoc(path)
		if err != nil {
			return nil, err
		}
		docs[path] = d
		return d, nil
	}
	var problems []LinkProblem
	for _, f := range files {
		d, err := read(f)
		if err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(root, f)
		for _, l := range d.Links() {
			if strings.Contains(l.Dest, "://") || strings.HasPrefix(l.Dest, "mailto:") {
				continue
			}
			bad := func(format string, args ...any) {
				problems = append(problems, LinkProblem{Doc: rel, Line: l.Line, Dest: l.Dest, Err: fmt.Sprintf(format, args...)})
			}
			target, frag, _ := strings.Cut(l.Dest, "#")
			path := f
			if target != "" {
				path = filepath.Join(filepath.Dir(f), filepath.FromSlash(target))
				st, err := os.Stat(path)
				if err != nil {
					bad("no such file or directory: %s", filepath.ToSlash(mustRel(root, path)))
					continue
				}
				if st.IsDir() {
					if frag != "" {
						bad("a fragment on a directory")
					}
					continue
				}
				if r := mustRel(root, path); strings.HasPrefix(r, "..") {
					bad("leaves the repository")
					continue
				}
			}
			if frag == "" || !strings.HasSuffix(path, ".md") {
				continue
			}
			td, err := read(path)
			if err != nil {
				return nil, err
			}
			if !td.Anchors()[frag] {
				bad("no heading in %s has the anchor #%s", filepath.ToSlash(mustRel(root, path)), frag)
			}
		}
	}
	return problems, nil
}

func mustRel(root, path string) string {
	r, err := filepath.Rel(root, path)
	if err != nil {
		return path
	}
	return r
}
