package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// benchLinkFree are the chapters that state a measurement where they use it
// rather than send the reader into docs/bench.md: a learner on the reading
// order should not have to leave a chapter for a reference page to follow
// it. Comparison is left out: it is the page that reports the figures.
var benchLinkFree = []string{"concepts", "crd-demo", "kubebuilder-demo", "operator-demo", "webhooks", "versions"}

// CheckChapterBenchLinks names each link from those chapters, or their
// Chinese twins, into bench.md.
func CheckChapterBenchLinks(root string) ([]string, error) {
	var problems []string
	for _, name := range benchLinkFree {
		for _, rel := range []string{"docs/" + name + ".md", "docs/zh/" + name + ".md"} {
			if _, err := os.Stat(filepath.Join(root, rel)); err != nil {
				continue
			}
			d, err := ReadDoc(filepath.Join(root, rel))
			if err != nil {
				return nil, err
			}
			for _, l := range d.Links() {
				target, _, _ := strings.Cut(RepoPath(rel, l.Dest), "#")
				if target == "docs/bench.md" {
					problems = append(problems, fmt.Sprintf("%s:%d: a link into bench.md (%s): say its conclusion here, in a sentence with its figure; the chapters do not send a learner to the reference page", rel, l.Line, l.Dest))
				}
			}
		}
	}
	return problems, nil
}
