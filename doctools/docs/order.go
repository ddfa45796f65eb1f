package docs

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"example.com/k8s-demo/e2e/cluster"
)

// Page is one page of the reading order.
type Page struct {
	Name      string // "README" (the home page), "concepts", ...
	LinkTitle string // the index's link text, numbered as the index numbers it
}

// ReadingOrder reads an index page's table rows' links to other pages of
// docs/, in order: the chapters' table, then the look-up table. A row that starts
// with a number ("| 1 | [Concepts](concepts.md) |") numbers its page.
func ReadingOrder(root, index string) ([]Page, error) {
	d, err := ReadDoc(filepath.Join(root, index))
	if err != nil {
		return nil, err
	}
	rowNumber := regexp.MustCompile(`^\|\s*(\d+)\s*\|`)
	pages := []Page{{Name: "README"}}
	seen := map[string]bool{"README": true}
	for _, l := range d.Links() {
		// The tables' rows, not the prose around them.
		if !strings.HasPrefix(d.Lines[l.Line-1], "|") {
			continue
		}
		target := RepoPath(index, l.Dest)
		name, ok := PageName(target)
		if !ok || seen[name] {
			continue
		}
		seen[name] = true
		title := strings.Trim(l.Text, "`")
		if m := rowNumber.FindStringSubmatch(d.Lines[l.Line-1]); m != nil {
			title = m[1] + ". " + title
		}
		pages = append(pages, Page{Name: name, LinkTitle: title})
	}
	// Pages the index does not link come last, in name order.
	all, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	sort.Strings(all)
	for _, f := range all {
		name := strings.TrimSuffix(filepath.Base(f), ".md")
		if !seen[name] {
			seen[name] = true
			pages = append(pages, Page{Name: name})
		}
	}
	return pages, nil
}

// RepoPath resolves a link's destination (without its fragment), written in
// the file at repository path from, to a repository path ("" for a link
// with a scheme, or one that leaves the repository).
func RepoPath(from, dest string) string {
	target, _, _ := strings.Cut(dest, "#")
	if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
		return ""
	}
	if target == "" {
		return from
	}
	p := path.Clean(path.Join(path.Dir(from), target))
	if p == ".." || strings.HasPrefix(p, "../") {
		return ""
	}
	return p
}

// PageName says whether a repository path is a page of the site: docs/X.md
// or its twin docs/zh/X.md (docs/README.md is the home page, "README").
func PageName(p string) (string, bool) {
	dir, file := path.Split(p)
	if (dir != "docs/" && dir != "docs/zh/") || !strings.HasSuffix(file, ".md") {
		return "", false
	}
	return strings.TrimSuffix(file, ".md"), true
}

// Root is the repository root a command works on: the one its -root flag
// gives, or else the one the working directory is in.
func Root(flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return cluster.FindRoot(wd)
}
