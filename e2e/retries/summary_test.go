package retries

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// summaryOf runs scripts/lib.sh's side_by_side with the given lanes (bash
// function bodies), then its summary, in a copy of lib.sh whose ROOT is a
// temporary directory, with list as the retries list; it returns what was
// printed.
func summaryOf(t *testing.T, list string, lanes ...string) string {
	t.Helper()
	lib, err := os.ReadFile(filepath.Join("..", "..", "scripts", "lib.sh"))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "scripts", "lib.sh"), lib, 0o644); err != nil {
		t.Fatal(err)
	}
	script := "set -uo pipefail\nsource \"$1/scripts/lib.sh\"\n"
	args := ""
	for i, body := range lanes {
		script += "lane" + string(rune('a'+i)) + "() {\n" + body + "\n}\n"
		args += " lane" + string(rune('a'+i)) + " lane" + string(rune('a'+i))
	}
	script += "side_by_side" + args + "\nsummary\n"
	cmd := exec.Command("bash", "-c", script, "bash", root)
	cmd.Env = append(os.Environ(), Env+"="+list)
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// TestSummaryNamesTheFailedTests: a lane whose go test failed has its
// failed tests, subtests and the lines that say why, under "What failed" at
// the end of the summary, where a log cut to its end still shows them; a
// lane that passed adds nothing there, and the retries list follows.
func TestSummaryNamesTheFailedTests(t *testing.T) {
	list := filepath.Join(t.TempDir(), "retries.log")
	if err := os.WriteFile(list, []byte("TestX: tried again because\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	failing := `step "a go test" bash -c 'echo "ok  	pkg/ok	1.0s"; echo "--- FAIL: TestReader (9.00s)"; echo "    --- FAIL: TestReader/bash/crd-demo (8.00s)"; echo "        reader_test.go:12: step 3: not done in 10m0s"; echo "FAIL"; exit 1'`
	passing := `step "another" bash -c 'echo "--- PASS: TestFine (1.00s)"'`
	out := summaryOf(t, list, failing, passing)
	_, after, found := strings.Cut(out, "What failed")
	if !found {
		t.Fatalf("no \"What failed\" in the summary:\n%s", out)
	}
	for _, want := range []string{"--- FAIL: TestReader/bash/crd-demo", "step 3: not done in 10m0s", "TestX: tried again because"} {
		if !strings.Contains(after, want) {
			t.Errorf("want %q after \"What failed\":\n%s", want, out)
		}
	}
	if strings.Contains(after, "TestFine") || strings.Contains(after, "pkg/ok") {
		t.Errorf("a passing lane's or test's lines after \"What failed\":\n%s", out)
	}

	if out := summaryOf(t, list, passing, passing); strings.Contains(out, "What failed") {
		t.Errorf("lanes that passed, yet \"What failed\":\n%s", out)
	}
}

// TestSummaryShowsWhatStoppedAFailedTest: of a failed test's log, "What
// failed" keeps its first entry and its last (the t.Fatal, with the indented
// lines it runs on to, such as a terminal's screen), not the steps' logs in
// between nor a passing subtest's lines, however long the log.
func TestSummaryShowsWhatStoppedAFailedTest(t *testing.T) {
	log := filepath.Join(t.TempDir(), "go-test.log")
	lines := []string{
		"--- FAIL: TestReader (900.00s)",
		"    --- FAIL: TestReader/bash (899.00s)",
		"        --- PASS: TestReader/bash/README (8.00s)",
		"            reader_test.go:470: README step passed",
		"        --- FAIL: TestReader/bash/crd-demo (817.99s)",
		"            reader_test.go:391: docs/crd-demo.md starts, 35 steps",
	}
	for i := 1; i <= 200; i++ {
		lines = append(lines, "            reader_test.go:470: a step that worked", "                --- output:", "                typed output")
	}
	lines = append(lines,
		"            reader_test.go:477: docs/crd-demo.md:1100, step 20: not done in 10m0s",
		"                --- the second terminal:",
		"                error: the screen's last line",
		"        reader_test.go:103: stopped after crd-demo.md",
		"FAIL",
	)
	if err := os.WriteFile(log, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := summaryOf(t, filepath.Join(t.TempDir(), "none.log"), `step "a go test" bash -c 'cat "$0"; exit 1' `+log)
	_, after, _ := strings.Cut(out, "What failed")
	for _, want := range []string{"starts, 35 steps", "step 20: not done in 10m0s", "error: the screen's last line", "stopped after crd-demo.md"} {
		if !strings.Contains(after, want) {
			t.Errorf("want %q after \"What failed\":\n%s", want, after)
		}
	}
	for _, not := range []string{"a step that worked", "typed output", "README step passed"} {
		if strings.Contains(after, not) {
			t.Errorf("%q after \"What failed\", which should keep only what says why:\n%s", not, after)
		}
	}
}

// TestSummaryGivesEachStepsCPU: with bin/steptime, each step's line in the
// summary has its CPU-seconds beside its wall time, children included, and
// the total adds the lanes' up.
func TestSummaryGivesEachStepsCPU(t *testing.T) {
	steptime := filepath.Join(t.TempDir(), "steptime")
	if out, err := exec.Command("go", "build", "-o", steptime, "../cmd/steptime").CombinedOutput(); err != nil {
		t.Fatalf("building steptime: %v\n%s", err, out)
	}
	t.Setenv("STEPTIME", steptime)
	// A loop in a child of a child: the step's CPU is its children's.
	spin := `step "spin" bash -c 'bash -c "i=0; while [ \$i -lt 200000 ]; do i=\$((i+1)); done"'`
	out := summaryOf(t, filepath.Join(t.TempDir(), "none.log"), spin, spin)
	_, table, _ := strings.Cut(out, "Where the time went")
	var lines []string
	for _, l := range strings.Split(table, "\n") {
		if f := strings.Fields(l); len(f) >= 3 && (strings.HasSuffix(l, " ok") || f[0] == "total") {
			lines = append(lines, l)
		}
	}
	cpus := map[string]float64{}
	for _, l := range lines {
		f := strings.Fields(l)
		i := len(f) - 1
		if f[i] == "ok" {
			i--
		}
		cpu, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			t.Fatalf("no CPU-seconds in %q: %v\n%s", l, err, out)
		}
		cpus[strings.Join(f[:i-1], " ")] = cpu
	}
	for _, name := range []string{"(1) spin", "(2) spin"} {
		if cpus[name] < 0.1 {
			t.Errorf("%s: want the loop's CPU, at least 0.1 s, got %.1f\n%s", name, cpus[name], out)
		}
	}
	if sum := cpus["(1) spin"] + cpus["(2) spin"]; cpus["total"] < sum-0.15 || cpus["total"] > sum+0.15 {
		t.Errorf("total: want the lanes' %.1f, got %.1f\n%s", sum, cpus["total"], out)
	}
}
