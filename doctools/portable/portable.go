// Package portable finds shell code that works on Linux but not on a Mac.
// macOS runs /usr/bin/env bash as bash 3.2, has BSD sed, grep, date and
// readlink, and gives a new terminal zsh. So:
//
//   - Scripts (what make runs) may use nothing newer than bash 3.2.
//   - Scripts meant to run on macOS, and the shell blocks the docs ask a
//     reader to type, may use no GNU-only option of the common tools.
//   - Typed blocks must also mean the same in zsh: no unquoted ? or [ (zsh
//     aborts with "no matches found" where bash passes the word on), and no
//     comments (interactive zsh has them off, and passes "#" and the words
//     after it to the command).
//
// It reads the code with mvdan.cc/sh's parser, so a quoted '?' or a "#"
// inside a string is not mistaken for one.
package portable

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Finding is one thing that would break, at a line of a file.
type Finding struct {
	File string
	Line int
	What string
}

func (f Finding) String() string { return fmt.Sprintf("%s:%d: %s", f.File, f.Line, f.What) }

// Checks say which rules apply to a piece of shell code.
type Checks struct {
	// GNU reports GNU-only options of sed, grep, date, readlink and the
	// like, and commands macOS does not have.
	GNU bool
	// Typed reports what zsh, typed into interactively, reads differently
	// from bash: unquoted glob characters and comments.
	Typed bool
}

// Check parses src as bash and reports what bash 3.2 lacks, plus what c
// asks for. firstLine is the line of file that src's first line is on.
func Check(file string, firstLine int, src string, c Checks) ([]Finding, error) {
	p := syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(true))
	f, err := p.Parse(strings.NewReader(src), file)
	if err != nil {
		return nil, fmt.Errorf("%s:%d: parsing as bash: %v", file, firstLine, err)
	}
	var out []Finding
	add := func(n syntax.Node, format string, args ...any) {
		out = append(out, Finding{file, firstLine + int(n.Pos().Line()) - 1, fmt.Sprintf(format, args...)})
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.DeclClause:
			checkDecl(n, add)
		case *syntax.CallExpr:
			checkBash4Call(n, add)
			if c.GNU {
				checkGNU(n, add)
			}
			if c.Typed {
				for _, w := range n.Args {
					checkGlob(w, add)
				}
			}
		case *syntax.ParamExp:
			checkParam(n, add)
		case *syntax.BinaryCmd:
			if n.Op == syntax.PipeAll {
				add(n, "|& needs bash 4 (macOS has 3.2): write 2>&1 |")
			}
		case *syntax.Redirect:
			if n.Op == syntax.AppAll {
				add(n, "&>> needs bash 4 (macOS has 3.2): write >>FILE 2>&1")
			}
		case *syntax.CoprocClause:
			add(n, "coproc needs bash 4 (macOS has 3.2)")
		case *syntax.CaseItem:
			if n.Op == syntax.Fallthrough || n.Op == syntax.Resume {
				add(n, "%s in a case needs bash 4 (macOS has 3.2)", n.Op)
			}
		case *syntax.Comment:
			if c.Typed {
				add(n, "a comment in a block to type: zsh, interactively, passes \"#\" and what follows to the command; say it in the text instead")
			}
		}
		return true
	})
	return out, nil
}

type adder func(n syntax.Node, format string, args ...any)

// checkDecl: declare -A (associative arrays), -n (namerefs), -g (globals
// from a function), -l/-u (case conversion) all came with bash 4.
func checkDecl(d *syntax.DeclClause, add adder) {
	for _, a := range d.Args {
		if !a.Naked || a.Value == nil {
			continue
		}
		flag := a.Value.Lit()
		if !strings.HasPrefix(flag, "-") {
			continue
		}
		for _, c := range flag[1:] {
			switch c {
			case 'A':
				add(d, "%s -A (an associative array) needs bash 4 (macOS has 3.2): use an indexed array or one variable a key", d.Variant.Value)
			case 'n':
				add(d, "%s -n (a nameref) needs bash 4.3 (macOS has 3.2)", d.Variant.Value)
			case 'g':
				add(d, "%s -g needs bash 4.2 (macOS has 3.2)", d.Variant.Value)
			case 'l', 'u':
				add(d, "%s -%c needs bash 4 (macOS has 3.2): use tr", d.Variant.Value, c)
			}
		}
	}
}

func callName(c *syntax.CallExpr) (string, []string) {
	if len(c.Args) == 0 {
		return "", nil
	}
	args := make([]string, len(c.Args)-1)
	for i, w := range c.Args[1:] {
		args[i] = literal(w)
	}
	return c.Args[0].Lit(), args
}

// literal is a word's text with its quotes taken off where they hold only
// literal text, so that 's/a/b/' and s/a/b/ read alike; "" where it expands
// anything.
func literal(w *syntax.Word) string {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return b.String()
				}
				b.WriteString(l.Value)
			}
		default:
			return b.String()
		}
	}
	return b.String()
}

