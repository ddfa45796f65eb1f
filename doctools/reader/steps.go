// Package reader follows the tutorial's chapters as a reader does: it types
// their commands into real terminals (TestReader). Which blocks are typed,
// in which terminal, and when a terminal gets Ctrl-C all come from the text
// a reader sees; comments may only add checks. The rules:
//
//   - Every sh or bash block is typed, in order, except a quoted file (an
//     excerpt) and a block whose lead-in (the paragraph just before it) says
//     "optional" or "not run here".
//   - A block goes to the first terminal, unless a sentence of its lead-in
//     starts "In a second terminal" (third, fourth; "In the ...", "Back in
//     the ..."): then to that one, opened at the repository root with a shell
//     of its own.
//   - A paragraph that says "Ctrl-C" presses it in each terminal it names
//     ("first", "second", ...), in that order, and waits for the prompt.
//   - A sentence "Close the second terminal" (or "the second and third
//     terminals") closes them: the next block for that terminal opens a new
//     one, at the repository root.
//   - A block of another language (go, yaml, ...) whose lead-in says "save
//     it as `PATH`" is a file the reader writes, as an editor would save it:
//     its text goes into PATH, relative to the directory the lead-in's
//     terminal is in (the first, or the one it names). A lead-in may instead
//     change a file saved before (Edit): "replace `NAME` in `PATH`" puts the
//     block in place of the function or method NAME, its doc comment with
//     it; "replace the imports of `PATH`" in place of its imports; "add it
//     (or them) to the end of `PATH`" after its last line. A Go file is then gofmt'd,
//     as an editor does on save.
//
// A block with no language right after a typed block, with no text between
// them, is what that block prints: the runner checks it (Shown).
//
// A check comment just before a block only checks:
//
//	<!-- check expect="REGEXP" -->  the output must match
//	<!-- check fails -->            some command must fail
//	<!-- check timeout=30s -->      the block's time limit (default 10m)
//	<!-- check wait="REGEXP" -->    the block keeps running (a server): go on
//	                                once its output matches (timeout: how long
//	                                to wait, default 11m)
//	<!-- check complete -->         the output shown is the whole output: a
//	                                printed line it does not show fails
//	<!-- check reset -->            the block starts an exercise again after
//	                                a reader gave up on it: not typed in
//	                                order, but after stopping each
//	                                "## Exercise" section midway (TestReader)
//
// A chapter that leaves a terminal running fails: the text must say to stop it.
package reader

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"example.com/k8s-demo/doctools/docs"
)

// Step is one thing a reader does: type a block, or press Ctrl-C.
type Step struct {
	// Line is the 1-based line of the block's fence, or of the paragraph
	// that says Ctrl-C.
	Line int
	// Terminal is where the block is typed (1 is the first terminal).
	Terminal int
	// Commands is the block's text, a line each; nil for Ctrl-C.
	Commands []string
	// Interrupt lists the terminals that get Ctrl-C, in order.
	Interrupt []int
	// Close lists the terminals the text closes, after any Ctrl-C.
	Close []int
	// Section is the text of the "## " heading the step is under.
	Section string
	// File is the path a listing is saved as (relative to the terminal's
	// directory), and Content its text, a line each; "" for other steps.
	File    string
	Content []string
	// Edit is how the listing changes File: saved whole, or one part of it.
	Edit  Edit
	Check Check
	// Shown is the output the text shows for the block, if it shows any.
	Shown *Shown
}

// Check is what a check comment asks of a block.
type Check struct {
	Expect *regexp.Regexp
	Wait   *regexp.Regexp
	Fails  bool
	// Complete: the output shown is all the block prints.
	Complete bool
	Timeout  time.Duration
	// Reset: the block starts an interrupted exercise again.
	Reset bool
}

// Skipped is a shell block a reader is told not to type.
type Skipped struct {
	Line   int
	Reason string
}

