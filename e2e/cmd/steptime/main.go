// Command steptime runs a command and writes its wall time and CPU time
// (user and system, children included: see package cputime) to a file, as
// "CPU-SECONDS WALL-SECONDS", for the test tiers' summaries (scripts/lib.sh's
// step). It exits with the command's status.
//
//	steptime -o FILE -- COMMAND [ARGS...]
package main

import (
	"flag"
	"fmt"
	"os"

	"example.com/k8s-demo/e2e/cputime"
)

func main() {
	out := flag.String("o", "", "the file to write \"CPU-SECONDS WALL-SECONDS\" to (standard error when empty)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: steptime [-o FILE] -- COMMAND [ARGS...]")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	r, err := cputime.Run(flag.Arg(0), flag.Args()[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "steptime: %v\n", err)
		os.Exit(127)
	}
	line := fmt.Sprintf("%.1f %.1f\n", r.CPU.Seconds(), r.Wall.Seconds())
	if *out == "" {
		fmt.Fprintf(os.Stderr, "steptime: %.1f CPU-seconds in %.1f s\n", r.CPU.Seconds(), r.Wall.Seconds())
	} else if err := os.WriteFile(*out, []byte(line), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "steptime: %v\n", err)
	}
	os.Exit(r.ExitCode)
}
