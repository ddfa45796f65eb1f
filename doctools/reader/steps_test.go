package reader

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"example.com/k8s-demo/doctools/docs"
)

func parse(t *testing.T, md string) ([]Step, []Skipped, error) {
	t.Helper()
	d, err := docs.ParseDoc("t.md", md)
	if err != nil {
		t.Fatal(err)
	}
	return ReaderSteps(d)
}

// TestReaderSteps reads the steps from the visible text alone.
func TestReaderSteps(t *testing.T) {
	md := "# Title\n\nStart here:\n\n```sh\ncd crd-demo\n```\n\n" +
		"**Optional**: with the CLI:\n\n```sh\nkubebuilder init\n```\n\n" +
		"<!-- excerpt: crd-demo/hack/update-codegen.sh -->\n```sh\nquoted\n```\n\n" +
		"In a second terminal, at the repository root, start it:\n\n<!-- check wait=\"Started workers\" timeout=30s -->\n```sh\nmake run\n```\n\n" +
		"Watch the log in the second terminal. Then:\n\n<!-- check expect=\"Ready\" -->\n```sh\nkubectl get net\n```\n\n" +
		"```\noutput, not typed\n```\n\n" +
		"Back in the first terminal, break it:\n\n<!-- check fails -->\n```sh\nfalse\n```\n\n" +
		"In a third terminal:\n\n```sh\nsleep 1\n```\n\n" +
		"Stop both: Ctrl-C in the third terminal, then in the second.\n\n" +
		"On kind (not run here):\n\n```sh\nmake deploy\n```\n"
	steps, skipped, err := parse(t, md)
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		Line, Terminal int
		Commands       []string
		Interrupt      []int
	}
	var gs []got
	for _, s := range steps {
		gs = append(gs, got{s.Line, s.Terminal, s.Commands, s.Interrupt})
	}
	want := []got{
		{5, 1, []string{"cd crd-demo"}, nil},
		{23, 2, []string{"make run"}, nil},
		{30, 1, []string{"kubectl get net"}, nil},
		{41, 1, []string{"false"}, nil},
		{47, 3, []string{"sleep 1"}, nil},
		{51, 0, nil, []int{3, 2}},
	}
	if !reflect.DeepEqual(gs, want) {
		t.Errorf("steps:\n got %+v\nwant %+v", gs, want)
	}
	if len(skipped) != 2 || skipped[0].Reason != "Optional" || skipped[1].Reason != "not run here" {
		t.Errorf("skipped: %+v", skipped)
	}
	if c := steps[1].Check; c.Wait.String() != "Started workers" || c.Timeout != 30*time.Second {
		t.Errorf("check of step 2: %+v", c)
	}
	if c := steps[2].Check; c.Expect.String() != "Ready" || c.Fails {
		t.Errorf("check of step 3: %+v", c)
	}
	if !steps[3].Check.Fails {
		t.Error("step 4 should be expected to fail")
	}
	// The block right after step 3 is its output; no other step shows one.
	for i, s := range steps {
		switch {
		case i == 2 && (s.Shown == nil || s.Shown.Line != 35 || !reflect.DeepEqual(s.Shown.Text, []string{"output, not typed"})):
			t.Errorf("step 3 should show line 35's output, shows %+v", s.Shown)
		case i != 2 && s.Shown != nil:
			t.Errorf("step %d shows %+v; only step 3 is followed by its output", i+1, s.Shown)
		}
	}
}

// TestShownNeedsNoTextBetween: a block after text is not a command's output.
func TestShownNeedsNoTextBetween(t *testing.T) {
	steps, _, err := parse(t, "```sh\nls\n```\n\nThis is a log:\n\n```\nlog\n```\n\n## Next\n\n```\nmore\n```\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 1 || steps[0].Shown != nil {
		t.Errorf("got %+v, want one step that shows no output", steps)
	}
}

