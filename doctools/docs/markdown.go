// Package docs keeps the tutorial in docs/ honest. Two conventions tie the
// markdown to the code:
//
// Excerpts. A fenced block directly preceded by an excerpt comment holds a
// copy of part of a source file, which the excerpts command
// (doctools/cmd/excerpts, `scripts/excerpts.sh -check` or `-update`) compares
// with, or rewrites from, the source:
//
//	<!-- excerpt: crd-demo/controller.go from "^func \(c \*Controller\) processNextWorkItem" to "^}" -->
//	<!-- excerpt: e2e/network/gvk_test.go#discovery -->
//	<!-- excerpt: crd-demo/example/example-network.yaml -->
//
// The first form takes the one line that matches the first regular
// expression (it is an error if none or several do) through the first line
// after it that matches the second. The second takes the lines between
// "+docs:begin NAME" and "+docs:end NAME" comments in the source. The third
// takes the whole file. Paths are relative to the repository root.
//
// Blocks a reader types: see doctools/reader, which follows the chapters in real
// terminals.
package docs

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// Block is a fenced code block of a markdown file.
type Block struct {
	// Info is the fence's info string ("sh", "sh runnable dir=x", "go").
	Info string
	// Directive is the HTML comment on the line just before the fence
	// (without "<!--" and "-->"), or "".
	Directive string
	// Fence is the line index (0-based) of the opening fence; the content
	// is lines Fence+1 up to, not including, Close.
	Fence, Close int
	// Content is the block's text, one string per line.
	Content []string
}

// Lang is the first word of the info string.
func (b Block) Lang() string {
	f := strings.Fields(b.Info)
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// Doc is a parsed markdown file.
type Doc struct {
	Path  string
	Lines []string
	// Blocks are the fenced blocks, in order.
	Blocks []Block
}

var (
	fenceRe     = regexp.MustCompile("^(\\s{0,3})(`{3,}|~{3,})(.*)$")
	directiveRe = regexp.MustCompile(`^\s*<!--\s*(.*?)\s*-->\s*$`)
)

// ReadDoc reads and parses a markdown file.
func ReadDoc(path string) (*Doc, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseDoc(path, string(b))
}

// ParseDoc parses markdown text: its fenced blocks and the directives before them.
func ParseDoc(path, text string) (*Doc, error) {
	d := &Doc{Path: path, Lines: strings.Split(text, "\n")}
	for i := 0; i < len(d.Lines); i++ {
		line := d.Lines[i]
		m := fenceRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		fence := m[2]
		b := Block{Info: strings.TrimSpace(m[3]), Fence: i, Close: -1}
		if i > 0 {
			if dm := directiveRe.FindStringSubmatch(d.Lines[i-1]); dm != nil {
				b.Directive = dm[1]
			}
		}
		for j := i + 1; j < len(d.Lines); j++ {
			t := strings.TrimSpace(d.Lines[j])
			if strings.HasPrefix(t, fence[:1]) && strings.Trim(t, fence[:1]) == "" && len(t) >= len(fence) {
				b.Close = j
				break
			}
			b.Content = append(b.Content, d.Lines[j])
		}
		if b.Close < 0 {
			return nil, fmt.Errorf("%s:%d: code block never closed", path, i+1)
		}
		d.Blocks = append(d.Blocks, b)
		i = b.Close
	}
	return d, nil
}

// Comment returns the text of a line that is an HTML comment and nothing
// else (without "<!--" and "-->").
func Comment(line string) (string, bool) {
	m := directiveRe.FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// SplitWords splits on spaces, keeping "double-quoted strings" whole (their
// quotes removed; \" stands for a quote, every other backslash is kept, so
// that regular expressions need no double escaping).
func SplitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord, inQuote := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inQuote && c == '\\' && i+1 < len(s) && s[i+1] == '"':
			cur.WriteByte('"')
			i++
		case c == '"':
			inQuote = !inQuote
			inWord = true
		case !inQuote && (c == ' ' || c == '\t'):
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inQuote {
		return nil, fmt.Errorf("unclosed quote in %q", s)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// unquoteRegexp reads a leading "quoted" regular expression from s, as
// SplitWords does, and returns it and the rest of s.
func unquoteRegexp(s string) (string, string, error) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, `"`) {
		return "", "", fmt.Errorf("expected a double-quoted regular expression at %q", s)
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s) && s[i+1] == '"':
			b.WriteByte('"')
			i++
		case s[i] == '"':
			return b.String(), s[i+1:], nil
		default:
			b.WriteByte(s[i])
		}
	}
	return "", "", fmt.Errorf("unclosed quote in %s", strconv.Quote(s))
}
