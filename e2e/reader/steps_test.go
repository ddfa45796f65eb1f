package reader

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"example.com/k8s-demo/e2e/docs"
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
}

// TestReaderStepsRefuse covers what a chapter may not do.
func TestReaderStepsRefuse(t *testing.T) {
	for _, tc := range []struct{ name, md, err string }{
		{"a comment that sets a directory", "<!-- runnable dir=crd-demo -->\n```sh\nmake\n```\n", "sets state a reader does not see"},
		{"Ctrl-C in no terminal", "Stop it with Ctrl-C.\n", "names no terminal"},
		{"an unknown check", "<!-- check colour=blue -->\n```sh\nmake\n```\n", "unknown check"},
		{"wait with expect", "<!-- check wait=\"x\" expect=\"y\" -->\n```sh\nmake\n```\n", "takes no expect"},
	} {
		_, _, err := parse(t, tc.md)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: got %v, want an error saying %q", tc.name, err, tc.err)
		}
	}
}