// TestShown matches shown output as a reader compares it: the same lines, in
// any order, columns however wide, and run-to-run values (ages, times,
// generated names, UUIDs, "…") left open, and nothing else.
func TestShown(t *testing.T) {
	shown := []string{
		"network.samplecrd.k8s.io/example-network condition met",
		"NAME              CIDR             GATEWAY       READY   AGE",
		"example-network   192.168.0.0/16   192.168.0.1   True    2s",
		`{"networks":[{"id":"aef81eaf-fd15-4ad4-bb86-ce93f4a9e253","name":"crd-demo/example-network","cidr":"192.168.0.0/16"}]}`,
		"",
		"pod/custompod-sample-6vd9c   1/1     Running   0          1s",
		"5s          Normal   Updated   network/example-network   Updated backend network aef81eaf-…: cidr 192.168.0.0/16 → 10.1.0.0/16",
		`I1122 04:33:14.325816   15014 round_trippers.go:632] "Response" verb="GET" status="200 OK" milliseconds=…`,
		"2026-11-22T04:31:23Z\tINFO\tsetup\tstarting manager",
	}
	printed := strings.Join([]string{
		"reader$ kubectl wait net/example-network",
		"network.samplecrd.k8s.io/example-network condition met",
		"NAME              CIDR             GATEWAY       READY   AGE",
		"example-network   192.168.0.0/16   192.168.0.1   True    2m15s",
		`{"networks":[{"id":"0b1e5c3a-77aa-4c1e-9f00-12ab34cd56ef","name":"crd-demo/example-network","cidr":"192.168.0.0/16"}]}`,
		"pod/custompod-sample-x7z2q   1/1   Running   0   12s",
		"0s     Normal   Updated   network/example-network   Updated backend network 0b1e5c3a-77aa-4c1e-9f00-12ab34cd56ef: cidr 192.168.0.0/16 → 10.1.0.0/16",
		`I1124 11:02:59.000001 7 round_trippers.go:640] "Response" verb="GET" status="200 OK" milliseconds=12`,
		"2026-11-24T11:03:00Z\tINFO\tsetup\tstarting manager",
		"",
	}, "\n")
	s, err := NewShown(10, shown)
	if err != nil {
		t.Fatal(err)
	}
	if m := s.Missing(printed); m != "" {
		t.Fatalf("the output printed should match; it misses %q", m)
	}
	// Rows in another order are the same output; a row shown twice needs
	// two printed.
	rows, err := NewShown(1, []string{"pod/p-6vd9c   Running   1s", "pod/p-x7z2q   Running   1s", "pod/p-zz9x4   Pending   1s"})
	if err != nil {
		t.Fatal(err)
	}
	if m := rows.Missing("pod/p-bbbbb   Pending   3s\npod/p-ccccc   Running   3s\npod/p-ddddd   Running   3s\n"); m != "" {
		t.Errorf("rows in another order should match; they miss %q", m)
	}
	if m := rows.Missing("pod/p-bbbbb   Pending   3s\npod/p-ccccc   Running   3s\n"); m != "pod/p-x7z2q   Running   1s" {
		t.Errorf("two rows shown, one printed: Missing = %q", m)
	}
	// A block is typed at once: output can land on the echo of a later line.
	crd, err := NewShown(1, []string{"customresourcedefinition.apiextensions.k8s.io/networks.samplecrd.k8s.io created"})
	if err != nil {
		t.Fatal(err)
	}
	typed := []string{"kubectl apply -f crd/network.yaml", "kubectl apply -f example/example-network.yaml"}
	echoed := "kubectl apply -f example/example-network.yamlcustomresourcedefinition.apiextensions.k8s.io/networks.samplecrd.k8s.io created\n"
	if m := crd.Missing(echoed, typed...); m != "" {
		t.Errorf("output after a typed line's echo should match; it misses %q", m)
	}
	if m := crd.Missing("kubectl get podscustomresourcedefinition.apiextensions.k8s.io/networks.samplecrd.k8s.io created\n", typed...); m == "" {
		t.Error("text before the output that is no typed line must not be skipped")
	}
	// Each change is one a reader would notice: the check must fail, and
	// name the line.
	for _, tc := range []struct{ name, from, to, missing string }{
		{"another namespace", `"crd-demo/example-network"`, `"tutorial/example-network"`, shown[3]},
		{"another value", "True    2m15s", "False   2m15s", shown[2]},
		{"a word more", "Running   0   12s", "Running   0   12s   Ready", shown[5]},
		{"another name", "pod/custompod-sample-x7z2q", "pod/custompod-other-x7z2q", shown[5]},
		{"a name of another shape", "custompod-sample-x7z2q", "custompod-sample-abcde", shown[5]},
		{"another level", "INFO\tsetup", "ERROR\tsetup", shown[8]},
		{"another caller", "round_trippers.go:640]", "request.go:640]", shown[7]},
		{"a line fewer", "pod/custompod-sample-x7z2q   1/1   Running   0   12s\n", "", shown[5]},
	} {
		changed := strings.Replace(printed, tc.from, tc.to, 1)
		if changed == printed {
			t.Fatalf("%s: %q is not in the output", tc.name, tc.from)
		}
		if m := s.Missing(changed); m != tc.missing {
			t.Errorf("%s: Missing = %q, want %q", tc.name, m, tc.missing)
		}
	}
}

