package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Excerpt is where an excerpt block's content comes from.
type Excerpt struct {
	// Path is the source file, relative to the repository root.
	Path string
	// Name selects the lines between "+docs:begin Name" and "+docs:end Name".
	Name string
	// From and To select the one line matching From through the first line
	// after it matching To. With Until, the excerpt ends before that line
	// instead, less the blank lines above it: a listing of several
	// declarations ends where the next one's doc comment starts.
	From, To *regexp.Regexp
	Until    bool
}

func (e Excerpt) String() string {
	switch {
	case e.Name != "":
		return e.Path + "#" + e.Name
	case e.From != nil && e.Until:
		return fmt.Sprintf("%s from %q until %q", e.Path, e.From, e.To)
	case e.From != nil:
		return fmt.Sprintf("%s from %q to %q", e.Path, e.From, e.To)
	}
	return e.Path
}

// ParseExcerpt parses what follows "excerpt:" in a directive.
func ParseExcerpt(spec string) (Excerpt, error) {
	spec = strings.TrimSpace(spec)
	path, rest, _ := strings.Cut(spec, " ")
	var e Excerpt
	if p, name, ok := strings.Cut(path, "#"); ok {
		e.Path, e.Name = p, name
	} else {
		e.Path = path
	}
	if e.Path == "" {
		return e, fmt.Errorf("excerpt: no path in %q", spec)
	}
	rest = strings.TrimSpace(rest)
	if rest == "" {
		return e, nil
	}
	if e.Name != "" {
		return e, fmt.Errorf("excerpt %q: use either #NAME or from/to, not both", spec)
	}
	var from, to string
	var err error
	if !strings.HasPrefix(rest, "from ") {
		return e, fmt.Errorf(`excerpt %q: expected from "REGEXP" to "REGEXP" after the path`, spec)
	}
	if from, rest, err = unquoteRegexp(strings.TrimPrefix(rest, "from ")); err != nil {
		return e, fmt.Errorf("excerpt %q: %w", spec, err)
	}
	rest = strings.TrimSpace(rest)
	keyword, after, _ := strings.Cut(rest, " ")
	if keyword != "to" && keyword != "until" {
		return e, fmt.Errorf(`excerpt %q: expected to "REGEXP" or until "REGEXP" after from`, spec)
	}
	e.Until = keyword == "until"
	if to, rest, err = unquoteRegexp(after); err != nil {
		return e, fmt.Errorf("excerpt %q: %w", spec, err)
	}
	if strings.TrimSpace(rest) != "" {
		return e, fmt.Errorf("excerpt %q: unexpected %q at the end", spec, rest)
	}
	if e.From, err = regexp.Compile(from); err != nil {
		return e, fmt.Errorf("excerpt %q: %w", spec, err)
	}
	if e.To, err = regexp.Compile(to); err != nil {
		return e, fmt.Errorf("excerpt %q: %w", spec, err)
	}
	return e, nil
}