var (
	ordinals    = []string{"first", "second", "third", "fourth"}
	ordinalRe   = regexp.MustCompile(`(?i)\b(first|second|third|fourth)\b`)
	terminalRe  = regexp.MustCompile(`(?i)(?:^|[.:;!?]\s+)(?:back\s+)?in\s+(?:a|the)\s+(first|second|third|fourth)\s+terminal\b`)
	skipRe      = regexp.MustCompile(`(?i)\b(optional|not run here)\b`)
	saveRe      = regexp.MustCompile("(?i)\\bsave (?:it|this) as `([^`\\s]+)`")
	funcRe      = regexp.MustCompile("(?i)\\breplace (?:the (?:function|method) )?`([A-Za-z_][A-Za-z0-9_]*)` in `([^`\\s]+)`")
	importsRe   = regexp.MustCompile("(?i)\\breplace the imports (?:of|in) `([^`\\s]+)`")
	appendRe    = regexp.MustCompile("(?i)\\b(?:add|append) (?:it|this|them|these) (?:to the end of|at the end of|to) `([^`\\s]+)`")
	ctrlCRe     = regexp.MustCompile(`\bCtrl-C\b`)
	closeRe     = regexp.MustCompile(`(?i)\bclose the ((?:first|second|third|fourth)(?:(?:,\s*|\s+and\s+)(?:first|second|third|fourth))*) terminals?\b`)
	headingRe   = regexp.MustCompile(`^#{1,6}\s`)
	checkWordRe = regexp.MustCompile(`^check(\s|$)`)
)

func ordinal(word string) int {
	for i, o := range ordinals {
		if strings.EqualFold(o, word) {
			return i + 1
		}
	}
	return 0
}

