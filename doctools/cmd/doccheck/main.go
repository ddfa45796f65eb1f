// Command doccheck checks what ties the tutorial's pages together:
//
//   - every relative link and image in README*.md, the modules' READMEs and
//     docs/ (the Chinese pages in docs/zh/ too) names a file that exists, and
//     every #fragment a heading of the page it points into;
//   - every Chinese page (README.zh.md, docs/zh/X.md) keeps its English
//     twin's code blocks, the comment before each, and its generated tables,
//     in order, and every page of the learner path has a twin.
//
// It exits 1 when anything fails, naming the file, the line, what was
// expected and what was seen. See package example.com/k8s-demo/doctools/docs.
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
	root := flag.String("root", "", "the repository root (default: found from the working directory)")
	flag.Parse()
	r, err := docs.Root(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "doccheck:", err)
		os.Exit(2)
	}
	*root = r
	var files []string
	for _, pattern := range []string{"README*.md", "*/README.md", "docs/*.md", "docs/zh/*.md"} {
		m, _ := filepath.Glob(filepath.Join(*root, pattern))
		files = append(files, m...)
	}
	sort.Strings(files)
	// Each check returns what it found wrong, or an error when it could not
	// check at all.
	checks := []func() ([]string, error){
		func() ([]string, error) { return asStrings(docs.CheckLinks(*root, files)) },
		func() ([]string, error) { return asStrings(docs.CheckTwins(*root)) },
		func() ([]string, error) { return docs.CheckWorkshop(*root) },
		func() ([]string, error) { return docs.CheckWorkshopZh(*root) },
		func() ([]string, error) { return docs.CheckRejected(*root) },
		func() ([]string, error) { return docs.CheckEnglishLinks(*root) },
		func() ([]string, error) { return docs.CheckChineseDiagrams(*root) },
		func() ([]string, error) { return docs.CheckChapterBenchLinks(*root) },
	}
	failed := false
	for _, check := range checks {
		problems, err := check()
		if err != nil {
			fmt.Fprintln(os.Stderr, "doccheck:", err)
			os.Exit(2)
		}
		for _, p := range problems {
			fmt.Fprintln(os.Stderr, p)
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
	fmt.Printf("doccheck: %d pages: every link and anchor resolves; every Chinese page keeps its English page's code blocks and uses no rendering the glossary rejects and says which links lead to English and embeds only Chinese diagrams; the chapters state bench figures rather than link bench.md; the workshop's agendas add up\n", len(files))
}

// asStrings turns a check's problems, of whatever type, into their messages.
func asStrings[T any](problems []T, err error) ([]string, error) {
	out := make([]string, len(problems))
	for i, p := range problems {
		out[i] = fmt.Sprint(p)
	}
	return out, err
}
