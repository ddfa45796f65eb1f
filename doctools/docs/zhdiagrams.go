package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// CheckChineseDiagrams reports each diagram a Chinese page (README.zh.md,
// docs/zh/*.md) embeds that is not a Chinese one: docs/diagrams/NAME.svg
// has a Chinese twin, NAME.zh.svg, rendered from NAME.zh.d2, and that is
// what a Chinese reader is shown.
func CheckChineseDiagrams(root string) ([]string, error) {
	files, _ := filepath.Glob(filepath.Join(root, "docs", "zh", "*.md"))
	files = append([]string{filepath.Join(root, "README.zh.md")}, files...)
	var problems []string
	for _, f := range files {
		d, err := ReadDoc(f)
		if err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(root, f)
		rel = filepath.ToSlash(rel)
		for _, l := range d.Links() {
			target := RepoPath(rel, l.Dest)
			if !l.Image || !strings.HasPrefix(target, "docs/diagrams/") || !strings.HasSuffix(target, ".svg") {
				continue
			}
			if !strings.HasSuffix(target, ".zh.svg") {
				problems = append(problems, fmt.Sprintf("%s:%d: the English diagram %s on a Chinese page: embed %s, its Chinese twin", rel, l.Line, target, strings.TrimSuffix(target, ".svg")+".zh.svg"))
				continue
			}
			if _, err := os.Stat(filepath.Join(root, strings.TrimSuffix(target, ".svg")+".d2")); err != nil {
				problems = append(problems, fmt.Sprintf("%s:%d: %s has no source %s.d2 (make diagrams renders it)", rel, l.Line, target, strings.TrimSuffix(target, ".svg")))
			}
		}
	}
	return problems, nil
}
