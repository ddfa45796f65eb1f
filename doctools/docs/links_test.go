package docs

import (
	"reflect"
	"testing"
)

// TestLinksOverLines: a link whose text a wrapped paragraph splits over two
// lines is found, at the line where it starts; one in `code` is not.
func TestLinksOverLines(t *testing.T) {
	text := "# T\n\nload the image instead: [chapter 3, step\n7](b.md#step-7) and `[x](c.md)` and\n[d](d.md).\n\n```sh\n[e](e.md)\n```\n"
	d, err := ParseDoc("a.md", text)
	if err != nil {
		t.Fatal(err)
	}
	want := []Link{
		{Line: 3, Text: "chapter 3, step 7", Dest: "b.md#step-7"},
		{Line: 5, Text: "d", Dest: "d.md"},
	}
	if got := d.Links(); !reflect.DeepEqual(got, want) {
		t.Errorf("Links() = %+v, want %+v", got, want)
	}
}
