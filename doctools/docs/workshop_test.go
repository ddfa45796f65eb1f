package docs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestWorkshopAgenda: the repository's agenda adds up; a copy of it with a
// slot cut short, a buffer gone or a slot that presents nothing an exercise
// builds on fails, naming the row and the figures.
func TestWorkshopAgenda(t *testing.T) {
	root := repoRoot(t)
	if problems, err := CheckWorkshop(root); err != nil || len(problems) > 0 {
		t.Fatalf("the repository's workshop: %v\n%s", err, strings.Join(problems, "\n"))
	}
	page, err := os.ReadFile(filepath.Join(root, "docs", "workshop.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, old, new, want string }{
		{"concepts cut to 5 minutes",
			"| 0:10 | 20 | Concepts |", "| 0:10 | 5 | Concepts |",
			`"Concepts" has 5 minutes for sections of`},
		{"the buffer gone",
			"| 3:30 | 20 | Buffer:", "| 3:30 | 20 | Questions:",
			`no "Buffer" slot`},
		{"versions not presented",
			"[hub and spokes](versions.md#hub-and-spokes-and-the-lossless-rule), [the same with kubebuilder-demo](versions.md#step-7-the-same-with-kubebuilder-demo)", "nothing",
			"exercise 1 builds on versions.md, which no slot before the exercises presents"},
		{"the exercises cut to 5 minutes",
			"| 2:15 | 60 | Exercises", "| 2:15 | 5 | Exercises",
			`"Exercises, in pairs: 1, then one of 2, 3 or 4" has 5 minutes`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(string(page), c.old) {
				t.Fatalf("docs/workshop.md no longer has %q", c.old)
			}
			tmp := t.TempDir()
			if out, err := exec.Command("cp", "-R", filepath.Join(root, "docs"), tmp).CombinedOutput(); err != nil {
				t.Fatalf("cp: %v\n%s", err, out)
			}
			if err := os.WriteFile(filepath.Join(tmp, "docs", "workshop.md"), []byte(strings.Replace(string(page), c.old, c.new, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			problems, err := CheckWorkshop(tmp)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, p := range problems {
				found = found || strings.Contains(p, c.want)
			}
			if !found {
				t.Errorf("no problem says %q; got:\n%s", c.want, strings.Join(problems, "\n"))
			}
		})
	}
}
