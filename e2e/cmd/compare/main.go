// Command compare measures the three CustomPod implementations and writes
// the table of docs/comparison.md, between its compare:begin and
// compare:end markers. scripts/compare.sh runs it.
//
//	compare [-root DIR] [-runs 3] [-doc docs/comparison.md] [-stdout]
//	compare -check [-root DIR] [-doc docs/comparison.md]
//
// It needs a cluster in KUBECONFIG (make cluster-up) and the tools in bin/.
// What it counts and how it measures is written in the table's notes.
// -check needs neither: it counts again (lines, files, direct dependencies)
// and fails when a row of the table says otherwise; `make verify` runs it.
package main

import (
	"bytes"
	"context"
	"flag"
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

	"example.com/k8s-demo/e2e/cluster"
	"example.com/k8s-demo/e2e/impls"
	"example.com/k8s-demo/e2e/process"
)

// impl is one implementation of CustomPod and the files that make it.
type impl struct {
	*impls.Impl
	// include says whether a file (relative to Dir) belongs to CustomPod.
	include func(path string) bool
	// edit lists the files a developer writes or edits (the rest of the
	// non-generated files are scaffolding, kept as the CLI wrote it).
	edit []string
}

var implementations = []impl{
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
		edit:    []string{"api/v1/custompod_types.go", "internal/controller/custompod_controller.go", "internal/controller/pod_cache.go", "internal/controller/pod_events.go", "internal/controller/pod_names.go", "internal/controller/pod_template.go", "internal/controller/pod_writes.go", "internal/controller/events.go", "internal/controller/status.go", "cmd/main.go", "config/samples/zhhnzw_v1_custompod.yaml"},
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
		edit: []string{"api/zhhnzw/v1/custompod_types.go", "internal/controller/zhhnzw/custompod_controller.go", "internal/controller/zhhnzw/pod_cache.go", "internal/controller/zhhnzw/pod_events.go", "internal/controller/zhhnzw/pod_names.go", "internal/controller/zhhnzw/pod_template.go", "internal/controller/zhhnzw/pod_writes.go", "internal/controller/zhhnzw/events.go", "internal/controller/zhhnzw/status.go", "cmd/main.go", "config/samples/zhhnzw_v1_custompod.yaml"},
	},
}

// result is what was measured of one implementation.
type result struct {
	goEdit, goScaffold, goGen, yamlHand, yamlGen, otherLines int
	files, testFiles                                         int
	direct, linked                                           int
	binSize                                                  int64
	startup                                                  []time.Duration
	peakRSS                                                  uint64 // bytes
}

