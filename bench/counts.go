// The counts of docs/comparison.md: what each CustomPod implementation costs
// in code (lines written, scaffolded and generated, files, dependencies) and
// in its binary (modules linked, size). `bench -counts` writes the table,
// between its compare:begin and compare:end markers (scripts/compare.sh);
// `bench -counts -check` counts again and fails when a row of the table says
// otherwise (make verify). Neither needs a cluster: start-up and memory are
// measured by the bench's runs.
package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"example.com/k8s-demo/e2e/impls"
	"example.com/k8s-demo/e2e/process"
)

// sourceImpl is one implementation of CustomPod and the files that make it,
// as the counts see it.
type sourceImpl struct {
	*impls.Impl
	// include says whether a file (relative to Dir) belongs to CustomPod.
	include func(path string) bool
	// edit lists the files a developer writes or edits (the rest of the
	// non-generated files are scaffolding, kept as the CLI wrote it).
	edit []string
}

var sourceImpls = []sourceImpl{
	{
		Impl: &impls.ClientGo,
		include: func(p string) bool {
			switch {
			case strings.HasPrefix(p, "pkg/apis/zhhnzw/"), strings.HasPrefix(p, "pkg/custompod/"),
				strings.HasPrefix(p, "cmd/custompod-controller/"), strings.HasPrefix(p, "internal/kubeconfig/"),
				strings.HasPrefix(p, "internal/leader/"),
				p == "crd/custompod.yaml", p == "config/rbac/custompod-controller.yaml", p == "example/example-custompod.yaml",
				strings.HasPrefix(p, "hack/"), p == "go.mod", p == "Makefile":
				return true
			case strings.HasPrefix(p, "pkg/client/"):
				return !strings.Contains(p, "samplecrd")
			}
			return false
		},
		edit: nil, // every non-generated file is written by hand
	},
	{
		Impl:    &impls.Kubebuilder,
		include: func(p string) bool { return true },
		edit:    []string{"api/v1/custompod_types.go", "internal/controller/custompod_controller.go", "internal/controller/pod_cache.go", "internal/controller/pod_events.go", "internal/controller/pod_names.go", "internal/controller/pod_template.go", "internal/controller/pod_writes.go", "internal/controller/events.go", "internal/controller/status.go", "internal/metricsauth/metricsauth.go", "cmd/main.go", "config/samples/zhhnzw_v1_custompod.yaml"},
	},
	{
		Impl: &impls.OperatorSDK,
		include: func(p string) bool {
			// "webhook": the Vpc's webhook, its configuration and its
			// certificates (internal/webhook, config/webhook, hack/localwebhook,
			// config/default's webhook patches): none is CustomPod's.
			for _, other := range []string{"podset", "vpc", "podbuggertool", "/apps/", "/network/", "/debug/", "apps_", "network_", "debug_", "apps.mock.com", "network.mock.com", "debug.mock.com", "hack/bundle/", "webhook"} {
				if strings.Contains(p, other) {
					return false
				}
			}
			return true
		},
		edit: []string{"api/zhhnzw/v1/custompod_types.go", "internal/controller/zhhnzw/custompod_controller.go", "internal/controller/zhhnzw/pod_cache.go", "internal/controller/zhhnzw/pod_events.go", "internal/controller/zhhnzw/pod_names.go", "internal/controller/zhhnzw/pod_template.go", "internal/controller/zhhnzw/pod_writes.go", "internal/controller/zhhnzw/events.go", "internal/controller/zhhnzw/status.go", "internal/metricsauth/metricsauth.go", "cmd/main.go", "config/samples/zhhnzw_v1_custompod.yaml"},
	},
}

// counts is what was counted of one implementation.
type counts struct {
	goEdit, goScaffold, goGen, yamlHand, yamlGen, otherLines int
	files, testFiles                                         int
	direct, linked                                           int
	binSize                                                  int64
}

