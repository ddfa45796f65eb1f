package cluster

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

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

func TestDaemonSetsWaiting(t *testing.T) {
	ds := func(name string, gen, observed int64, desired, available, updated int32) appsv1.DaemonSet {
		return appsv1.DaemonSet{
			ObjectMeta: metav1.ObjectMeta{Name: name, Generation: gen},
			Status: appsv1.DaemonSetStatus{ObservedGeneration: observed, DesiredNumberScheduled: desired,
				NumberAvailable: available, UpdatedNumberScheduled: updated},
		}
	}
	for _, c := range []struct {
		name string
		in   []appsv1.DaemonSet
		want string
	}{
		{"every node runs both", []appsv1.DaemonSet{ds("kube-proxy", 1, 1, 2, 2, 2), ds("kube-router", 1, 1, 2, 2, 2)}, ""},
		// The worker joined: its kube-proxy pod is scheduled, not yet running.
		{"a node without its kube-proxy", []appsv1.DaemonSet{ds("kube-proxy", 1, 1, 2, 1, 2), ds("kube-router", 1, 1, 2, 2, 2)},
			"kube-proxy: 1 of 2 pods available"},
		{"not yet seen by its controller", []appsv1.DaemonSet{ds("kube-proxy", 2, 1, 2, 2, 2)}, "kube-proxy: 2 of 2 pods available"},
		{"no pod scheduled yet", []appsv1.DaemonSet{ds("kube-proxy", 1, 1, 0, 0, 0)}, "kube-proxy: 0 of 0 pods available"},
		{"an old pod still running", []appsv1.DaemonSet{ds("kube-proxy", 1, 1, 2, 2, 1)}, "kube-proxy: 2 of 2 pods available"},
	} {
		if got := strings.Join(daemonSetsWaiting(c.in), ", "); got != c.want {
			t.Errorf("%s: daemonSetsWaiting = %q, want %q", c.name, got, c.want)
		}
	}
}