func main() {
	rootFlag := flag.String("root", "", "the repository root (default: found from the working directory)")
	runs := flag.Int("runs", 3, "start each controller this many times; the table shows the median start-up")
	doc := flag.String("doc", "docs/comparison.md", "the markdown file to write the table into, relative to the root")
	stdout := flag.Bool("stdout", false, "print the table instead of writing it into the doc")
	check := flag.Bool("check", false, "only count, and fail if the doc's table has other counts")
	flag.Parse()
	root := *rootFlag
	if root == "" {
		wd, _ := os.Getwd()
		r, err := cluster.FindRoot(wd)
		if err != nil {
			fail(err)
		}
		root = r
	}
	if *check {
		checkCounts(root, *doc)
		return
	}
	if os.Getenv("KUBECONFIG") == "" {
		fail(fmt.Errorf("KUBECONFIG is not set: make cluster-up && export KUBECONFIG=$(make -s kubeconfig)"))
	}
	bin := filepath.Join(root, "bin")
	kubectl := func(args ...string) (string, error) {
		out, err := exec.Command(filepath.Join(bin, "kubectl"), args...).CombinedOutput()
		if err != nil {
			return string(out), fmt.Errorf("kubectl %s: %w\n%s", strings.Join(args, " "), err, out)
		}
		return string(out), nil
	}

	// The CRDs: operator-demo's kustomization has CustomPod's and its two others.
	crds, err := exec.Command(filepath.Join(bin, "kustomize"), "build", filepath.Join(root, "operator-demo", "config", "crd")).Output()
	if err != nil {
		fail(fmt.Errorf("kustomize build operator-demo/config/crd: %w", err))
	}
	cmd := exec.Command(filepath.Join(bin, "kubectl"), "apply", "-f", "-")
	cmd.Stdin = bytes.NewReader(crds)
	if out, err := cmd.CombinedOutput(); err != nil {
		fail(fmt.Errorf("applying the CRDs: %v\n%s", err, out))
	}
	if _, err := kubectl("wait", cluster.WaitEstablished, "crd/custompods.zhhnzw.mock.com", "--timeout=60s"); err != nil {
		fail(err)
	}

	tmp, err := os.MkdirTemp("", "compare-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(tmp)

	var builds process.Builds
	results := make([]result, len(implementations))
	for i, im := range implementations {
		fmt.Fprintf(os.Stderr, "== %s (%s)\n", im.Name, im.Dir)
		r := &results[i]
		dir := filepath.Join(root, im.Dir)
		if err := count(dir, im, r); err != nil {
			fail(err)
		}
		binary, err := builds.Build(dir, im.Pkg, filepath.Join(tmp, im.Name), nil)
		if err != nil {
			fail(err)
		}
		st, _ := os.Stat(binary)
		r.binSize = st.Size()
		out, err := goCmd(dir, "version", "-m", binary)
		if err != nil {
			fail(err)
		}
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) > 0 && f[0] == "dep" {
				r.linked++
			}
		}
		for run := 0; run < *runs; run++ {
			ns := fmt.Sprintf("compare-%s-%d-%d", im.Name, os.Getpid(), run)
			if _, err := kubectl("create", "namespace", ns); err != nil {
				fail(err)
			}
			d, rss, err := measure(kubectl, binary, im.Impl, ns, run == *runs-1, filepath.Join(tmp, fmt.Sprintf("%s-%d.log", im.Name, run)))
			_, _ = kubectl("delete", "namespace", ns, "--wait=false")
			if err != nil {
				fail(fmt.Errorf("%s: %w", im.Name, err))
			}
			r.startup = append(r.startup, d)
			if rss > 0 {
				r.peakRSS = rss
			}
			fmt.Fprintf(os.Stderr, "   run %d: started workers after %s\n", run+1, d.Round(time.Millisecond))
		}
	}

	table := render(root, results, *runs)
	if *stdout {
		fmt.Print(table)
		return
	}
	path := filepath.Join(root, *doc)
	b, err := os.ReadFile(path)
	if err != nil {
		fail(err)
	}
	const begin, end = "<!-- compare:begin -->", "<!-- compare:end -->"
	s := string(b)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		fail(fmt.Errorf("%s has no %s ... %s markers", path, begin, end))
	}
	s = s[:i+len(begin)] + "\n" + table + s[j:]
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		fail(err)
	}
	fmt.Fprintf(os.Stderr, "wrote the table into %s\n", path)
}

// measure starts the controller in namespace ns, times it to its "started
// workers" line and, when workload is set, scales a CustomPod 0 → 3 → 1 and
// reads the process's peak RSS (VmHWM).
func measure(kubectl func(...string) (string, error), binary string, im *impls.Impl, ns string, workload bool, logPath string) (time.Duration, uint64, error) {
	p, err := process.Start(process.Spec{Name: im.Name, Path: binary, Args: im.Args(impls.Settings{Namespace: ns}), Env: im.Env, LogFile: logPath})
	if err != nil {
		return 0, 0, err
	}
	defer p.Stop()
	startup, err := p.WaitForLog(context.Background(), im.Started, 60*time.Second)
	if err != nil {
		return 0, 0, fmt.Errorf("%w:\n%s", err, p.Log())
	}
	if !workload {
		return startup, 0, nil
	}
	sample := "apiVersion: zhhnzw.mock.com/v2\nkind: CustomPod\nmetadata:\n  name: compare\nspec:\n  replicas: 3\n  template:\n    image: busybox:1.36\n    command: [sleep, \"3600\"]\n"
	if _, err := kubectlStdin(kubectl, sample, ns); err != nil {
		return 0, 0, err
	}
	if _, err := kubectl("wait", "-n", ns, "custompod/compare", "--for=jsonpath={.status.replicas}=3", "--timeout=60s"); err != nil {
		return 0, 0, err
	}
	if _, err := kubectl("scale", "-n", ns, "custompod/compare", "--replicas=1"); err != nil {
		return 0, 0, err
	}
	if _, err := kubectl("wait", "-n", ns, "custompod/compare", "--for=jsonpath={.status.replicas}=1", "--timeout=60s"); err != nil {
		return 0, 0, err
	}
	rss, err := p.PeakRSS()
	return startup, rss, err
}

