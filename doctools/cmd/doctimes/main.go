// Command doctimes writes the times of docs/README.md's tables (and its
// Chinese twin's): each page's reading time, from its prose's words, and the
// time its commands took the reader runner, from docs/reader-times.tsv.
//
//	go run ./cmd/doctimes [-root DIR] [-from FILE] [-check] [-words]
//
// -from takes a reader run's timings (.cache/reader-times.tsv, which
// `make reader` writes) into docs/reader-times.tsv first: the zsh pass's,
// where each chapter runs alone from a fresh clone. -check writes nothing and
// fails when a table is stale (make verify). -words writes nothing and prints
// the prose words of each page of the reading order, to see where a cut
// would count.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"example.com/k8s-demo/doctools/docs"
)

const timesFile = "docs/reader-times.tsv"

func main() {
	rootFlag := flag.String("root", "", "the repository root (default: found from the working directory)")
	from := flag.String("from", "", "a reader run's timings to take into "+timesFile+" first")
	check := flag.Bool("check", false, "write nothing; fail if a table's times are not what the figures give")
	words := flag.Bool("words", false, "write nothing; print the prose words of each page of the reading order")
	flag.Parse()
	if *words {
		if err := printWords(*rootFlag); err != nil {
			fmt.Fprintln(os.Stderr, "doctimes:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*rootFlag, *from, *check); err != nil {
		fmt.Fprintln(os.Stderr, "doctimes:", err)
		os.Exit(1)
	}
}

func run(root, from string, check bool) error {
	root, err := docs.Root(root)
	if err != nil {
		return err
	}
	if from != "" {
		if err := importTimes(from, filepath.Join(root, timesFile)); err != nil {
			return err
		}
	}
	rt, err := docs.ReadReaderTimes(filepath.Join(root, timesFile))
	if err != nil {
		return err
	}
	stale := 0
	for _, index := range []string{"docs/README.md", "docs/zh/README.md"} {
		want, words, err := docs.UpdateTimes(root, index, rt)
		if err != nil {
			return err
		}
		if err := docs.CheckReadingOrder(words, docs.ReadingOrderLimit); err != nil {
			return err
		}
		path := filepath.Join(root, index)
		have, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if string(have) == want {
			continue
		}
		if check {
			fmt.Fprintf(os.Stderr, "%s: its times are stale (the reading order is now %d words): run `cd doctools && go run ./cmd/doctimes`\n", index, words)
			stale++
			continue
		}
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			return err
		}
		fmt.Printf("wrote the times into %s (the reading order: %d words)\n", index, words)
	}
	if stale > 0 {
		return fmt.Errorf("%d index pages with stale times", stale)
	}
	if err := docs.CheckWordLimits(root, docs.PageWordLimits); err != nil {
		return err
	}
	if check {
		fmt.Println("doctimes: the index pages' times are current")
	}
	return nil
}

// importTimes writes the zsh pass's lines, and the workshop exercises', of a reader run's timings
// ("# commit C", then "PASS<tab>PAGE<tab>SECONDS") as "PAGE<tab>SECONDS".
func importTimes(from, to string) error {
	f, err := os.Open(from)
	if err != nil {
		return err
	}
	defer f.Close()
	var b strings.Builder
	b.WriteString("# The seconds the reader runner took to type each chapter's steps (the zsh\n")
	b.WriteString("# pass: each chapter alone, from a fresh clone), and each workshop exercise's\n")
	b.WriteString("# (the workshop pass, typed whole after it was stopped midway and reset). Written by\n")
	b.WriteString("# `cd doctools && go run ./cmd/doctimes -from ../.cache/reader-times.tsv`.\n")
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "# commit ") {
			b.WriteString(line + "\n")
			continue
		}
		fields := strings.Split(line, "\t")
		// The chapters from the zsh pass; the workshop's exercises
		// ("workshop#exercise-1", each typed whole after its restart) from
		// the workshop pass, for the agenda.
		if len(fields) != 3 || fields[0] != "zsh" && (fields[0] != "workshop" || !strings.Contains(fields[1], "#")) {
			continue
		}
		fmt.Fprintf(&b, "%s\t%s\n", fields[1], fields[2])
		n++
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%s holds no zsh pass's timings", from)
	}
	return os.WriteFile(to, []byte(b.String()), 0o644)
}

// printWords prints each page of the reading order with its prose words,
// and their sum against ReadingOrderLimit.
func printWords(root string) error {
	root, err := docs.Root(root)
	if err != nil {
		return err
	}
	pages, err := docs.ReadingOrderWords(root)
	if err != nil {
		return err
	}
	total := 0
	for _, p := range pages {
		fmt.Printf("%6d  %s\n", p.Words, p.Page)
		total += p.Words
	}
	fmt.Printf("%6d  the reading order (limit %d)\n", total, docs.ReadingOrderLimit)
	return nil
}