// writeCounts counts each implementation, builds its binary (for the
// modules linked into it and its size) and writes the table into each of
// docs, between its compare:begin and compare:end markers, or prints it.
func writeCounts(root string, docs []string, stdout bool) error {
	tmp, err := os.MkdirTemp("", "counts-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var builds process.Builds
	results := make([]counts, len(sourceImpls))
	for i, im := range sourceImpls {
		fmt.Fprintf(os.Stderr, "bench: counting %s (%s)\n", im.Name, im.Dir)
		r := &results[i]
		dir := filepath.Join(root, im.Dir)
		if err := count(dir, im, r); err != nil {
			return err
		}
		binary, err := builds.Build(dir, im.Pkg, filepath.Join(tmp, im.Name), nil)
		if err != nil {
			return err
		}
		st, err := os.Stat(binary)
		if err != nil {
			return err
		}
		r.binSize = st.Size()
		out, err := goCmd(dir, "version", "-m", binary)
		if err != nil {
			return err
		}
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) > 0 && f[0] == "dep" {
				r.linked++
			}
		}
	}
	if stdout {
		fmt.Print(renderCounts(root, results, false))
		return nil
	}
	// Every page's table is made before any page is written: the first page
	// written would leave the tree, and so the next page's commit, "-dirty".
	tables := make([]string, len(docs))
	for i, doc := range docs {
		tables[i] = renderCounts(root, results, chinese(doc))
	}
	for i, doc := range docs {
		table := tables[i]
		path := filepath.Join(root, doc)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		const begin, end = "<!-- compare:begin -->", "<!-- compare:end -->"
		s := string(b)
		i, j := strings.Index(s, begin), strings.Index(s, end)
		if i < 0 || j < i {
			return fmt.Errorf("%s has no %s ... %s markers", path, begin, end)
		}
		s = s[:i+len(begin)] + "\n" + table + s[j:]
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "bench: wrote the counts into %s\n", path)
	}
	return nil
}

var generatedRe = regexp.MustCompile(`(?m)^// Code generated .* DO NOT EDIT\.$`)

// countFiles counts the implementation's files and their non-blank lines.
func countFiles(dir string, im sourceImpl, r *counts) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() {
			if rel == "bin" || rel == "dist" || strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		// Docs are not what an approach costs in code: a README is left out.
		if strings.HasPrefix(d.Name(), ".") || strings.HasSuffix(rel, ".out") || strings.HasSuffix(rel, ".md") ||
			rel == "go.sum" || !im.include(rel) {
			return nil
		}
		// Tests (and the e2e scaffolding) are counted apart.
		if strings.HasSuffix(rel, "_test.go") || strings.HasPrefix(rel, "test/") {
			r.testFiles++
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n := 0
		for _, l := range strings.Split(string(b), "\n") {
			if strings.TrimSpace(l) != "" {
				n++
			}
		}
		r.files++
		generated := generatedRe.Match(b) || strings.HasPrefix(rel, "config/crd/bases/") || rel == "config/rbac/role.yaml" ||
			strings.HasPrefix(rel, "bundle/")
		switch ext := filepath.Ext(rel); {
		case ext == ".go" && generated:
			r.goGen += n
		case ext == ".go" && (im.edit == nil || slices.Contains(im.edit, rel)):
			r.goEdit += n
		case ext == ".go":
			r.goScaffold += n
		case (ext == ".yaml" || ext == ".yml") && generated:
			r.yamlGen += n
		case ext == ".yaml" || ext == ".yml":
			r.yamlHand += n
		default:
			r.otherLines += n
		}
		return nil
	})
}

func renderCounts(root string, rs []counts, zh bool) string {
	var b strings.Builder
	row := func(label string, f func(r counts) string) {
		fmt.Fprintf(&b, "| %s |", label)
		for _, r := range rs {
			fmt.Fprintf(&b, " %s |", f(r))
		}
		b.WriteString("\n")
	}
	b.WriteString("|")
	for _, im := range sourceImpls {
		fmt.Fprintf(&b, " | %s (%s)", im.Name, im.Dir)
	}
	b.WriteString(" |\n|---|" + strings.Repeat("--:|", len(sourceImpls)) + "\n")
	for _, c := range counted {
		row(pick(zh, c.label, c.zh), c.cell)
	}
	row(pick(zh, "Modules linked into the binary", "链接进二进制文件的模块数"), func(r counts) string { return strconv.Itoa(r.linked) })
	row(pick(zh, "Binary size", "二进制文件大小"), func(r counts) string { return fmt.Sprintf("%.1f MB", float64(r.binSize)/1e6) })
	if same, err := sameCode(root, zh); err == nil {
		b.WriteString("\n" + same + "\n")
	} else {
		fmt.Fprintf(&b, "\n(comparing the scaffolds' controllers: %v)\n", err)
	}
	goVersion, _ := exec.Command("go", "env", "GOVERSION").Output()
	// The commit the figures belong to; "-dirty" if the tree had changes.
	commit, err := exec.Command("git", "-C", root, "describe", "--always", "--dirty", "--abbrev=7").Output()
	if err != nil {
		commit = []byte("unknown")
	}
	c, day, v := strings.TrimSpace(string(commit)), time.Now().UTC().Format("2006-01-02"), strings.TrimSpace(string(goVersion))
	if zh {
		fmt.Fprintf(&b, "\n由 `scripts/compare.sh` 于 %s 在提交 %s 上统计（%s，%s/%s）。\n", day, c, v, runtime.GOOS, runtime.GOARCH)
	} else {
		fmt.Fprintf(&b, "\nCounted at commit %s on %s by `scripts/compare.sh` (%s, %s/%s).\n", c, day, v, runtime.GOOS, runtime.GOARCH)
	}
	return b.String()
}