// kubectlStdin applies a manifest given as a string.
func kubectlStdin(kubectl func(...string) (string, error), manifest, ns string) (string, error) {
	f, err := os.CreateTemp("", "compare-*.yaml")
	if err != nil {
		return "", err
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(manifest); err != nil {
		return "", err
	}
	f.Close()
	return kubectl("apply", "-n", ns, "-f", f.Name())
}

var generatedRe = regexp.MustCompile(`(?m)^// Code generated .* DO NOT EDIT\.$`)

// countFiles counts the implementation's files and their non-blank lines.
func countFiles(dir string, im impl, r *result) error {
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

func render(root string, rs []result, runs int) string {
	var b strings.Builder
	row := func(label string, f func(r result) string) {
		fmt.Fprintf(&b, "| %s |", label)
		for _, r := range rs {
			fmt.Fprintf(&b, " %s |", f(r))
		}
		b.WriteString("\n")
	}
	b.WriteString("|")
	for _, im := range implementations {
		fmt.Fprintf(&b, " | %s (%s)", im.Name, im.Dir)
	}
	b.WriteString(" |\n|---|" + strings.Repeat("--:|", len(implementations)) + "\n")
	for _, c := range counted {
		row(c.label, c.cell)
	}
	row("Modules linked into the binary", func(r result) string { return strconv.Itoa(r.linked) })
	row("Binary size", func(r result) string { return fmt.Sprintf("%.1f MB", float64(r.binSize)/1e6) })
	row(fmt.Sprintf("Start-up to \"Starting workers\" (median of %d)", runs), func(r result) string {
		d := slices.Clone(r.startup)
		slices.Sort(d)
		return fmt.Sprintf("%d ms", d[len(d)/2].Milliseconds())
	})
	row("Peak RSS, scaling 3 → 1", func(r result) string { return fmt.Sprintf("%.1f MB", float64(r.peakRSS)/(1<<20)) })
	goVersion, _ := exec.Command("go", "env", "GOVERSION").Output()
	// The commit the figures belong to; "-dirty" if the tree had changes.
	commit, err := exec.Command("git", "-C", root, "describe", "--always", "--dirty", "--abbrev=7").Output()
	if err != nil {
		commit = []byte("unknown")
	}
	fmt.Fprintf(&b, "\nMeasured at commit %s on %s by `scripts/compare.sh` (%s, %s/%s, %d CPUs, kwok cluster).\n",
		strings.TrimSpace(string(commit)), time.Now().UTC().Format("2006-01-02"), strings.TrimSpace(string(goVersion)), runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	return b.String()
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

func fail(err error) {
	fmt.Fprintln(os.Stderr, "compare:", err)
	os.Exit(1)
}

// counted are the rows that depend only on the source: -check recounts them.
var counted = []struct {
	label string
	cell  func(r result) string
}{
	{"Go lines you write or edit", func(r result) string { return strconv.Itoa(r.goEdit) }},
	{"Go lines scaffolded, kept as generated", func(r result) string { return strconv.Itoa(r.goScaffold) }},
	{"Go lines generated (`DO NOT EDIT`)", func(r result) string { return strconv.Itoa(r.goGen) }},
	{"YAML lines, written or scaffolded", func(r result) string { return strconv.Itoa(r.yamlHand) }},
	{"YAML lines generated (CRD, RBAC, bundle)", func(r result) string { return strconv.Itoa(r.yamlGen) }},
	{"Other lines (Makefile, Dockerfile, scripts, …)", func(r result) string { return strconv.Itoa(r.otherLines) }},
	{"Files (and test files)", func(r result) string { return fmt.Sprintf("%d (%d)", r.files, r.testFiles) }},
	{"Direct dependencies in go.mod", func(r result) string { return strconv.Itoa(r.direct) }},
}

// count fills in r's counted rows for the implementation in dir.
func count(dir string, im impl, r *result) error {
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
func checkCounts(root, doc string) {
	results := make([]result, len(implementations))
	for i, im := range implementations {
		if err := count(filepath.Join(root, im.Dir), im, &results[i]); err != nil {
			fail(err)
		}
	}
	b, err := os.ReadFile(filepath.Join(root, doc))
	if err != nil {
		fail(err)
	}
	lines := strings.Split(string(b), "\n")
	bad := 0
	for _, c := range counted {
		cells := make([]string, len(results))
		for i, r := range results {
			cells[i] = c.cell(r)
		}
		want := "| " + c.label + " | " + strings.Join(cells, " | ") + " |"
		var got string
		for _, l := range lines {
			if strings.HasPrefix(l, "| "+c.label+" |") {
				got = l
			}
		}
		if got != want {
			bad++
			fmt.Fprintf(os.Stderr, "%s: the table says\n  %s\nthe code counts\n  %s\n", doc, got, want)
		}
	}
	if bad > 0 {
		fail(fmt.Errorf("%d of the table's counted rows no longer match the code: run scripts/compare.sh with a cluster up (make cluster-up) to measure and write the table again", bad))
	}
	fmt.Printf("compare: the %d counted rows of %s match the code\n", len(counted), doc)
}
