package retries

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Every retry recorded at once, from many goroutines, is one whole line of
// the list; a line break in what is said does not split it.
func TestRecordAddsOneLineARetry(t *testing.T) {
	path := filepath.Join(t.TempDir(), "retries.log")
	t.Setenv(Env, path)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			if err := Record(fmt.Sprintf("TestX/%d", i), "kubectl wait failed:\nretried"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	var want []string
	for i := range 20 {
		want = append(want, fmt.Sprintf("TestX/%d: kubectl wait failed: retried", i))
	}
	slices.Sort(lines)
	slices.Sort(want)
	if !slices.Equal(lines, want) {
		t.Errorf("the list holds\n%s\nwant (in any order)\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

// Without the variable, nothing is written and nothing fails.
func TestRecordWithoutTheVariableKeepsNothing(t *testing.T) {
	t.Setenv(Env, "")
	dir := t.TempDir()
	t.Chdir(dir)
	if err := Record("TestX", "retried"); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("Record wrote %v with %s unset", entries, Env)
	}
}

// A list that cannot be written is an error that names it.
func TestRecordSaysWhereItCouldNotWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no-such-dir", "retries.log")
	t.Setenv(Env, path)
	err := Record("TestX", "retried")
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("Record into %s: got %v, want an error naming it", path, err)
	}
}
