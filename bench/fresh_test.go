package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"example.com/k8s-demo/e2e/cluster"
	"example.com/k8s-demo/e2e/tier"
)

// TestFreshClusterPerRun runs the bench as make bench does, small: a new
// kwok cluster for each run, the next one made, with its CRDs, while the
// run before it finishes; each run converges on its own empty cluster, and
// no cluster is left behind. Its three runs are client-go's controller and
// kubebuilder's and operator-sdk's managers, and the API server compresses
// nothing for any of them. The API server calls no conversion webhook:
// crd-demo's CRD goes without its own, which the bench does not run.
func TestFreshClusterPerRun(t *testing.T) {
	tier.Extended(t)
	t.Setenv("CLUSTER_NODES", "1")
	t.Setenv("CLUSTER_NODE_PODS", "100")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	b, err := newBench(5*time.Minute, true)
	if err != nil {
		t.Fatal(err)
	}
	b.log = testWriter{t}
	b.freshOptions.Log = b.log
	b.freshOptions.Name = "k8s-demo-bench-test"
	b.workers = 2
	defer b.shutdown(ctx)
	exists := func(n string) bool {
		o := *b.freshOptions
		o.Name = o.Name + "-" + n
		p, err := cluster.New("kwok", o)
		if err != nil {
			t.Fatal(err)
		}
		ok, err := p.Exists(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}

	// client-go's controller, then kubebuilder's manager, then
	// operator-sdk's, then the plain loop: each next run's cluster is made,
	// with its CRDs, while the run before it finishes.
	runs := append(implementations[:3:3], implementations[slices.IndexFunc(implementations, func(im implementation) bool { return im.name == "plain loop" })])
	q := qpsSetting{100, 200}
	for i, im := range runs {
		b.nextCRDs = nil
		if i+1 < len(runs) {
			b.nextCRDs = runs[i+1].crds
		}
		r, err := b.run(ctx, im, 5, q)
		if err != nil {
			t.Fatal(err)
		}
		// None of them asks the API server to compress (docs/bench.md,
		// "What made the controllers fast"): for one that does, Kubernetes
		// 1.37 gzips the watches its informers start with their lists.
		if len(r.Compressed) > 0 {
			t.Errorf("%s: the API server compressed %s; want nothing compressed (rest.Config's DisableCompression)", r.Impl, r.Compressed)
		}
		// With crd-demo's CRD applied as it is, its conversion webhook
		// unreachable, the watch cache of CustomPods' v1 fails at each
		// object (docs/bench.md, "What is measured, and how").
		if len(r.FailedConversions) > 0 {
			t.Errorf("%s: the API server's calls to a conversion webhook that failed: %s; want none (the bench's CRDs convert with strategy None)", r.Impl, r.FailedConversions)
		}
		// A cluster that kept an earlier run's objects would show them: each
		// run's namespace is new, but its CRDs came with the cluster. A
		// create refused as a name that exists (a reconcile on a cache that
		// had not yet seen its pods) is counted apart: on a slow machine a
		// run showed 17 creates, 2 of them refused.
		if got := r.Requests["create pods"]; got != 15 {
			t.Errorf("run %d (%s): %d pods created, want 15 (%s)", i+1, r.Impl, got, r.Requests)
		}
		// The loop makes a controller's writes, and nothing else: its pods,
		// the event, the status while the pods start and the final one. Its
		// CustomPods go past the proxy, as the bench's do for a controller.
		if want := (requestCounts{"create events": 5, "create pods": 15, "update custompods/status": 10}); im.baseline && !maps.Equal(r.Requests, want) {
			t.Errorf("the plain loop sent %s; want a controller's writes, %s", r.Requests, want)
		}
		if i+1 < len(runs) && (b.next == nil || b.fresh != nil) {
			t.Fatalf("after run %d: want its cluster deleted and the next one under way; have the run's %v, the next %v", i+1, b.fresh, b.next)
		}
		if exists(fmt.Sprint(i + 1)) {
			t.Errorf("run %d's cluster is still there", i+1)
		}
	}
	if b.clusters != len(runs) || b.next != nil {
		t.Errorf("after the last run: %d clusters made, want %d, and none under way (have %v)", b.clusters, len(runs), b.next)
	}
}

// TestMain runs the test binary as the bench when it is given the plain
// loop's arguments: b.run starts the loop as its own executable with
// -baseline, which, under go test, is this binary.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "-baseline" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
