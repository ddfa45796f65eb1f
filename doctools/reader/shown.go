package reader

import (
	"fmt"
	"regexp"
	"strings"
)

// Shown is the output a chapter shows under a block. The terminal must print
// each of its lines; it may print others too (the text may show only the
// last command's output), and in another order (a list of generated names
// is sorted by name). A line matches when its words do, however many spaces stand between them (columns are as wide as
// their values), and these parts of a word match any value of their kind,
// since they differ from run to run:
//
//   - "…" stands for any text (the text leaves out something long or varying);
//   - an age or duration as kubectl prints it ("0s", "2m3s", "5h");
//   - a time: RFC 3339 ("2026-11-22T04:31:23Z"), or a klog header with
//     its process id ("I1122 04:33:14.325816   15014");
//   - the line number of klog's caller ("kubeconfig.go:78]"): it moves with
//     every edit above the call, and the file name is kept;
//   - a UUID, or its start cut with "…" ("aef81eaf-…");
//   - the five characters the API server appends to a generated name
//     ("custompod-sample-6vd9c", "e2e-testgvk-d6hhw").
type Shown struct {
	Line  int      // the 1-based line of the block's first line
	Text  []string // the block's lines, as the chapter shows them
	lines []*regexp.Regexp
	text  []string // the line each pattern is for
}

var (
	// Each varying kind, and what stands for it in a line's pattern.
	varying = []struct{ re, pattern string }{
		{`…`, `.*`},
		{`[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+`, `[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+`},
		{`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)`, `\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)`},
		{`\.go:\d+\]`, `\.go:\d+\]`},
		{`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`, `[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`},
		{`[0-9a-f]{8}-[0-9a-f-]*…`, `[0-9a-f]{8}-.*`},
		// apimachinery's names.SimpleNameGenerator: five of these, after a
		// prefix that ends in "-".
		{`-[bcdfghjklmnpqrstvwxz2456789]{5}\b`, `-[bcdfghjklmnpqrstvwxz2456789]{5}`},
		{`(?:^|\s)\d+(?:ms|s|m|h|d)(?:\d+(?:s|m|h))?(?:\s|$)`, `\d+(?:ms|s|m|h|d)(?:\d+(?:s|m|h))?`},
	}
	varyingRe = func() *regexp.Regexp {
		var alts []string
		for _, v := range varying {
			alts = append(alts, "("+v.re+")")
		}
		return regexp.MustCompile(strings.Join(alts, "|"))
	}()
	spaceRe = regexp.MustCompile(`\s+`)
)

// NewShown reads a shown block; line is where its first line is.
func NewShown(line int, text []string) (*Shown, error) {
	s := &Shown{Line: line, Text: text}
	for i, l := range text {
		if strings.TrimSpace(l) == "" {
			continue
		}
		re, err := regexp.Compile(`^\s*` + linePattern(strings.TrimSpace(l)) + `\s*$`)
		if err != nil {
			return nil, fmt.Errorf("line %d of the output shown: %w", line+i, err)
		}
		s.lines = append(s.lines, re)
		s.text = append(s.text, l)
	}
	if len(s.lines) == 0 {
		return nil, fmt.Errorf("an empty block after a command: show its output, or put text between")
	}
	return s, nil
}

// linePattern is the pattern of one shown line: its literal text, with the
// varying parts and the runs of spaces opened up.
func linePattern(l string) string {
	var b strings.Builder
	literal := func(s string) {
		for i, part := range spaceRe.Split(s, -1) {
			if i > 0 {
				b.WriteString(`\s+`)
			}
			b.WriteString(regexp.QuoteMeta(part))
		}
	}
	last := 0
	for _, m := range varyingRe.FindAllStringSubmatchIndex(l, -1) {
		start, end := m[0], m[1]
		kind := 0
		for k := range varying {
			if m[2+2*k] >= 0 {
				kind = k
				break
			}
		}
		// An age takes the spaces around it along: they stay spaces.
		sub := l[start:end]
		lead := len(sub) - len(strings.TrimLeft(sub, " \t"))
		trail := len(sub) - len(strings.TrimRight(sub, " \t"))
		literal(l[last : start+lead])
		b.WriteString(varying[kind].pattern)
		literal(l[end-trail : end])
		last = end
	}
	literal(l[last:])
	return b.String()
}

// Missing returns the first shown line that out does not print, or "" when
// out prints them all: each shown line needs a printed line of its own.
//
// typed are the block's lines. The runner types them all at once, as a
// reader pastes a block, so the terminal echoes the later ones while the
// first still run, and a command's output can land on the line of such an
// echo ("kubectl apply -f x.yamlnetwork.example/x created"): a printed line
// is also read without a typed line it starts with.
func (s *Shown) Missing(out string, typed ...string) string {
	missing, _ := s.match(out, typed)
	return missing
}

// Extra returns the first printed line that no shown line stands for, or ""
// when there is none: for a block whose output the text shows whole
// (<!-- check complete -->). A typed line echoed on a line of its own is
// not output.
func (s *Shown) Extra(out string, typed ...string) string {
	_, extra := s.match(out, typed)
	return extra
}

// match pairs the printed lines with the shown ones. It returns the first
// shown line with no printed line, and the first printed line, neither
// blank nor an echo, with no shown line.
func (s *Shown) match(out string, typed []string) (missing, extra string) {
	printed := strings.Split(out, "\n")
	echo := make([]bool, len(printed))
	for i, l := range printed {
		// A command typed while the one before still ran is echoed twice:
		// as typed ahead, and again after the next prompt.
		l = strings.TrimPrefix(strings.TrimPrefix(l, prompt), prompt2)
		// A typed line that ran ahead can also be followed, on the same
		// line, by the next prompt and that line's second echo:
		// `diff -rq a b<prompt>diff -rq a b`.
		for stripped := true; stripped; {
			stripped = false
			for _, t := range typed {
				if t = strings.TrimSpace(t); t != "" && strings.HasPrefix(l, t) && len(l) > len(t) {
					l, stripped = l[len(t):], true
					l = strings.TrimPrefix(strings.TrimPrefix(l, prompt), prompt2)
				}
			}
		}
		printed[i] = l
		for _, t := range typed {
			if t = strings.TrimSpace(t); t != "" && strings.TrimSpace(l) == t {
				echo[i] = true
			}
		}
	}
	// Which shown line each printed line stands for, -1 for none. A line
	// that could stand for several gets the one that leaves the others
	// their lines too (a bipartite matching, by augmenting paths).
	owner := make([]int, len(printed))
	for i := range owner {
		owner[i] = -1
	}
	var assign func(shown int, seen []bool) bool
	assign = func(shown int, seen []bool) bool {
		for p, l := range printed {
			if seen[p] || !s.lines[shown].MatchString(l) {
				continue
			}
			seen[p] = true
			if owner[p] < 0 || assign(owner[p], seen) {
				owner[p] = shown
				return true
			}
		}
		return false
	}
	for i := range s.lines {
		if !assign(i, make([]bool, len(printed))) && missing == "" {
			missing = s.text[i]
		}
	}
	for p, l := range printed {
		if owner[p] < 0 && !echo[p] && strings.TrimSpace(l) != "" && !zshEOLMark.MatchString(l) {
			return missing, l
		}
	}
	return missing, ""
}

// zshEOLMark is what zsh draws before a prompt (PROMPT_SP: "%", or "#" for
// root, then spaces to the edge) and then overwrites: the screen may be read
// before it is, and it is the shell's line, not the command's.
var zshEOLMark = regexp.MustCompile(`^[%#] +$`)