// ReaderSteps reads a chapter's steps from its visible text, and the shell
// blocks it leaves out, with the words that say so.
func ReaderSteps(d *docs.Doc) ([]Step, []Skipped, error) {
	var steps []Step
	var skipped []Skipped
	var para []string // the current paragraph's text lines
	var last string   // the last paragraph's text: a block's lead-in
	var section string
	paraLine := 0
	// typed is the step of the last block typed, while no text has come
	// after it: a block that follows shows its output.
	typed := -1
	// endParagraph turns a paragraph that says Ctrl-C into a step.
	endParagraph := func() error {
		if len(para) == 0 {
			return nil
		}
		defer func() { para, typed = nil, -1 }()
		text := strings.Join(para, " ")
		last = text
		if headingRe.MatchString(text) && strings.HasPrefix(text, "## ") {
			section = strings.TrimSpace(strings.TrimPrefix(text, "## "))
		}
		// What a sentence that closes terminals names is not Ctrl-C's.
		closing := closeRe.FindStringSubmatchIndex(text)
		ctrlText := text
		if closing != nil {
			ctrlText = text[:closing[0]]
		}
		if loc := ctrlCRe.FindStringIndex(ctrlText); loc != nil {
			var terms []int
			for _, m := range ordinalRe.FindAllStringSubmatch(ctrlText[loc[1]:], -1) {
				terms = append(terms, ordinal(m[1]))
			}
			if len(terms) == 0 {
				return fmt.Errorf("%s:%d: the paragraph says Ctrl-C but names no terminal (\"in the second terminal\")", d.Path, paraLine)
			}
			steps = append(steps, Step{Line: paraLine, Interrupt: terms, Section: section})
		}
		if closing != nil {
			var terms []int
			for _, m := range ordinalRe.FindAllStringSubmatch(text[closing[2]:closing[3]], -1) {
				if n := ordinal(m[1]); n == 1 {
					return fmt.Errorf("%s:%d: the first terminal cannot be closed: the chapter runs in it", d.Path, paraLine)
				} else {
					terms = append(terms, n)
				}
			}
			steps = append(steps, Step{Line: paraLine, Close: terms, Section: section})
		}
		return nil
	}
	bi := 0
	for i := 0; i < len(d.Lines); i++ {
		if bi < len(d.Blocks) && d.Blocks[bi].Fence == i {
			b := d.Blocks[bi]
			bi++
			if err := endParagraph(); err != nil {
				return nil, nil, err
			}
			leadIn := last
			last = ""
			i = b.Close
			if b.Lang() == "" && typed >= 0 {
				shown, err := NewShown(b.Fence+2, b.Content)
				if err != nil {
					return nil, nil, fmt.Errorf("%s:%d: %w", d.Path, b.Fence+1, err)
				}
				steps[typed].Shown = shown
				typed = -1
				continue
			}
			typed = -1
			if b.Lang() != "sh" && b.Lang() != "bash" && b.Lang() != "" {
				if file, edit, ok := listingEdit(leadIn); ok {
					if skip := skipRe.FindString(leadIn); skip != "" {
						skipped = append(skipped, Skipped{Line: b.Fence + 1, Reason: skip})
						continue
					}
					s := Step{Line: b.Fence + 1, Terminal: 1, File: file, Edit: edit, Content: b.Content, Section: section}
					if t := terminalRe.FindStringSubmatch(leadIn); t != nil {
						s.Terminal = ordinal(t[1])
					}
					steps = append(steps, s)
				}
				continue
			}
			if b.Lang() != "sh" && b.Lang() != "bash" || strings.HasPrefix(b.Directive, "excerpt:") {
				continue
			}
			if m := skipRe.FindString(leadIn); m != "" {
				skipped = append(skipped, Skipped{Line: b.Fence + 1, Reason: m})
				continue
			}
			s := Step{Line: b.Fence + 1, Terminal: 1, Commands: b.Content, Section: section}
			if m := terminalRe.FindStringSubmatch(leadIn); m != nil {
				s.Terminal = ordinal(m[1])
			}
			c, err := parseCheck(b.Directive)
			if err != nil {
				return nil, nil, fmt.Errorf("%s:%d: %w", d.Path, b.Fence+1, err)
			}
			s.Check = c
			steps = append(steps, s)
			typed = len(steps) - 1
			continue
		}
		line := strings.TrimSpace(d.Lines[i])
		switch {
		case line == "" || headingRe.MatchString(line):
			if err := endParagraph(); err != nil {
				return nil, nil, err
			}
			if line != "" {
				para, paraLine = []string{line}, i+1
				if err := endParagraph(); err != nil {
					return nil, nil, err
				}
			}
		case isComment(line):
			// A comment is not text a reader sees.
		default:
			if len(para) == 0 {
				paraLine = i + 1
			}
			para = append(para, line)
		}
	}
	if err := endParagraph(); err != nil {
		return nil, nil, err
	}
	return steps, skipped, nil
}

// listingEdit reads what a listing's lead-in asks: the file it goes into,
// and how.
func listingEdit(leadIn string) (file string, e Edit, ok bool) {
	if m := funcRe.FindStringSubmatch(leadIn); m != nil {
		return m[2], Edit{Kind: EditFunc, Func: m[1]}, true
	}
	if m := importsRe.FindStringSubmatch(leadIn); m != nil {
		return m[1], Edit{Kind: EditImports}, true
	}
	if m := appendRe.FindStringSubmatch(leadIn); m != nil {
		return m[1], Edit{Kind: EditAppend}, true
	}
	if m := saveRe.FindStringSubmatch(leadIn); m != nil {
		return m[1], Edit{Kind: EditSave}, true
	}
	return "", Edit{}, false
}

