// Package tier marks the tests of the extended test tier. It imports nothing
// of the repository, so every module's tests can use it: the e2e suites, the
// kwok provider's own tests (package cluster, which the harness imports) and
// the bench's.
package tier

import "testing"

// Extended marks a test of the extended tier, `make test-extended`: a drill
// (kills, an outage, concurrent editors, leader election, a cluster of its
// own) that proves a controller or a provider robust rather than a chapter's
// behaviour. `make test` runs go test -short, which leaves these out, saying
// where they run; `make test-extended` finds them by this call.
func Extended(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("extended tier: make test-extended runs it (go test -short leaves it out)")
	}
}
