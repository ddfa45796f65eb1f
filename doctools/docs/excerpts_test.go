package docs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"example.com/k8s-demo/e2e/cluster"
)

// TestExcerptsMatchSources is `scripts/excerpts.sh -check` as a test.
func TestExcerptsMatchSources(t *testing.T) {
	root := repoRoot(t)
	total := 0
	for _, f := range chapters(t, root) {
		n, problems, err := CheckExcerpts(root, f, false)
		if err != nil {
			t.Fatal(err)
		}
		total += n
		for _, p := range problems {
			t.Error(p.Error())
		}
	}
	if total == 0 {
		t.Fatal("no excerpts found in docs/*.md")
	}
	t.Logf("%d excerpts checked", total)
}

// TestExcerptCheckCatchesDrift proves the check: a doc whose excerpt was
// edited, or whose source changed, fails `excerpts -check` with a diff that
// shows the line; `-update` puts the source's text back.
func TestExcerptCheckCatchesDrift(t *testing.T) {
	root := repoRoot(t)
	bin := filepath.Join(t.TempDir(), "excerpts")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/excerpts").CombinedOutput(); err != nil {
		t.Fatalf("go build ../cmd/excerpts: %v\n%s", err, out)
	}
	src := filepath.Join(root, "docs", "crd-demo.md")
	orig, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	d, err := ParseDoc(src, string(orig))
	if err != nil {
		t.Fatal(err)
	}
	blocks, specs, _ := d.Excerpts()
	if len(blocks) == 0 {
		t.Fatal("docs/crd-demo.md has no excerpts")
	}
	// The first line of the first excerpt that occurs only once in its
	// source, so that the same line can be found and changed there.
	b, spec := blocks[0], specs[0]
	code, err := os.ReadFile(filepath.Join(root, spec.Path))
	if err != nil {
		t.Fatal(err)
	}
	line := -1
	for i, l := range b.Content {
		if strings.TrimSpace(l) != "" && strings.Count(string(code), l+"\n") == 1 {
			line = b.Fence + 1 + i
			break
		}
	}
	if line < 0 {
		t.Fatalf("no line of the first excerpt (%s) is unique in its source", spec)
	}
	lines := strings.Split(string(orig), "\n")
	changed := lines[line]
	lines[line] = changed + " // edited in the doc only"

	tmp := t.TempDir()
	doc := filepath.Join(tmp, "crd-demo.md")
	if err := os.WriteFile(doc, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, error) {
		cmd := exec.Command(bin, append([]string{"-root", root}, args...)...)
		out, err := cmd.CombinedOutput()
		t.Logf("$ excerpts %s\n%s", strings.Join(args, " "), out)
		return string(out), err
	}

	// 1. The edited block fails the check, and the diff shows both versions.
	out, err := run("-check", doc)
	if code := exitCode(err); code != 1 {
		t.Fatalf("excerpts -check on an edited excerpt: exit code %d, want 1", code)
	}
	for _, want := range []string{"- " + changed + " // edited in the doc only", "+ " + changed, spec.String()} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q", want)
		}
	}

	// 2. -update restores the source's text; the file is the original again.
	if _, err := run("-update", doc); err != nil {
		t.Fatalf("excerpts -update: %v", err)
	}
	if got, _ := os.ReadFile(doc); string(got) != string(orig) {
		t.Fatalf("after -update the doc is not the original:\n%s", Diff(strings.Split(string(orig), "\n"), strings.Split(string(got), "\n")))
	}
	if _, err := run("-check", doc); err != nil {
		t.Fatalf("excerpts -check after -update: %v", err)
	}

	// 3. A changed source fails the check too: copy the source into a
	// scratch root and change the same line there.
	srcCopy := filepath.Join(tmp, "root", spec.Path)
	if err := os.MkdirAll(filepath.Dir(srcCopy), 0o755); err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(code), changed, changed+" // edited in the source", 1)
	if edited == string(code) {
		t.Fatalf("line %q not found in %s", changed, spec.Path)
	}
	if err := os.WriteFile(srcCopy, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-root", filepath.Join(tmp, "root"), "-check", doc)
	out2, err := cmd.CombinedOutput()
	if exitCode(err) != 1 || !strings.Contains(string(out2), "+ "+changed+" // edited in the source") {
		t.Fatalf("excerpts -check with a changed source: %v\n%s", err, out2)
	}
}

// repoRoot is the repository the test runs in.
func repoRoot(t *testing.T) string {
	root, err := cluster.FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}

// TestExcerptSpecs covers the spec forms and their errors.
func TestExcerptSpecs(t *testing.T) {
	root := t.TempDir()
	src := "package x\n\n// +docs:begin two\nfunc a() {}\nfunc b() {}\n// +docs:end two\n\nfunc c() {\n\treturn\n}\n\nfunc cc() {\n}\n"
	if err := os.WriteFile(filepath.Join(root, "x.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		spec, want, err string
	}{
		{spec: "x.go#two", want: "func a() {}\nfunc b() {}"},
		{spec: `x.go from "^func c\(\)" to "^}"`, want: "func c() {\n\treturn\n}"},
		{spec: `x.go from "^func c" to "^}"`, err: "ambiguous"},
		{spec: `x.go from "^func d" to "^}"`, err: "no line"},
		{spec: "x.go#three", err: "no +docs:begin three"},
		{spec: "y.go", err: "no such file"},
		{spec: `x.go from "^func c\(\)"`, err: "expected to"},
		{spec: `x.go from "^// \+docs:end" until "^func cc"`, want: "// +docs:end two\n\nfunc c() {\n\treturn\n}"},
		{spec: `x.go from "^func c\(\)" until "^func d"`, err: "no line after"},
	} {
		e, err := ParseExcerpt(tc.spec)
		var lines []string
		if err == nil {
			lines, err = e.Extract(root)
		}
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want one containing %q", tc.spec, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.spec, err)
		case tc.err == "" && strings.Join(lines, "\n") != tc.want:
			t.Errorf("%s: got\n%s\nwant\n%s", tc.spec, strings.Join(lines, "\n"), tc.want)
		}
	}
}
