package reader

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"strings"
)

// Edit is how a listing changes a file the reader saved before, as an
// editor would: a listing may replace one function of a Go file (its doc
// comment with it), replace the file's imports, or be added at the end of
// the file. A chapter can then write a file in short listings with prose
// between, as the kubebuilder book does.
type Edit struct {
	Kind EditKind
	// Func names the function or method a listing replaces (EditFunc).
	Func string
}

// EditKind is what a listing does to its file.
type EditKind int

const (
	// EditSave saves the listing as the whole file.
	EditSave EditKind = iota
	// EditFunc replaces one function of a Go file, found by its name.
	EditFunc
	// EditImports replaces a Go file's import declarations.
	EditImports
	// EditAppend adds the listing at the end of the file.
	EditAppend
)

// Apply changes the file at path as e says, with the listing's lines. A Go
// file is formatted after the change, as an editor formats it on save.
func (e Edit) Apply(path string, listing []string) error {
	text := strings.Join(listing, "\n") + "\n"
	if e.Kind == EditSave {
		return os.WriteFile(path, []byte(text), 0o644)
	}
	old, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("the listing changes %s, which is not there: save it first (%w)", path, err)
	}
	var out []byte
	switch e.Kind {
	case EditAppend:
		out = append(bytes.TrimRight(old, "\n"), '\n', '\n')
		out = append(out, text...)
	case EditFunc, EditImports:
		start, end, err := e.span(path, old)
		if err != nil {
			return err
		}
		out = append(append(append([]byte{}, old[:start]...), bytes.TrimRight([]byte(text), "\n")...), old[end:]...)
	default:
		return fmt.Errorf("unknown edit %d", e.Kind)
	}
	if strings.HasSuffix(path, ".go") {
		formatted, err := format.Source(out)
		if err != nil {
			return fmt.Errorf("%s after the listing is not Go that gofmt can read: %w", path, err)
		}
		out = formatted
	}
	return os.WriteFile(path, out, 0o644)
}

// span is where in src the listing goes: the function named e.Func, from
// its doc comment to its closing brace; or the import declarations, from
// the first to the end of the last.
func (e Edit) span(path string, src []byte) (start, end int, err error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
	if err != nil {
		return 0, 0, fmt.Errorf("%s is not Go that the listing can be put into: %w", path, err)
	}
	if e.Kind == EditImports {
		var first, last ast.Decl
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT {
				if first == nil {
					first = g
				}
				last = g
			}
		}
		if first == nil {
			return 0, 0, fmt.Errorf("%s has no imports for the listing to replace", path)
		}
		return fset.Position(first.Pos()).Offset, fset.Position(last.End()).Offset, nil
	}
	var found []*ast.FuncDecl
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == e.Func {
			found = append(found, fn)
		}
	}
	switch len(found) {
	case 0:
		return 0, 0, fmt.Errorf("%s has no function %s for the listing to replace", path, e.Func)
	case 1:
	default:
		return 0, 0, fmt.Errorf("%s has %d functions named %s: the listing cannot say which it replaces", path, len(found), e.Func)
	}
	fn := found[0]
	from := fn.Pos()
	if fn.Doc != nil {
		from = fn.Doc.Pos()
	}
	return fset.Position(from).Offset, fset.Position(fn.End()).Offset, nil
}
