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

// sameCode says, for comparison.md, how operator-demo's CustomPod controller
// differs from kubebuilder-demo's, file by file, as cmp sees it: which files
// are the same byte for byte, and in what the others differ. Nothing on the
// page says "byte for byte" unless this does.
func sameCode(root string) (string, error) {
	names, err := filepath.Glob(filepath.Join(root, kubebuilderController, "*.go"))
	if err != nil {
		return "", err
	}
	var same int
	differ := map[string]int{} // how a file differs → files
	for _, kb := range names {
		name := filepath.Base(kb)
		a, err := os.ReadFile(kb)
		if err != nil {
			return "", err
		}
		b, err := os.ReadFile(filepath.Join(root, operatorController, name))
		if os.IsNotExist(err) {
			differ["being only in kubebuilder-demo"]++
			continue
		} else if err != nil {
			return "", err
		}
		if bytes.Equal(a, b) {
			same++
			continue
		}
		differ[howLinesDiffer(string(a), string(b))]++
	}
	s := fmt.Sprintf("operator-demo's CustomPod controller (`%s/`) against kubebuilder-demo's (`%s/`), file by file with `cmp`: %d of %d files are the same byte for byte",
		strings.TrimPrefix(operatorController, "operator-demo/"), strings.TrimPrefix(kubebuilderController, "kubebuilder-demo/"), same, len(names))
	hows := slices.Sorted(maps.Keys(differ))
	switch {
	case len(hows) == 1:
		s += fmt.Sprintf("; the other %d %s in %s", differ[hows[0]], verb(differ[hows[0]]), hows[0])
	case len(hows) > 1:
		var parts []string
		for _, how := range hows {
			parts = append(parts, fmt.Sprintf("%d %s in %s", differ[how], verb(differ[how]), how))
		}
		s += "; of the others, " + strings.Join(parts, ", ")
	}
	return s + ".", nil
}

// howLinesDiffer names what differs between two versions of a file whose
// lines pair up one to one: the package clause, import paths (the module's
// own), or other lines.
func howLinesDiffer(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	if len(la) != len(lb) {
		return "other lines"
	}
	kinds := map[string]bool{}
	for i := range la {
		switch {
		case la[i] == lb[i]:
		case strings.HasPrefix(la[i], "package ") && strings.HasPrefix(lb[i], "package "):
			kinds["the package clause"] = true
		case strings.Contains(la[i], `"example.com/k8s-demo/`) && strings.Contains(lb[i], `"example.com/k8s-demo/`):
			kinds["an import path"] = true
		default:
			kinds["other lines"] = true
		}
	}
	var ks []string
	for _, k := range []string{"the package clause", "an import path", "other lines"} {
		if kinds[k] {
			ks = append(ks, k)
		}
	}
	return strings.Join(ks, " and ")
}

// verb is "differ" agreeing with n files.
func verb(n int) string {
	if n == 1 {
		return "differs"
	}
	return "differ"
}