// pick is en or zh, as the page's language asks.
func pick(zh bool, en, zhText string) string {
	if zh {
		return zhText
	}
	return en
}

func goCmd(dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		return "", fmt.Errorf("go %s in %s: %w\n%s", strings.Join(args, " "), dir, err, msg)
	}
	return string(out), nil
}

// counted are the rows that depend only on the source: -check recounts them.
// Each has its label on the English page and on the Chinese one.
var counted = []struct {
	label, zh string
	cell      func(r counts) string
}{
	{"Go lines you write or edit", "你编写或修改的 Go 代码行数", func(r counts) string { return strconv.Itoa(r.goEdit) }},
	{"Go lines scaffolded, kept as generated", "脚手架生成、原样保留的 Go 代码行数", func(r counts) string { return strconv.Itoa(r.goScaffold) }},
	{"Go lines generated (`DO NOT EDIT`)", "生成的 Go 代码行数（`DO NOT EDIT`）", func(r counts) string { return strconv.Itoa(r.goGen) }},
	{"YAML lines, written or scaffolded", "手写或脚手架生成的 YAML 行数", func(r counts) string { return strconv.Itoa(r.yamlHand) }},
	{"YAML lines generated (CRD, RBAC, bundle)", "生成的 YAML 行数（CRD、RBAC、bundle）", func(r counts) string { return strconv.Itoa(r.yamlGen) }},
	{"Other lines (Makefile, Dockerfile, scripts, …)", "其他行数（Makefile、Dockerfile、脚本等）", func(r counts) string { return strconv.Itoa(r.otherLines) }},
	{"Files (and test files)", "文件数（其中测试文件）", func(r counts) string { return fmt.Sprintf("%d (%d)", r.files, r.testFiles) }},
	{"Direct dependencies in go.mod", "go.mod 中的直接依赖", func(r counts) string { return strconv.Itoa(r.direct) }},
}

// chinese says whether doc, a path from the repository root, is a Chinese
// page: its generated sections are written in Chinese.
func chinese(doc string) bool { return strings.HasPrefix(filepath.ToSlash(doc), "docs/zh/") }

// count fills in r's counted rows for the implementation in dir.
func count(dir string, im sourceImpl, r *counts) error {
	if err := countFiles(dir, im, r); err != nil {
		return err
	}
	out, err := goCmd(dir, "list", "-m", "-f", "{{if not (or .Main .Indirect)}}{{.Path}}{{end}}", "all")
	if err != nil {
		return err
	}
	r.direct = len(strings.Fields(out))
	return nil
}

// checkCounts counts again and compares with the table in doc: the counts
// change with the code, and a table that no longer matches it would mislead.
func checkCounts(root string, docs []string) error {
	results := make([]counts, len(sourceImpls))
	for i, im := range sourceImpls {
		if err := count(filepath.Join(root, im.Dir), im, &results[i]); err != nil {
			return err
		}
	}
	bad := 0
	for _, doc := range docs {
		b, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			return err
		}
		same, err := sameCode(root, chinese(doc))
		if err != nil {
			return err
		}
		bad += checkTable(doc, strings.Split(string(b), "\n"), results, chinese(doc))
		if !slices.Contains(strings.Split(string(b), "\n"), same) {
			bad++
			fmt.Fprintf(os.Stderr, "%s: the counts should say, as cmp does:\n  %s\n", doc, same)
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d of the tables' counted rows no longer match the code: run scripts/compare.sh to count and write the tables again", bad)
	}
	fmt.Printf("bench: the %d counted rows of %s match the code\n", len(counted), strings.Join(docs, " and "))
	return nil
}

// checkTable says which of the counted rows of doc's lines differ from
// results, and returns how many.
func checkTable(doc string, lines []string, results []counts, zh bool) int {
	bad := 0
	for _, c := range counted {
		cells := make([]string, len(results))
		for i, r := range results {
			cells[i] = c.cell(r)
		}
		label := pick(zh, c.label, c.zh)
		want := "| " + label + " | " + strings.Join(cells, " | ") + " |"
		var got string
		for _, l := range lines {
			if strings.HasPrefix(l, "| "+label+" |") {
				got = l
			}
		}
		if got != want {
			bad++
			fmt.Fprintf(os.Stderr, "%s: the table says\n  %s\nthe code counts\n  %s\n", doc, got, want)
		}
	}
	return bad
}
