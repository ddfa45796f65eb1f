package main

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestDefaultRunsEachControllerOnce: the default run leaves out an
// implementation that runs another's controller code, and the report says
// so; -full (-impl all) runs every one.
func TestDefaultRunsEachControllerOnce(t *testing.T) {
	names := func(impls []implementation) (out []string) {
		for _, im := range impls {
			out = append(out, im.name)
		}
		return out
	}
	def, err := selectImpls("")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"client-go", "kubebuilder", "PodSet (operator-sdk)", "plain loop"}
	if got := names(def); !slices.Equal(got, want) {
		t.Errorf("default: got %q, want %q", got, want)
	}
	all, err := selectImpls("all")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(names(all), "operator-sdk") {
		t.Errorf("-impl all: got %q, want operator-sdk among them", names(all))
	}
	for _, im := range implementations {
		if im.sameAs != "" && !slices.Contains(names(implementations), im.sameAs) {
			t.Errorf("%s: sameAs %q names no implementation", im.name, im.sameAs)
		}
	}

	r := report{Main: qpsSetting{100, 200}, Repeat: 3, Omitted: []omission{{"operator-sdk", "kubebuilder"}},
		Results: []summary{{Impl: "plain loop", Kind: "CustomPod", Baseline: true, N: 10, Runs: 3, Converge: time.Second, Min: time.Second, Max: time.Second, P50: time.Second, P99: time.Second, Requests: 50}}}
	md := r.markdown()
	if !strings.Contains(md, "Not in this run: operator-sdk, whose CustomPod controller is kubebuilder's") {
		t.Errorf("the report should name what it left out:\n%s", md)
	}
	if _, err := mainTable(md); err != nil {
		t.Errorf("the main table should still read back: %v", err)
	}
}
