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

// TestWorkshopZhAgenda: the Chinese agenda's minutes come from the Chinese
// sections' own reading time, at CharsPerMinute: a slot that presents more
// Chinese than its minutes allow fails, and so does one that does not
// follow the slot before it.
func TestWorkshopZhAgenda(t *testing.T) {
	tmp := t.TempDir()
	if err := os.MkdirAll(filepath.Join(tmp, "docs", "zh"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Its heading's 2 Han characters, 600 more and 100 Latin words: 702
	// units, 3 minutes' reading.
	chapter := "# 章\n\n## 一节\n\n" + strings.Repeat("控制器", 200) + strings.Repeat(" kubectl", 100) + "\n"
	if err := os.WriteFile(filepath.Join(tmp, "docs", "zh", "c.md"), []byte(chapter), 0o644); err != nil {
		t.Fatal(err)
	}
	check := func(minutes, second, rest string) []string {
		md := "# 工作坊\n\n## 日程（1 小时）\n\n| 开始 | 分钟 | 环节 | 讲解内容 | 检查点 |\n|---|---|---|---|---|\n" +
			"| 0:00 | " + minutes + " | 讲解 | [一节](c.md#一节) | |\n" +
			"| " + second + " | " + rest + " | 其余 | | |\n"
		if err := os.WriteFile(filepath.Join(tmp, "docs", "zh", "workshop.md"), []byte(md), 0o644); err != nil {
			t.Fatal(err)
		}
		problems, err := CheckWorkshopZh(tmp)
		if err != nil {
			t.Fatal(err)
		}
		return problems
	}
	if p := check("6", "0:06", "54"); len(p) != 0 {
		t.Errorf("6 minutes for 3 minutes' reading, 60 in all: %q", p)
	}
	if p := check("5", "0:05", "55"); len(p) != 1 || !strings.Contains(p[0], `"讲解" has 5 minutes for Chinese sections of 702 characters (3 minutes' reading at 250 a minute): it needs at least 6`) {
		t.Errorf("5 minutes for 3 minutes' reading: %q", p)
	}
	if p := check("6", "0:07", "53"); len(p) != 1 || !strings.Contains(p[0], "starts at 0:07; the slots before it end at 0:06") {
		t.Errorf("a gap between slots: %q", p)
	}
}
