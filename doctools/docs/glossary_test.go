package docs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRejectedRenderings: the repository's Chinese pages pass; a rejected
// rendering put back into a copy of one fails, naming the page, the line,
// the word and the glossary's term; the same word inside one of its
// exceptions, a code block or a link's target does not.
func TestRejectedRenderings(t *testing.T) {
	root := repoRoot(t)
	if problems, err := CheckRejected(root); err != nil || len(problems) > 0 {
		t.Fatalf("the repository's Chinese pages: %v %v", err, problems)
	}

	tmp := t.TempDir()
	write := func(rel, text string) { writeFiles(t, tmp, map[string]string{rel: text}) }
	glossary, err := os.ReadFile(filepath.Join(root, "docs", "glossary.md"))
	if err != nil {
		t.Fatal(err)
	}
	write("docs/glossary.md", string(glossary))
	write("README.zh.md", "# 标题\n")
	write("docs/zh/webhooks.md", strings.Join([]string{
		"# Webhook",
		"有了这些 schema，Apply 配置就能用了。",                   // 2: right
		"有了这些模式，应用配置就能用了。",                            // 3: two rejected words
		"这就是 [Operator 模式](concepts.md#operator-模式)。", // 4: an exception, and a link target
		"```sh",
		"echo 应用配置", // 6: a code block
		"```",
		"Webhook 宕机时，不校验证书的客户端照样连接。",     // 8: 宕机; 校验证书 is an exception for 验证
		"状态按服务器端应用写入；把副本数设为 3，每个副本都有名字。", // 9: right: 副本 about replicas
		"状态按服务端应用写入；复制一份配置，改它的副本。",       // 10: 服务端应用, and 副本 for a copy
	}, "\n"))

	problems, err := CheckRejected(tmp)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`docs/zh/webhooks.md:3: "模式" for "schema (a CRD's OpenAPI schema)"`,
		`docs/zh/webhooks.md:3: "应用配置" for "apply configuration`,
		`docs/zh/webhooks.md:8: "宕机" for "down`,
		`docs/zh/webhooks.md:10: "副本" for "copy`,
		`docs/zh/webhooks.md:10: "服务端应用" for "server-side apply"`,
	}
	if len(problems) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%s", len(problems), len(want), strings.Join(problems, "\n"))
	}
	for _, w := range want {
		found := false
		for _, p := range problems {
			found = found || strings.HasPrefix(p, w)
		}
		if !found {
			t.Errorf("no problem starts with %s; got:\n%s", w, strings.Join(problems, "\n"))
		}
	}
}

// TestEnglishLinks: a Chinese page's link to a page with no Chinese version
// must say （英文）; the language switch and links to Chinese pages need not.
func TestEnglishLinks(t *testing.T) {
	if problems, err := CheckEnglishLinks(repoRoot(t)); err != nil || len(problems) > 0 {
		t.Fatalf("the repository's Chinese pages: %v %v", err, problems)
	}
	tmp := t.TempDir()
	writeFiles(t, tmp, map[string]string{
		"README.zh.md":       "# 标题\n\n见 [CONTRIBUTING.md](CONTRIBUTING.md#ci)。\n",
		"docs/zh/a.md":       "[English](../a.md)\n\n[测量（英文）](../bench.md) 和 [测量](../bench.md#x)（英文），[另一页](b.md)，[健壮性](../robustness.md)。\n",
		"docs/zh/b.md":       "# b\n",
		"docs/a.md":          "# a\n",
		"docs/bench.md":      "# bench\n",
		"docs/robustness.md": "# robustness\n",
	})
	problems, err := CheckEnglishLinks(tmp)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"README.zh.md:3: the link [CONTRIBUTING.md](CONTRIBUTING.md#ci) leads to an English page",
		"docs/zh/a.md:3: the link [健壮性](../robustness.md) leads to an English page",
	}
	if len(problems) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%s", len(problems), len(want), strings.Join(problems, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(problems[i], w) {
			t.Errorf("problem %d: %s\nwant it to start %s", i, problems[i], w)
		}
	}
}
