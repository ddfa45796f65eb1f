package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"example.com/k8s-demo/doctools/docs"
	"example.com/k8s-demo/e2e/cluster"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := cluster.FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestChineseTwins runs the check `make verify` runs on the repository.
func TestChineseTwins(t *testing.T) {
	errs, err := docs.CheckTwins(repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range errs {
		t.Error(e)
	}
}

func TestLinksResolve(t *testing.T) {
	root := repoRoot(t)
	var files []string
	for _, p := range []string{"README*.md", "*/README.md", "docs/*.md", "docs/zh/*.md"} {
		m, _ := filepath.Glob(filepath.Join(root, p))
		files = append(files, m...)
	}
	problems, err := docs.CheckLinks(root, files)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, text := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

const english = "# Title\n\nRun it:\n\n<!-- check wait=\"ready\" -->\n```sh\nmake run\n```\n\n<!-- bench:begin -->\n| a | 1 |\n<!-- bench:end -->\n<!-- compare:begin -->\n| a | 1 |\n<!-- compare:end -->\n\n```yaml\nkind: Pod\n```\n"

// A twin that falls behind its English page, in each way it can, fails and
// says where and how.
func TestCheckTwinCatchesDrift(t *testing.T) {
	cases := []struct {
		name, chinese string
		want          []string // in the one error
	}{
		{"same", "# 标题\n\n运行：\n\n<!-- check wait=\"ready\" -->\n```sh\nmake run\n```\n\n<!-- bench:begin -->\n| a | 1 |\n<!-- bench:end -->\n<!-- compare:begin -->\n| a | 1 |\n<!-- compare:end -->\n\n```yaml\nkind: Pod\n```\n", nil},
		{"a changed line", "<!-- check wait=\"ready\" -->\n```sh\nmake run-old\n```\n<!-- bench:begin -->\n| a | 1 |\n<!-- bench:end -->\n<!-- compare:begin -->\n| a | 1 |\n<!-- compare:end -->\n```yaml\nkind: Pod\n```\n",
			[]string{"docs/zh/x.md:2: code block 1 (docs/x.md:6 has it)", "- make run-old", "+ make run"}},
		{"a missing block", "<!-- check wait=\"ready\" -->\n```sh\nmake run\n```\n<!-- bench:begin -->\n| a | 1 |\n<!-- bench:end -->\n<!-- compare:begin -->\n| a | 1 |\n<!-- compare:end -->\n",
			[]string{"docs/zh/x.md has 1 code blocks, docs/x.md has 2", "docs/x.md: the next at line 17"}},
		{"the fence's info", "<!-- check wait=\"ready\" -->\n```bash\nmake run\n```\n",
			[]string{`fence info "bash", expected "sh"`}},
		{"the comment before the fence", "```sh\nmake run\n```\n",
			[]string{`the comment before the fence is "", expected "check wait=\"ready\""`}},
		{"a translated generated table", "<!-- check wait=\"ready\" -->\n```sh\nmake run\n```\n<!-- bench:begin -->\n| 甲 | 1 |\n<!-- bench:end -->\n<!-- compare:begin -->\n| a | 1 |\n<!-- compare:end -->\n\n```yaml\nkind: Pod\n```\n",
			[]string{"the region <!-- bench:begin ... <!-- bench:end differs", "- | 甲 | 1 |", "+ | a | 1 |"}},
		// compare's table is written in each page's language.
		{"a table generated in each language", "<!-- check wait=\"ready\" -->\n```sh\nmake run\n```\n<!-- bench:begin -->\n| a | 1 |\n<!-- bench:end -->\n<!-- compare:begin -->\n| 甲 | 1 |\n<!-- compare:end -->\n\n```yaml\nkind: Pod\n```\n", nil},
		{"a generated table left out", "<!-- check wait=\"ready\" -->\n```sh\nmake run\n```\n<!-- bench:begin -->\n| a | 1 |\n<!-- bench:end -->\n\n```yaml\nkind: Pod\n```\n",
			[]string{"the region <!-- compare:begin ... <!-- compare:end is in one of the two pages only"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := writeFiles(t, map[string]string{"docs/x.md": english, "docs/zh/x.md": c.chinese})
			errs := docs.CheckTwin(root, docs.Twin{English: "docs/x.md", Chinese: "docs/zh/x.md"})
			if c.want == nil {
				if len(errs) > 0 {
					t.Fatalf("want no problem, got %v", errs)
				}
				return
			}
			if len(errs) != 1 {
				t.Fatalf("want one problem, got %d: %v", len(errs), errs)
			}
			for _, w := range c.want {
				if !strings.Contains(errs[0].Error(), w) {
					t.Errorf("want %q in:\n%v", w, errs[0])
				}
			}
		})
	}
}

func TestCheckTwinsWantsTheLearnerPath(t *testing.T) {
	root := writeFiles(t, map[string]string{"docs/concepts.md": english, "docs/zh/extra.md": "# 多余\n"})
	errs, err := docs.CheckTwins(root)
	if err != nil {
		t.Fatal(err)
	}
	all := ""
	for _, e := range errs {
		all += e.Error() + "\n"
	}
	for _, w := range []string{
		"docs/zh/extra.md: no English page docs/extra.md",
		"docs/concepts.md is on the learner path but has no Chinese twin docs/zh/concepts.md",
		"README.md is on the learner path but has no Chinese twin README.zh.md",
	} {
		if !strings.Contains(all, w) {
			t.Errorf("want %q in:\n%s", w, all)
		}
	}
}

func TestSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"Step 4: Reconcile":                         "step-4-reconcile",
		"GV, GVK and GVR":                           "gv-gvk-and-gvr",
		"The scaffold's e2e suite: `make test-e2e`": "the-scaffolds-e2e-suite-make-test-e2e",
		"[Lost deletes](x.md): finalizer":           "lost-deletes-finalizer",
		"步骤 3：生成 CRD 和深拷贝":                          "步骤-3生成-crd-和深拷贝",
		"GV、GVK 与 GVR":                              "gvgvk-与-gvr",
		"PodSet（文章 004 的演练）":                        "podset文章-004-的演练",
		"snake_case stays":                          "snake_case-stays",
	} {
		if got := docs.Slug(heading); got != want {
			t.Errorf("docs.Slug(%q) = %q, want %q", heading, got, want)
		}
	}
}

func TestCheckLinksCatchesBrokenOnes(t *testing.T) {
	root := writeFiles(t, map[string]string{
		"docs/a.md": "# A\n\n## Two words\n\n## Two words\n\n" +
			"[ok](b.md#b-heading) [ok](#two-words-1) [ok](../src/main.go) [ok](../src) [web](https://example.com/x.md#nope)\n" +
			"[gone](c.md) [anchor](b.md#nope) ![img](pic.png)\n" +
			"`[in code](nowhere.md)`\n\n```md\n[in a block](nowhere.md)\n```\n",
		"docs/b.md":   "# B\n\n## B heading\n",
		"src/main.go": "package main\n",
	})
	problems, err := docs.CheckLinks(root, []string{filepath.Join(root, "docs/a.md")})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.Error())
	}
	want := []string{
		"docs/a.md:8: (c.md) no such file or directory: docs/c.md",
		"docs/a.md:8: (b.md#nope) no heading in docs/b.md has the anchor #nope",
		"docs/a.md:8: (pic.png) no such file or directory: docs/pic.png",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
