package main

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestMainTableReadsWhatMarkdownWrites: -redraw draws the chart from the
// table markdown wrote, so reading it back must give the values drawn.
func TestMainTableReadsWhatMarkdownWrites(t *testing.T) {
	r := report{Env: "a test", Main: qpsSetting{100, 200}, Took: time.Minute, Results: []result{
		{Impl: "client-go", N: 10, Converge: 1160 * time.Millisecond, Requests: requestCounts{"create pods": 30, "update custompods/status": 60, "list pods": 7, "watch pods": 1}},
		{Impl: "Network (client-go)", N: 1000, Converge: 33100 * time.Millisecond, Requests: requestCounts{"create networks": 3000}},
	}}
	got, err := mainTable("# Bench\n\n" + r.markdown() + "\nmore text | with | bars\n")
	if err != nil {
		t.Fatal(err)
	}
	if got.Main != r.Main {
		t.Errorf("rate limit: got %v, want %v", got.Main, r.Main)
	}
	type drawn struct {
		Impl     string
		N        int
		Converge time.Duration
		Requests int
	}
	var want, have []drawn
	for _, x := range r.Results {
		want = append(want, drawn{x.Impl, x.N, x.Converge, x.Requests.Total()})
	}
	for _, x := range got.Results {
		have = append(have, drawn{x.Impl, x.N, x.Converge, x.Requests.Total()})
	}
	if !reflect.DeepEqual(have, want) {
		t.Errorf("read back:\n got %+v\nwant %+v", have, want)
	}
	if _, err := mainTable(strings.Replace(r.markdown(), "Every controller", "Each controller", 1)); err == nil {
		t.Error("a page with no main table should be an error")
	}
}
