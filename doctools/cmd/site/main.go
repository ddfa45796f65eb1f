// Command site turns the tutorial's markdown (docs/, docs/zh/) into the
// content of a Hugo site (site/, `make docs`), and serves the built site
// (`make docs-serve`). The markdown stays as GitHub shows it; this adds what
// a site needs and GitHub must not see:
//
//   - front matter: the title (the page's "# " heading, which the theme
//     shows), the sidebar's short title and place, and prev / next, all in
//     the reading order of docs/README.md's tables (docs/zh/README.md's for
//     Chinese);
//
//   - links: a link to another page of the tutorial goes to that page on the
//     site; a link to any other file of the repository (source code, a
//     Makefile, a module's README) goes to a copy of that file under
//     /source/, served with the site, as is each page's own source (the
//     theme's "edit this page" link): the built site needs nothing outside
//     the machine;
//
//   - in Chinese, each English page that has no Chinese twin yet, with a
//     note saying so, so that the reading order has no gaps.
//
//     site -root DIR -out DIR      write DIR/content/{en,zh} and DIR/static
//     site -serve DIR -addr ADDR   serve the built site (public/) on ADDR
package main

import (
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"example.com/k8s-demo/doctools/docs"
)

func main() {
	root := flag.String("root", "", "the repository root (default: found from the working directory)")
	out := flag.String("out", "", "where to write the site's content/ and static/")
	serve := flag.String("serve", "", "serve this directory (the built site) instead")
	addr := flag.String("addr", "127.0.0.1:1313", "with -serve: the address to listen on")
	flag.Parse()
	if *serve != "" {
		fmt.Printf("serving %s on http://%s/ (English) and http://%s/zh/ (中文); Ctrl-C stops it\n", *serve, *addr, *addr)
		if err := http.ListenAndServe(*addr, http.FileServer(http.Dir(*serve))); err != nil {
			fail(err)
		}
		return
	}
	if *out == "" {
		fail(errors.New("-out is required"))
	}
	r, err := docs.Root(*root)
	if err != nil {
		fail(err)
	}
	*root = r
	s, err := Build(*root, *out)
	if err != nil {
		fail(err)
	}
	fmt.Printf("site: %d English and %d Chinese pages (%d not yet translated), %d source files, in %s\n",
		s.pages["en"], s.pages["zh"], s.untranslated, s.sources, *out)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "site:", err)
	os.Exit(1)
}

// Languages: the site's English pages are at /, the Chinese at /zh/.
var languages = []struct{ lang, prefix, index string }{
	{"en", "/", "docs/README.md"},
	{"zh", "/zh/", "docs/zh/README.md"},
}

// url is a page's path on the site.
func url(prefix, name string) string {
	if name == "README" {
		return prefix
	}
	return prefix + name + "/"
}

type stats struct {
	pages                 map[string]int
	untranslated, sources int
}

// Build writes the site's content and static files under out.
func Build(root, out string) (*stats, error) {
	for _, d := range []string{"content", "static"} {
		if err := os.RemoveAll(filepath.Join(out, d)); err != nil {
			return nil, err
		}
	}
	s := &stats{pages: map[string]int{}}
	sources := map[string]bool{}
	for _, l := range languages {
		order, err := docs.ReadingOrder(root, l.index)
		if err != nil {
			return nil, err
		}
		for i, p := range order {
			src := "docs/" + p.Name + ".md"
			translated := true
			if l.lang == "zh" {
				zh := "docs/zh/" + p.Name + ".md"
				if _, err := os.Stat(filepath.Join(root, zh)); err == nil {
					src = zh
				} else {
					translated = false
					s.untranslated++
				}
			}
			text, err := os.ReadFile(filepath.Join(root, src))
			if err != nil {
				return nil, err
			}
			// The theme looks prev and next up in the page's own language:
			// their paths are the same in both.
			var prev, next string
			if i > 0 {
				prev = url("/", order[i-1].Name)
			}
			if i+1 < len(order) {
				next = url("/", order[i+1].Name)
			}
			body, refs, err := convert(root, src, string(text), l.prefix, translated)
			if err != nil {
				return nil, err
			}
			for _, r := range refs {
				sources[r] = true
			}
			sources[src] = true
			fm := frontMatter(title(string(text)), p.LinkTitle, i+1, prev, next, sourceURL(root, src))
			name := p.Name + ".md"
			if p.Name == "README" {
				name = "_index.md"
			}
			if err := write(filepath.Join(out, "content", l.lang, name), fm+body); err != nil {
				return nil, err
			}
			s.pages[l.lang]++
		}
	}
	for src := range sources {
		if err := copySource(root, out, src); err != nil {
			return nil, err
		}
		s.sources++
	}
	return s, nil
}

var h1Re = regexp.MustCompile(`^#\s+(.*)$`)

// title is the text of a page's first "# " heading, without markup.
func title(text string) string {
	for _, line := range strings.Split(text, "\n") {
		if m := h1Re.FindStringSubmatch(line); m != nil {
			return strings.ReplaceAll(m[1], "`", "")
		}
	}
	return ""
}

func frontMatter(title, linkTitle string, weight int, prev, next, edit string) string {
	q := func(s string) string { return fmt.Sprintf("%q", s) }
	var b strings.Builder
	b.WriteString("---\n")
	fmt.Fprintf(&b, "title: %s\n", q(title))
	if linkTitle != "" {
		fmt.Fprintf(&b, "linkTitle: %s\n", q(linkTitle))
	}
	fmt.Fprintf(&b, "weight: %d\n", weight)
	// false, not "": the theme would fall back to the page's neighbours.
	for _, kv := range [][2]string{{"prev", prev}, {"next", next}} {
		if kv[1] == "" {
			fmt.Fprintf(&b, "%s: false\n", kv[0])
		} else {
			fmt.Fprintf(&b, "%s: %s\n", kv[0], q(kv[1]))
		}
	}
	fmt.Fprintf(&b, "editURL: %s\n", q(edit))
	b.WriteString("---\n")
	return b.String()
}

