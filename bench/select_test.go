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
	if want := []string{"operator-sdk", "PodSet (operator-sdk)", "Network (client-go)", "Network plain loop"}; !slices.Equal(left, want) {
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
	if _, err := mainTable(md); err != nil {
		t.Errorf("the main table should still read back: %v", err)
	}
}
