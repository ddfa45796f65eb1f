package cluster

import "testing"

func TestFailedChecks(t *testing.T) {
	// As kube-apiserver answers GET /readyz?verbose while a post-start hook
	// has not run.
	body := `[+]ping ok
[+]etcd ok
[-]poststarthook/crd-informer-synced failed: reason withheld
[+]poststarthook/start-apiextensions-controllers ok
[-]poststarthook/rbac/bootstrap-roles failed: reason withheld
readyz check failed`
	if got, want := failedChecks(body), "poststarthook/crd-informer-synced, poststarthook/rbac/bootstrap-roles"; got != want {
		t.Errorf("failedChecks = %q, want %q", got, want)
	}
	if got := failedChecks("ok"); got != "" {
		t.Errorf("failedChecks(ok) = %q, want none", got)
	}
}