// TestReaderStepsRefuse covers what a chapter may not do.
func TestReaderStepsRefuse(t *testing.T) {
	for _, tc := range []struct{ name, md, err string }{
		{"a comment that sets a directory", "<!-- runnable dir=crd-demo -->\n```sh\nmake\n```\n", "sets state a reader does not see"},
		{"Ctrl-C in no terminal", "Stop it with Ctrl-C.\n", "names no terminal"},
		{"an unknown check", "<!-- check colour=blue -->\n```sh\nmake\n```\n", "unknown check"},
		{"wait with expect", "<!-- check wait=\"x\" expect=\"y\" -->\n```sh\nmake\n```\n", "takes no expect"},
		{"reset that keeps running", "<!-- check reset wait=\"x\" -->\n```sh\nmake\n```\n", "cannot keep running"},
		{"closing the first terminal", "Close the first terminal.\n", "cannot be closed"},
	} {
		_, _, err := parse(t, tc.md)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: got %v, want an error saying %q", tc.name, err, tc.err)
		}
	}
}

// TestSavedListings: a listing whose lead-in says "save it as `PATH`" is a
// file the reader writes, from the terminal the lead-in names; any other
// listing, and one the text says not to type, is only read.
func TestSavedListings(t *testing.T) {
	md := "Replace the types; save it as `api/v1/types.go`:\n\n" +
		"<!-- excerpt: kubebuilder-demo/api/v1/custompod_types.go -->\n```go\npackage v1\n\n// A comment.\n```\n\n" +
		"Only to read:\n\n```go\npackage v2\n```\n\n" +
		"In the second terminal, save this as `config/x.yaml`:\n\n```yaml\na: 1\n```\n\n" +
		"Not run here; save it as `other.go`:\n\n```go\npackage other\n```\n"
	steps, skipped, err := parse(t, md)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 2 {
		t.Fatalf("want 2 steps (the two files saved), got %+v", steps)
	}
	if s := steps[0]; s.File != "api/v1/types.go" || s.Terminal != 1 || !reflect.DeepEqual(s.Content, []string{"package v1", "", "// A comment."}) || s.Commands != nil {
		t.Errorf("first listing: got %+v", s)
	}
	if s := steps[1]; s.File != "config/x.yaml" || s.Terminal != 2 || !reflect.DeepEqual(s.Content, []string{"a: 1"}) {
		t.Errorf("second listing: got %+v", s)
	}
	if len(skipped) != 1 || skipped[0].Reason != "Not run here" {
		t.Errorf("skipped: want the listing not run here, got %+v", skipped)
	}
	if w := steps[1].Where("t.md", 2); !strings.Contains(w, "config/x.yaml") {
		t.Errorf("Where: %q does not name the file", w)
	}
}