var (
	linkRe       = regexp.MustCompile(`(!?)\[([^\[\]]*)\]\(([^()\s]+)\)`)
	inlineCodeRe = regexp.MustCompile("`[^`]*`")
	// The line under a page's title that links to its twin: the site has
	// a language switch instead.
	switchRe = regexp.MustCompile(`^\[(English|中文)\]\([^()]+\)$`)
)

// convert returns a page's body for the site: its "# " title and the
// language line dropped (the theme shows both), and every relative link made
// a link on the site. It returns the repository files the page links to.
func convert(root, src, text, prefix string, translated bool) (string, []string, error) {
	d, err := docs.ParseDoc(src, text)
	if err != nil {
		return "", nil, err
	}
	inBlock := make([]bool, len(d.Lines))
	for _, b := range d.Blocks {
		for i := b.Fence; i <= b.Close; i++ {
			inBlock[i] = true
		}
	}
	var refs []string
	var lines []string
	titleDone := false
	for i, line := range d.Lines {
		if inBlock[i] {
			lines = append(lines, line)
			continue
		}
		if !titleDone && h1Re.MatchString(line) {
			titleDone = true
			continue
		}
		if switchRe.MatchString(strings.TrimSpace(line)) {
			continue
		}
		// Links in `code` are left as they are; the rest are rewritten.
		var b strings.Builder
		last := 0
		for _, span := range inlineCodeRe.FindAllStringIndex(line, -1) {
			b.WriteString(rewriteLinks(root, src, line[last:span[0]], prefix, &refs))
			b.WriteString(line[span[0]:span[1]])
			last = span[1]
		}
		b.WriteString(rewriteLinks(root, src, line[last:], prefix, &refs))
		lines = append(lines, b.String())
	}
	body := strings.Join(lines, "\n")
	if !translated {
		body = "> 本页尚无中文版，以下是英文原文。\n\n" + strings.TrimLeft(body, "\n")
	}
	return body, refs, nil
}

func rewriteLinks(root, src, s, prefix string, refs *[]string) string {
	return linkRe.ReplaceAllStringFunc(s, func(m string) string {
		g := linkRe.FindStringSubmatch(m)
		dest := g[3]
		if strings.HasPrefix(dest, "#") {
			return m
		}
		target := docs.RepoPath(src, dest)
		if target == "" {
			return m
		}
		_, frag, _ := strings.Cut(dest, "#")
		if frag != "" {
			frag = "#" + frag
		}
		var to string
		if name, ok := docs.PageName(target); ok {
			to = pageURL(root, src, name, prefix, frag)
		} else {
			*refs = append(*refs, target)
			to = sourceURL(root, target) + frag
		}
		return fmt.Sprintf("%s[%s](%s)", g[1], g[2], to)
	})
}

// pageURL is where a link to page name goes on the site of prefix. On the
// Chinese site, a link from an English page (one not yet translated) with a
// #fragment goes to the English page, whose headings the fragment names.
func pageURL(root, src, name, prefix, frag string) string {
	english := !strings.HasPrefix(src, "docs/zh/")
	if prefix != "/" && english && frag != "" {
		if _, err := os.Stat(filepath.Join(root, "docs", "zh", name+".md")); err == nil {
			prefix = "/"
		}
	}
	return url(prefix, name) + frag
}

// sourceURL is where a repository file is served: /source/PATH, with .txt
// added to what browsers would not show as text. A directory gets a listing.
func sourceURL(root, p string) string {
	st, err := os.Stat(filepath.Join(root, p))
	switch {
	case err == nil && st.IsDir():
		return "/source/" + p + "/"
	case isImage(p):
		return "/source/" + p
	}
	return "/source/" + p + ".txt"
}

func isImage(p string) bool {
	switch strings.ToLower(path.Ext(p)) {
	case ".png", ".svg", ".jpg", ".jpeg", ".gif":
		return true
	}
	return false
}

// copySource copies a repository file (or lists a directory) under
// static/source/.
func copySource(root, out, p string) error {
	src := filepath.Join(root, p)
	st, err := os.Stat(src)
	if err != nil {
		return err
	}
	dst := filepath.Join(out, "static", strings.TrimPrefix(sourceURL(root, p), "/"))
	if !st.IsDir() {
		b, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		return write(dst, string(b))
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<!doctype html><meta charset=\"utf-8\"><title>%s/</title><h1>%s/</h1><ul>\n", p, p)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") || e.Name() == "bin" {
			continue
		}
		child := p + "/" + e.Name()
		if !e.IsDir() {
			if err := copySource(root, out, child); err != nil {
				return err
			}
		}
		// Subdirectories are named, not copied: only what the pages link.
		href := strings.TrimPrefix(sourceURL(root, child), "/source/"+p+"/")
		if e.IsDir() {
			fmt.Fprintf(&b, "<li>%s/</li>\n", e.Name())
			continue
		}
		fmt.Fprintf(&b, "<li><a href=\"%s\">%s</a></li>\n", href, e.Name())
	}
	b.WriteString("</ul>\n")
	return write(filepath.Join(dst, "index.html"), b.String())
}

func write(p, text string) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(text), 0o644)
}
