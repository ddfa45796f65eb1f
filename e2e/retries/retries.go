// Package retries keeps the list of what a test tried a second time, for
// make test's closing summary (scripts/lib.sh). A test may try again only
// where its code says why; the summary names every retry that happened, so
// that a race a retry hides is seen, not met.
package retries

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// Env names the file the list is kept in. scripts/test.sh sets it; where it
// is unset (go test alone), Record only returns.
const Env = "RETRIES_LOG"

// Record adds one line, "who: what", to the list: who is the test (or the
// program) that tried again, what says what failed and why it was tried
// again. Processes record at once: each line is one append.
func Record(who, what string) error {
	path := os.Getenv(Env)
	if path == "" {
		return nil
	}
	line := strings.ReplaceAll(who+": "+what, "\n", " ") + "\n"
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("recording a retry in %s (%s): %w", path, Env, err)
	}
	if _, err := f.WriteString(line); err != nil {
		f.Close()
		return fmt.Errorf("recording a retry in %s (%s): %w", path, Env, err)
	}
	return f.Close()
}

// Note says, in t's log and in the list, that t tried something again and
// why; a list it cannot write fails t.
func Note(t testing.TB, what string) {
	t.Helper()
	t.Logf("retried: %s", what)
	if err := Record(t.Name(), what); err != nil {
		t.Error(err)
	}
}