// Extract returns the excerpt's lines from the source under root.
func (e Excerpt) Extract(root string) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(root, e.Path))
	if err != nil {
		return nil, fmt.Errorf("excerpt %s: %w", e, err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	switch {
	case e.Name != "":
		begin := regexp.MustCompile(`\+docs:begin\s+` + regexp.QuoteMeta(e.Name) + `\s*(-->)?\s*$`)
		end := regexp.MustCompile(`\+docs:end\s+` + regexp.QuoteMeta(e.Name) + `\s*(-->)?\s*$`)
		start := -1
		for i, l := range lines {
			switch {
			case begin.MatchString(l):
				if start >= 0 {
					return nil, fmt.Errorf("excerpt %s: two +docs:begin %s markers", e, e.Name)
				}
				start = i
			case end.MatchString(l) && start >= 0:
				return lines[start+1 : i], nil
			}
		}
		if start < 0 {
			return nil, fmt.Errorf("excerpt %s: no +docs:begin %s marker in %s", e, e.Name, e.Path)
		}
		return nil, fmt.Errorf("excerpt %s: no +docs:end %s after line %d", e, e.Name, start+1)
	case e.From != nil:
		start := -1
		var matches []int
		for i, l := range lines {
			if e.From.MatchString(l) {
				matches = append(matches, i+1)
				if start < 0 {
					start = i
				}
			}
		}
		switch {
		case len(matches) == 0:
			return nil, fmt.Errorf("excerpt %s: no line of %s matches %q", e, e.Path, e.From)
		case len(matches) > 1:
			return nil, fmt.Errorf("excerpt %s: %q is ambiguous: lines %v of %s match it", e, e.From, matches, e.Path)
		}
		for i := start + 1; i < len(lines); i++ {
			if e.To.MatchString(lines[i]) {
				if !e.Until {
					return lines[start : i+1], nil
				}
				for i > start+1 && strings.TrimSpace(lines[i-1]) == "" {
					i--
				}
				return lines[start:i], nil
			}
		}
		return nil, fmt.Errorf("excerpt %s: no line after %s:%d matches %q", e, e.Path, start+1, e.To)
	}
	return lines, nil
}

// Problem is an excerpt block that differs from its source, or that cannot
// be checked.
type Problem struct {
	Doc  string
	Line int // 1-based, the opening fence
	Spec string
	Err  error
	// Diff is set when the block differs from the source: "-" lines are in
	// the doc only, "+" lines in the source only.
	Diff string
}

func (p Problem) Error() string {
	if p.Err != nil {
		return fmt.Sprintf("%s:%d: %v", p.Doc, p.Line, p.Err)
	}
	return fmt.Sprintf("%s:%d: the block differs from %s (- doc, + source):\n%s", p.Doc, p.Line, p.Spec, p.Diff)
}

// Excerpts returns the doc's excerpt blocks with their specs.
func (d *Doc) Excerpts() ([]Block, []Excerpt, []error) {
	var blocks []Block
	var specs []Excerpt
	var errs []error
	for _, b := range d.Blocks {
		spec, ok := strings.CutPrefix(b.Directive, "excerpt:")
		if !ok {
			continue
		}
		e, err := ParseExcerpt(spec)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: %w", d.Path, b.Fence+1, err))
			continue
		}
		blocks = append(blocks, b)
		specs = append(specs, e)
	}
	return blocks, specs, errs
}

// CheckExcerpts compares every excerpt block of the markdown file with its
// source under root. With update, it rewrites the blocks that differ (and
// reports only what it could not fix).
func CheckExcerpts(root, path string, update bool) (n int, problems []Problem, err error) {
	d, err := ReadDoc(path)
	if err != nil {
		return 0, nil, err
	}
	blocks, specs, errs := d.Excerpts()
	for _, e := range errs {
		problems = append(problems, Problem{Doc: path, Err: e})
	}
	out := append([]string(nil), d.Lines...)
	shift := 0 // lines added to out before the current block
	changed := false
	for i, b := range blocks {
		n++
		want, err := specs[i].Extract(root)
		if err != nil {
			problems = append(problems, Problem{Doc: path, Line: b.Fence + 1, Spec: specs[i].String(), Err: err})
			continue
		}
		if equalLines(b.Content, want) {
			continue
		}
		if update {
			start, end := b.Fence+1+shift, b.Close+shift
			out = append(out[:start], append(append([]string(nil), want...), out[end:]...)...)
			shift += len(want) - len(b.Content)
			changed = true
			continue
		}
		problems = append(problems, Problem{Doc: path, Line: b.Fence + 1, Spec: specs[i].String(), Diff: Diff(b.Content, want)})
	}
	if changed {
		if err := os.WriteFile(path, []byte(strings.Join(out, "\n")), 0o644); err != nil {
			return n, problems, err
		}
	}
	return n, problems, nil
}

func equalLines(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Diff is a line diff of a (the doc) and b (the source), with two lines of
// context around each change.
func Diff(a, b []string) string {
	// Longest common subsequence; excerpts are short.
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type op struct {
		kind byte
		text string
	}
	var ops []op
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			ops = append(ops, op{' ', a[i]})
			i++
			j++
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, op{'-', a[i]})
			i++
		default:
			ops = append(ops, op{'+', b[j]})
			j++
		}
	}
	const context = 2
	var sb strings.Builder
	lastShown := -1
	for k, o := range ops {
		near := false
		for m := max(0, k-context); m <= min(len(ops)-1, k+context); m++ {
			if ops[m].kind != ' ' {
				near = true
				break
			}
		}
		if !near {
			continue
		}
		if lastShown >= 0 && k > lastShown+1 {
			sb.WriteString("  ...\n")
		}
		fmt.Fprintf(&sb, "%c %s\n", o.kind, o.text)
		lastShown = k
	}
	return sb.String()
}
