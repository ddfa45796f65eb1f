// Command portable fails when the repository's shell code would break on a
// Mac (see package example.com/k8s-demo/doctools/portable for the rules):
//
//   - every script make or CI runs (scripts/, .ci/run): nothing newer than
//     bash 3.2; and, but for the Linux-only ones below, no GNU-only option;
//   - every shell block a reader types (```sh in README.md, docs/ and the
//     modules' READMEs, but for excerpts of scripts): no GNU-only option,
//     and nothing zsh reads differently.
//
// `make verify` runs it (scripts/verify.sh).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"example.com/k8s-demo/doctools/docs"
	"example.com/k8s-demo/doctools/portable"
)

// linuxOnly are the scripts that need Linux anyway (debootstrap, dockerd as
// root, CI's machine): they may use GNU tools, though not bash 4.
var linuxOnly = map[string]string{
	"scripts/kind-node-image.sh":     "debootstrap builds the node image's root filesystem",
	"scripts/offline-base-images.sh": "builds the kind suites' base images from the node image's root filesystem",
	"scripts/ci/docker.sh":           "CI only: installs Debian's docker.io",
	"scripts/ci/kind-prereqs.sh":     "CI only: installs Debian's debootstrap",
	"scripts/ci/disk.sh":             "CI only: checks CI's disk before a run",
	".ci/run":                        "CI only",
}

func main() {
	root := flag.String("root", "", "the repository root (default: found from the working directory)")
	flag.Parse()
	r, err := docs.Root(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "portable:", err)
		os.Exit(2)
	}
	*root = r
	findings, n, err := check(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "portable:", err)
		os.Exit(2)
	}
	for _, f := range findings {
		fmt.Fprintln(os.Stderr, f)
	}
	if len(findings) > 0 {
		fmt.Fprintf(os.Stderr, "portable: %d of these in %d scripts and typed shell blocks; macOS has bash 3.2, BSD tools and zsh\n", len(findings), n)
		os.Exit(1)
	}
	fmt.Printf("portable: %d scripts and typed shell blocks use nothing that bash 3.2, BSD tools or zsh lack\n", n)
}

func check(root string) ([]portable.Finding, int, error) {
	var out []portable.Finding
	n := 0
	scripts, err := scriptFiles(root)
	if err != nil {
		return nil, 0, err
	}
	for _, rel := range scripts {
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			return nil, 0, err
		}
		_, linux := linuxOnly[rel]
		f, err := portable.Check(rel, 1, string(b), portable.Checks{GNU: !linux})
		if err != nil {
			return nil, 0, err
		}
		out = append(out, f...)
		n++
	}
	mds, err := markdownFiles(root)
	if err != nil {
		return nil, 0, err
	}
	for _, rel := range mds {
		d, err := docs.ReadDoc(filepath.Join(root, rel))
		if err != nil {
			return nil, 0, err
		}
		for _, b := range d.Blocks {
			// An excerpt of a script is checked as the script.
			if b.Lang() != "sh" || strings.HasPrefix(b.Directive, "excerpt:") {
				continue
			}
			f, err := portable.Check(rel, b.Fence+2, strings.Join(b.Content, "\n")+"\n", portable.Checks{GNU: true, Typed: true})
			if err != nil {
				return nil, 0, err
			}
			out = append(out, f...)
			n++
		}
	}
	return out, n, nil
}

// scriptFiles: .ci/run and every file under scripts/ that is a shell script
// (a .sh name or a bash shebang), relative to root, sorted.
func scriptFiles(root string) ([]string, error) {
	out := []string{".ci/run"}
	err := filepath.WalkDir(filepath.Join(root, "scripts"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if strings.HasSuffix(path, ".sh") {
			out = append(out, filepath.ToSlash(rel))
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.HasPrefix(string(b), "#!/usr/bin/env bash") || strings.HasPrefix(string(b), "#!/bin/bash") {
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// markdownFiles: README.md, docs/*.md and each module's README.md.
func markdownFiles(root string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, pattern := range []string{"README.md", "docs/*.md", "*/README.md"} {
		m, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			return nil, err
		}
		for _, p := range m {
			rel, _ := filepath.Rel(root, p)
			if rel = filepath.ToSlash(rel); !seen[rel] {
				seen[rel] = true
				out = append(out, rel)
			}
		}
	}
	return out, nil
}
