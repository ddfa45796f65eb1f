package reader

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestListingEdits: a chapter writes a Go file in steps. The lead-ins say
// which function a listing replaces, that it replaces the imports, or that
// it goes at the end; the runner does it as an editor would, and gofmt's
// the file.
func TestListingEdits(t *testing.T) {
	md := "Save it as `c.go`:\n\n```go\npackage c\n\nimport \"fmt\"\n\n// Hello says hello.\nfunc Hello() { fmt.Println(\"hello\") }\n\nfunc Other() {}\n```\n\n" +
		"Now replace `Hello` in `c.go` with a version that names whom:\n\n```go\n// Hello greets name.\nfunc Hello(name string) { fmt.Println(\"hello\", strings.ToUpper(name)) }\n```\n\n" +
		"It needs strings: replace the imports of `c.go`:\n\n```go\nimport (\n\t\"fmt\"\n\t\"strings\"\n)\n```\n\n" +
		"And add them to the end of `c.go`:\n\n```go\nfunc Bye() {}\n\nfunc Later() {}\n```\n"
	steps, _, err := parse(t, md)
	if err != nil {
		t.Fatal(err)
	}
	want := []Edit{{Kind: EditSave}, {Kind: EditFunc, Func: "Hello"}, {Kind: EditImports}, {Kind: EditAppend}}
	if len(steps) != len(want) {
		t.Fatalf("want %d listings, got %+v", len(want), steps)
	}
	path := filepath.Join(t.TempDir(), "c.go")
	for i, s := range steps {
		if s.File != "c.go" || s.Edit != want[i] {
			t.Errorf("listing %d: got %s %+v, want c.go %+v", i+1, s.File, s.Edit, want[i])
		}
		if err := s.Edit.Apply(path, s.Content); err != nil {
			t.Fatalf("listing %d: %v", i+1, err)
		}
	}
	got, _ := os.ReadFile(path)
	const final = `package c

import (
	"fmt"
	"strings"
)

// Hello greets name.
func Hello(name string) { fmt.Println("hello", strings.ToUpper(name)) }

func Other() {}

func Bye() {}

func Later() {}
`
	if string(got) != final {
		t.Errorf("after the four listings:\n%s\nwant:\n%s", got, final)
	}

	// A function the file does not have, and a file not saved yet.
	err = Edit{Kind: EditFunc, Func: "Missing"}.Apply(path, []string{"func Missing() {}"})
	if err == nil || !strings.Contains(err.Error(), "has no function Missing") {
		t.Errorf("replacing a function the file lacks: %v", err)
	}
	err = Edit{Kind: EditAppend}.Apply(filepath.Join(t.TempDir(), "none.go"), []string{"func X() {}"})
	if err == nil || !strings.Contains(err.Error(), "save it first") {
		t.Errorf("adding to a file never saved: %v", err)
	}
}