func checkBash4Call(c *syntax.CallExpr, add adder) {
	name, args := callName(c)
	switch name {
	case "mapfile", "readarray":
		add(c, "%s needs bash 4 (macOS has 3.2): use a while read loop", name)
	case "wait":
		if hasFlag(args, 'n') {
			add(c, "wait -n needs bash 4.3 (macOS has 3.2)")
		}
	case "shopt":
		for _, a := range args {
			switch a {
			case "globstar", "lastpipe", "autocd", "checkjobs", "direxpand", "globasciiranges", "inherit_errexit", "localvar_inherit":
				add(c, "shopt %s needs bash 4 or later (macOS has 3.2)", a)
			}
		}
	}
}

// hasFlag: whether one of args is a short option cluster holding f
// (-n, -ni), before a "--".
func hasFlag(args []string, f rune) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsRune(a[1:], f) {
			return true
		}
	}
	return false
}

func checkParam(p *syntax.ParamExp, add adder) {
	if p.Exp != nil {
		switch p.Exp.Op {
		case syntax.UpperFirst, syntax.UpperAll, syntax.LowerFirst, syntax.LowerAll:
			add(p, "${x%s} (case conversion) needs bash 4 (macOS has 3.2): use tr", p.Exp.Op)
		case syntax.OtherParamOps:
			add(p, "${x@...} needs bash 4.4 (macOS has 3.2)")
		}
	}
	if u, ok := p.Index.(*syntax.UnaryArithm); ok && u.Op == syntax.Minus && !u.Post {
		add(p, "a negative array index needs bash 4.3 (macOS has 3.2): write ${a[${#a[@]}-1]}")
	}
	if p.Slice != nil {
		if u, ok := p.Slice.Length.(*syntax.UnaryArithm); ok && u.Op == syntax.Minus {
			add(p, "a negative substring length needs bash 4.2 (macOS has 3.2)")
		}
	}
	if p.Param != nil {
		switch p.Param.Value {
		case "BASHPID", "EPOCHSECONDS", "EPOCHREALTIME", "BASH_ARGV0":
			add(p, "$%s needs bash 4 or later (macOS has 3.2)", p.Param.Value)
		}
	}
}

// checkGNU: options BSD's tools lack, and GNU tools macOS does not ship.
func checkGNU(c *syntax.CallExpr, add adder) {
	name, args := callName(c)
	switch name {
	case "sed":
		for i, a := range args {
			if a == "-i" || a == "--in-place" || (len(a) > 2 && a[0] == '-' && a[1] != '-' && strings.HasSuffix(a, "i")) {
				add(c, "sed %s with no backup suffix is GNU-only (BSD sed takes the next word as the suffix): write sed -i.bak ... && rm FILE.bak, or a temporary file", a)
			}
			if a == "-r" || a == "--regexp-extended" {
				add(c, "sed %s is GNU-only: write sed -E", a)
			}
			if strings.HasPrefix(a, "0,/") || strings.Contains(a, "\n0,/") {
				add(c, "sed's 0,/re/ address is GNU-only: use awk, e.g. awk '!done && /re/ { done = 1; next } 1'")
			}
			if (i > 0 && args[i-1] == "-e") || !strings.HasPrefix(a, "-") {
				for _, esc := range []string{`\s`, `\x`, `\|`, `\+`} {
					if strings.Contains(a, esc) {
						add(c, "%s in a sed expression is GNU-only: write [[:space:]], a literal character, or sed -E with |/+", esc)
					}
				}
			}
		}
	case "grep":
		if hasFlag(args, 'P') || contains(args, "--perl-regexp") {
			add(c, "grep -P is GNU-only: write grep -E")
		}
	case "date":
		if hasFlag(args, 'd') || hasPrefix(args, "--date") {
			add(c, "date -d is GNU-only (BSD date -d sets the DST flag)")
		}
	case "readlink":
		if hasFlag(args, 'f') || hasFlag(args, 'e') || hasFlag(args, 'm') {
			add(c, "readlink -f is GNU-only (macOS before 12.3 lacks it): write $(cd DIR && pwd) or realpath")
		}
	case "stat":
		if hasFlag(args, 'c') || hasPrefix(args, "--format") {
			add(c, "stat -c is GNU-only (BSD stat takes -f)")
		}
	case "find":
		if contains(args, "-printf") {
			add(c, "find -printf is GNU-only")
		}
	case "xargs":
		if hasFlag(args, 'r') || contains(args, "--no-run-if-empty") {
			add(c, "xargs -r is GNU-only")
		}
	case "timeout", "nproc", "tac", "sha256sum", "md5sum":
		add(c, "%s is not on macOS", name)
	}
}

func contains(args []string, s string) bool {
	for _, a := range args {
		if a == s {
			return true
		}
	}
	return false
}

func hasPrefix(args []string, p string) bool {
	for _, a := range args {
		if strings.HasPrefix(a, p) {
			return true
		}
	}
	return false
}

// checkGlob: an unquoted ? or [ that bash passes on when it matches no
// file, and zsh refuses ("no matches found"). The test command's [ and ]
// are not globs.
func checkGlob(w *syntax.Word, add adder) {
	for _, p := range w.Parts {
		l, ok := p.(*syntax.Lit)
		if !ok || l.Value == "[" || l.Value == "]" || l.Value == "[[" || l.Value == "]]" {
			continue
		}
		if strings.ContainsAny(l.Value, "?[") {
			add(l, "%q: an unquoted ? or [ is a glob; with no file to match, zsh stops with \"no matches found\": quote the word", l.Value)
		}
	}
}
