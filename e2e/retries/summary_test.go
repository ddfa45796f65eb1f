package retries

import (
	"os"
	"os/exec"
	"path/filepath"
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