// TestExercises: a paragraph that closes terminals, after its Ctrl-C; the
// reset block kept apart; each "## Exercise" section's first, last and
// midway steps (midway: the first command after one that keeps running,
// or the middle command).
func TestExercises(t *testing.T) {
	md := "# Workshop\n\n```sh\nmake cluster-up\n```\n\n" +
		"## Exercise 1: a server\n\n```sh\nmake install\n```\n\n" +
		"In a second terminal:\n\n<!-- check wait=\"Starting\" -->\n```sh\nmake run\n```\n\n" +
		"Back in the first terminal:\n\n```sh\nkubectl get pods\n```\n\n```sh\nkubectl get events\n```\n\n" +
		"Stop it: Ctrl-C in the second terminal. Close the second terminal.\n\n" +
		"## Exercise 2: files\n\n```sh\ngit apply x.patch\n```\n\n```sh\nmake test\n```\n\n```sh\ngit checkout -- .\n```\n\n" +
		"## When an exercise goes wrong\n\nStop what runs, then:\n\n<!-- check reset -->\n```sh\nmake workshop-reset\n```\n"
	steps, _, err := parse(t, md)
	if err != nil {
		t.Fatal(err)
	}
	var order, resets []int
	for i, s := range steps {
		if s.Check.Reset {
			resets = append(resets, i)
			continue
		}
		order = append(order, i)
	}
	if len(resets) != 1 || steps[resets[0]].Commands[0] != "make workshop-reset" {
		t.Fatalf("reset steps: %v", resets)
	}
	// Steps: 0 cluster-up, 1 install, 2 run, 3 get pods, 4 get events,
	// 5 Ctrl-C, 6 close, 7 apply, 8 test, 9 checkout.
	if s := steps[order[5]]; !reflect.DeepEqual(s.Interrupt, []int{2}) || s.Close != nil {
		t.Errorf("step 6: %+v, want Ctrl-C in the second terminal only", s)
	}
	if s := steps[order[6]]; !reflect.DeepEqual(s.Close, []int{2}) || s.Interrupt != nil || s.Section != "Exercise 1: a server" {
		t.Errorf("step 7: %+v, want the second terminal closed, in exercise 1", s)
	}
	got := exerciseSections(steps, order)
	want := map[string]exercise{
		"Exercise 1: a server": {first: 1, midway: 3, last: 6, slug: "exercise-1"},
		"Exercise 2: files":    {first: 7, midway: 8, last: 9, slug: "exercise-2"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("exercises:\n got %+v\nwant %+v", got, want)
	}
}

// TestShownComplete: a block whose output the text shows whole (check
// complete) fails on a printed line the text leaves out; an echo of a typed
// line is not output.
func TestShownComplete(t *testing.T) {
	s, err := NewShown(10, []string{"Only in b: x.go", "Files a/y.go and b/y.go differ"})
	if err != nil {
		t.Fatal(err)
	}
	typed := []string{"diff -rq a b"}
	whole := "diff -rq a b\nOnly in b: x.go\n" + prompt + "diff -rq a b\nFiles a/y.go and b/y.go differ\n#" + strings.Repeat(" ", 60) + "\n\n"
	if e := s.Extra(whole, typed...); e != "" {
		t.Errorf("every printed line shown: Extra = %q", e)
	}
	// The second of two typed lines, echoed as typed ahead at the end of the
	// first one's output, then again after its prompt, on the same line.
	twice := []string{"diff -rq a b", "diff -rq c d"}
	glued := "Only in b: x.go\ndiff -rq c d" + prompt + "diff -rq c d\nFiles a/y.go and b/y.go differ\n"
	if e := s.Extra(glued, twice...); e != "" {
		t.Errorf("a typed-ahead echo glued to the prompt and the echo again: Extra = %q", e)
	}
	if e := s.Extra("Only in b: x.go\nOnly in b: z.go\nFiles a/y.go and b/y.go differ\n", typed...); e != "Only in b: z.go" {
		t.Errorf("a line printed and not shown: Extra = %q, want it", e)
	}
	c, err := parseCheck("check fails complete")
	if err != nil || !c.Complete || !c.Fails {
		t.Errorf("parseCheck(fails complete) = %+v, %v", c, err)
	}
}

// TestBlockOutput: the end marker typed ahead is no output, whether its echo
// starts a line of output or runs into its own prompt line.
func TestBlockOutput(t *testing.T) {
	const marker = ": reader-step-4"
	history := []string{
		prompt + "diff -rq a b",
		marker + "Only in b: x.go",
		"Files a/y.go and b/y.go differ",
		marker + prompt + marker,
		prompt,
	}
	got := blockOutput(history, marker)
	if want := "Only in b: x.go\nFiles a/y.go and b/y.go differ\n"; got != want {
		t.Errorf("blockOutput = %q, want %q", got, want)
	}
}
