package main

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestDefaultRunsEachControllerOnce: the default run is the CustomPod
// controllers, each controller's code once, and their plain loop; it names
// what it leaves out and why, and -full (-impl all) runs every one.
func TestDefaultRunsEachControllerOnce(t *testing.T) {
	names := func(impls []implementation) (out []string) {
		for _, im := range impls {
			out = append(out, im.name)
		}
		return out
	}
	def, omitted, err := selectImpls("")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(def), []string{"client-go", "kubebuilder", "plain loop"}; !slices.Equal(got, want) {
		t.Errorf("default: got %q, want %q", got, want)
	}
	var left []string
	for _, o := range omitted {
		left = append(left, o.Impl)
		if o.Why == "" {
			t.Errorf("default: %s left out with no reason", o.Impl)
		}
	}
	if want := []string{"operator-sdk", "PodSet (operator-sdk)", "PodSet read-your-writes (operator-sdk)", "plain loop of 4 writes", "Network (client-go)", "Network plain loop"}; !slices.Equal(left, want) {
		t.Errorf("default: left out %q, want %q", left, want)
	}
	all, omitted, err := selectImpls("all")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(names(all), names(implementations)) || len(omitted) > 0 {
		t.Errorf("-impl all: got %q, leaving out %v; want every implementation", names(all), omitted)
	}
	if _, omitted, err := selectImpls("client-go"); err != nil || len(omitted) > 0 {
		t.Errorf("-impl client-go: got %v, %v; want no error and nothing said left out (it was asked for)", omitted, err)
	}

	r := report{Main: qpsSetting{100, 200}, Repeat: 3, Omitted: []omission{{"operator-sdk", "its CustomPod controller is kubebuilder's"}},
		Results: []summary{{Impl: "plain loop", Kind: "CustomPod", Baseline: true, N: 10, Runs: 3, Converge: time.Second, Min: time.Second, Max: time.Second, P50: time.Second, P99: time.Second, Requests: 50}}}
	md := r.markdown()
	if !strings.Contains(md, "- operator-sdk: its CustomPod controller is kubebuilder's.") {
		t.Errorf("the report should name what it left out, and why:\n%s", md)
	}
}

// TestCheckRoom: a run whose pods the fake nodes cannot hold fails before
// it starts, naming the make variable that gives room; make bench's
// default (4 nodes of 1000) holds N = 1000.
func TestCheckRoom(t *testing.T) {
	t.Setenv("CLUSTER_NODES", "4")
	t.Setenv("CLUSTER_NODE_PODS", "1000")
	if err := checkRoom(1000, 0); err != nil {
		t.Errorf("N = 1000 on 4 nodes of 1000: %v", err)
	}
	err := checkRoom(5000, 0)
	if err == nil || !strings.Contains(err.Error(), "15003 pods need room") || !strings.Contains(err.Error(), "BENCH_NODE_PODS=3751") {
		t.Errorf("N = 5000 on 4 nodes of 1000: %v", err)
	}
	if err := checkRoom(100, 10000); err == nil {
		t.Error("10,000 pods of others on 4 nodes of 1000 should not fit")
	}
}
