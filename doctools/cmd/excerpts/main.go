// Command excerpts keeps the code excerpts of the tutorial (docs/*.md) equal
// to the source files they are taken from.
//
//	excerpts -check            # exit 1, with a diff, if a block differs from its source
//	excerpts -update           # rewrite the blocks from their sources
//	excerpts -check FILE.md... # only these files
//
// A block is an excerpt when the line before its opening fence is
//
//	<!-- excerpt: PATH -->                               the whole file
//	<!-- excerpt: PATH#NAME -->                          between "+docs:begin NAME" and "+docs:end NAME"
//	<!-- excerpt: PATH from "REGEXP" to "REGEXP" -->     the one line matching the first, through the next matching the second
//
// with PATH relative to the repository root. See package
// example.com/k8s-demo/doctools/docs.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"example.com/k8s-demo/doctools/docs"
)

func main() {
	check := flag.Bool("check", false, "report blocks that differ from their source, and exit 1 if any does")
	update := flag.Bool("update", false, "rewrite blocks that differ from their source")
	root := flag.String("root", "", "the repository root, which excerpt paths are relative to (default: found from the working directory)")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: excerpts -check|-update [-root DIR] [FILE.md ...]\n\nWith no files, every docs/*.md and docs/zh/*.md of the repository.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *check == *update {
		flag.Usage()
		os.Exit(2)
	}
	r, err := docs.Root(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "excerpts:", err)
		os.Exit(2)
	}
	*root = r
	files := flag.Args()
	if len(files) == 0 {
		// The Chinese twins quote the same sources: -update keeps them
		// in step with their English pages.
		files, _ = filepath.Glob(filepath.Join(*root, "docs", "*.md"))
		zh, _ := filepath.Glob(filepath.Join(*root, "docs", "zh", "*.md"))
		files = append(files, zh...)
		sort.Strings(files)
	}
	total, bad := 0, 0
	for _, f := range files {
		n, problems, err := docs.CheckExcerpts(*root, f, *update)
		if err != nil {
			fmt.Fprintln(os.Stderr, "excerpts:", err)
			os.Exit(2)
		}
		total += n
		for _, p := range problems {
			fmt.Fprintln(os.Stderr, p.Error())
			bad++
		}
	}
	if bad > 0 {
		if *check {
			fmt.Fprintf(os.Stderr, "excerpts: %d of %d excerpts differ from their source or cannot be read; run scripts/excerpts.sh -update after checking the diff\n", bad, total)
		}
		os.Exit(1)
	}
	verb := "match their source"
	if *update {
		verb = "are up to date"
	}
	fmt.Printf("excerpts: %d excerpts in %d files %s\n", total, len(files), verb)
}