// parseCheck reads a check comment ("check expect=... fails timeout=...").
// Any other comment before a block is not a check; the old runnable
// directives, which set a directory or started a process, are refused.
func parseCheck(directive string) (Check, error) {
	c := Check{}
	if strings.HasPrefix(directive, "runnable") {
		return c, fmt.Errorf("a %q comment sets state a reader does not see; say it in the text, and check with <!-- check ... -->", directive)
	}
	if !checkWordRe.MatchString(directive) {
		return c, nil
	}
	words, err := docs.SplitWords(strings.TrimPrefix(directive, "check"))
	if err != nil {
		return c, err
	}
	for _, w := range words {
		k, v, hasValue := strings.Cut(w, "=")
		var err error
		switch {
		case k == "expect" && hasValue:
			c.Expect, err = regexp.Compile(v)
		case k == "wait" && hasValue:
			c.Wait, err = regexp.Compile(v)
		case k == "timeout" && hasValue:
			c.Timeout, err = time.ParseDuration(v)
		case k == "fails" && !hasValue:
			c.Fails = true
		case k == "complete" && !hasValue:
			c.Complete = true
		case k == "reset" && !hasValue:
			c.Reset = true
		default:
			err = fmt.Errorf("unknown check %q (expect=, wait=, timeout=, fails, complete, reset)", w)
		}
		if err != nil {
			return c, err
		}
	}
	if c.Wait != nil && (c.Fails || c.Expect != nil) {
		return c, fmt.Errorf("wait= is for a block that keeps running; it takes no expect= or fails")
	}
	if c.Reset && c.Wait != nil {
		return c, fmt.Errorf("reset is for the block that starts an exercise again; it cannot keep running (wait=)")
	}
	return c, nil
}

// exercise is where an "## Exercise" section's steps are in the order
// followed: its first and last, and the one after which a participant who
// gives up stops it.
type exercise struct {
	first, midway, last int
	slug                string
}

// exerciseSections finds the "## Exercise" sections among the steps. Midway
// is the first command typed after one that keeps running (a server, the
// state a Ctrl-C leaves most behind), or else the middle command.
func exerciseSections(steps []Step, order []int) map[string]exercise {
	out := map[string]exercise{}
	for k, i := range order {
		sec := steps[i].Section
		if !strings.HasPrefix(sec, "Exercise ") {
			continue
		}
		ex, seen := out[sec]
		if !seen {
			num := strings.TrimPrefix(sec, "Exercise ")
			num = num[:len(num)-len(strings.TrimLeft(num, "0123456789"))]
			ex = exercise{first: k, midway: -1, slug: "exercise-" + num}
		}
		ex.last = k
		out[sec] = ex
	}
	for sec, ex := range out {
		var commands []int
		running := false
		for k := ex.first; k <= ex.last; k++ {
			s := steps[order[k]]
			if s.Commands == nil {
				continue
			}
			if running && s.Check.Wait == nil && ex.midway < 0 {
				ex.midway = k
			}
			running = running || s.Check.Wait != nil
			commands = append(commands, k)
		}
		if ex.midway < 0 && len(commands) > 0 {
			ex.midway = commands[len(commands)/2]
		}
		out[sec] = ex
	}
	return out
}

// Where names a step for a message: the file and line, the step's number
// and its terminal.
func (s Step) Where(path string, n int) string {
	if s.File != "" {
		what := "saved"
		switch s.Edit.Kind {
		case EditFunc:
			what = s.Edit.Func + " replaced"
		case EditImports:
			what = "imports replaced"
		case EditAppend:
			what = "added to"
		}
		return fmt.Sprintf("%s:%d, step %d (%s, %s from the %s terminal)", path, s.Line, n, s.File, what, ordinals[s.Terminal-1])
	}
	if s.Close != nil {
		return fmt.Sprintf("%s:%d, step %d (closing terminals)", path, s.Line, n)
	}
	if s.Commands == nil {
		return fmt.Sprintf("%s:%d, step %d (Ctrl-C)", path, s.Line, n)
	}
	return fmt.Sprintf("%s:%d, step %d (the %s terminal)", path, s.Line, n, ordinals[s.Terminal-1])
}

func isComment(line string) bool {
	_, ok := docs.Comment(line)
	return ok
}
