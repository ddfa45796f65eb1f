package main

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The scaffolds' CustomPod controllers: kubebuilder-demo's package, and
// operator-demo's copy in its multigroup layout.
const (
	kubebuilderController = "kubebuilder-demo/internal/controller"
	operatorController    = "operator-demo/internal/controller/zhhnzw"
)

// sameCode says, for comparison.md (in Chinese for its twin), how
// operator-demo's CustomPod controller differs from kubebuilder-demo's,
// file by file, as cmp sees it: which files are the same byte for byte,
// and in what the others differ. Nothing on the page says "byte for byte"
// unless this does.
func sameCode(root string, zh bool) (string, error) {
	names, err := filepath.Glob(filepath.Join(root, kubebuilderController, "*.go"))
	if err != nil {
		return "", err
	}
	var same int
	differ := map[string]int{} // how a file differs (its kinds, joined) → files
	for _, kb := range names {
		name := filepath.Base(kb)
		a, err := os.ReadFile(kb)
		if err != nil {
			return "", err
		}
		b, err := os.ReadFile(filepath.Join(root, operatorController, name))
		if os.IsNotExist(err) {
			differ[onlyInKubebuilder]++
			continue
		} else if err != nil {
			return "", err
		}
		if bytes.Equal(a, b) {
			same++
			continue
		}
		differ[strings.Join(howLinesDiffer(string(a), string(b)), ",")]++
	}
	ours, theirs := strings.TrimPrefix(operatorController, "operator-demo/"), strings.TrimPrefix(kubebuilderController, "kubebuilder-demo/")
	hows := slices.Sorted(maps.Keys(differ))
	var parts []string
	for _, how := range hows {
		parts = append(parts, describeDifference(differ[how], strings.Split(how, ","), zh, len(hows) == 1))
	}
	if zh {
		s := fmt.Sprintf("operator-demo 的 CustomPod 控制器（`%s/`）与 kubebuilder-demo 的（`%s/`）用 `cmp` 逐个文件比较：%d 个文件中有 %d 个逐字节相同", ours, theirs, len(names), same)
		if len(parts) > 0 {
			s += "；" + strings.Join(parts, "，")
		}
		return s + "。", nil
	}
	s := fmt.Sprintf("operator-demo's CustomPod controller (`%s/`) against kubebuilder-demo's (`%s/`), file by file with `cmp`: %d of %d files are the same byte for byte", ours, theirs, same, len(names))
	switch {
	case len(parts) == 1:
		s += "; " + parts[0]
	case len(parts) > 1:
		s += "; of the others, " + strings.Join(parts, ", ")
	}
	return s + ".", nil
}

// The kinds of difference howLinesDiffer names, in English and Chinese.
const (
	packageClause     = "package"
	importPath        = "import"
	otherLines        = "other"
	onlyInKubebuilder = "only"
)

var differenceWords = map[string][2]string{
	packageClause:     {"the package clause", "package 子句"},
	importPath:        {"an import path", "一个导入路径"},
	otherLines:        {"other lines", "其他行"},
	onlyInKubebuilder: {"being only in kubebuilder-demo", "只在 kubebuilder-demo 里"},
}

// describeDifference says that n files differ in kinds: "the other 13
// differ in …" when it is the only kind (alone), "10 differ in …" else.
func describeDifference(n int, kinds []string, zh, alone bool) string {
	words := make([]string, len(kinds))
	for i, k := range kinds {
		words[i] = differenceWords[k][0]
		if zh {
			words[i] = differenceWords[k][1]
		}
	}
	if zh {
		what := strings.Join(words, "、")
		if what[0] < 0x80 {
			what = " " + what // a space between Chinese and Latin text
		}
		if len(kinds) == 1 && kinds[0] == onlyInKubebuilder {
			return fmt.Sprintf("%d 个%s", n, what)
		}
		if alone {
			return fmt.Sprintf("其余 %d 个的差别在于%s", n, what)
		}
		return fmt.Sprintf("%d 个的差别在于%s", n, what)
	}
	what := strings.Join(words, " and ")
	if alone {
		return fmt.Sprintf("the other %d %s in %s", n, verb(n), what)
	}
	return fmt.Sprintf("%d %s in %s", n, verb(n), what)
}

// howLinesDiffer names what differs between two versions of a file whose
// lines pair up one to one: the package clause, import paths (the module's
// own), or other lines.
func howLinesDiffer(a, b string) []string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	if len(la) != len(lb) {
		return []string{otherLines}
	}
	kinds := map[string]bool{}
	for i := range la {
		switch {
		case la[i] == lb[i]:
		case strings.HasPrefix(la[i], "package ") && strings.HasPrefix(lb[i], "package "):
			kinds[packageClause] = true
		case strings.Contains(la[i], `"example.com/k8s-demo/`) && strings.Contains(lb[i], `"example.com/k8s-demo/`):
			kinds[importPath] = true
		default:
			kinds[otherLines] = true
		}
	}
	var ks []string
	for _, k := range []string{packageClause, importPath, otherLines} {
		if kinds[k] {
			ks = append(ks, k)
		}
	}
	return ks
}

// verb is "differ" agreeing with n files.
func verb(n int) string {
	if n == 1 {
		return "differs"
	}
	return "differ"
}
