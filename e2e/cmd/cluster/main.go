// Command cluster brings the project's local cluster up and down; the root
// Makefile's cluster-up, cluster-down, kubeconfig and e2e targets call it.
//
//	cluster up                 create the cluster (or start it again), wait for Ready nodes
//	cluster down               delete it and what it left on the machine
//	cluster kubeconfig         print the kubeconfig path, alone
//	cluster env                print the exports that point a shell at the
//	                           cluster and the pinned tools, with absolute
//	                           paths; fails when the cluster is not up
//	cluster registry-up        run the local registry on localhost:5001, and
//	                           point the nodes at it (kind)
//	cluster registry-down      remove it, and the images pushed to it
//	cluster run -- CMD ARGS    bring the cluster up if needed, run CMD with
//	                           KUBECONFIG set, then delete the cluster only
//	                           if this run created it
//
// The provider comes from CLUSTER (kwok, kind or existing; kwok by default),
// the rest from CLUSTER_NAME, LOCALBIN, CLUSTER_WORKDIR, CLUSTER_NODES, CLUSTER_NODE_PODS,
// KIND_NODE_IMAGE, KIND_KUBEADM_PATCHES and KUBECONFIG.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"example.com/k8s-demo/e2e/cluster"
)

func main() {
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: cluster up|down|kubeconfig|env|registry-up|registry-down|run -- CMD [ARGS]\n")
	}
	flag.Parse()
	if err := run(flag.Args()); err != nil {
		// `run` passes its command's exit code on; the command said why.
		var exit childExit
		if errors.As(err, &exit) {
			os.Exit(exit.code)
		}
		fmt.Fprintf(os.Stderr, "cluster: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		flag.Usage()
		return fmt.Errorf("expected a command, got none")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	wd, _ := os.Getwd()
	root, err := cluster.FindRoot(wd)
	if err != nil {
		return err
	}
	opts, err := cluster.OptionsFromEnv(root)
	if err != nil {
		return err
	}
	opts.Log = os.Stderr
	name := os.Getenv("CLUSTER")
	if name == "" {
		name = "kwok"
	}
	p, err := cluster.New(name, opts)
	if err != nil {
		return err
	}

	switch cmd := args[0]; cmd {
	case "kubeconfig":
		// Alone on stdout, for `export KUBECONFIG=$(make -s kubeconfig)`.
		fmt.Println(p.Kubeconfig())
		return nil
	case "env":
		// For `eval "$(make -s -C ROOT env)"` in any terminal, from any
		// directory. A kubeconfig that is not there would leave kubectl and
		// the controllers falling back to another cluster or none, so say so
		// and print nothing to eval.
		kc := p.Kubeconfig()
		if _, err := os.Stat(kc); err != nil {
			return fmt.Errorf("no kubeconfig at %s: is the %s cluster %q up? Run make cluster-up first", kc, p.Name(), opts.Name)
		}
		fmt.Printf("export KUBECONFIG=%s\n", shellQuote(kc))
		fmt.Printf("export PATH=%s:\"$PATH\"\n", shellQuote(opts.BinDir))
		return nil
	case "up":
		fmt.Fprintf(os.Stderr, "cluster up: %s cluster %q\n", p.Name(), opts.Name)
		if err := p.Up(ctx); err != nil {
			return err
		}
		// The make variables that name this cluster, where not the defaults.
		which := ""
		if p.Name() != "kwok" {
			which += " CLUSTER=" + p.Name()
		}
		if opts.Name != cluster.DefaultName {
			which += " CLUSTER_NAME=" + opts.Name
		}
		fmt.Fprintf(os.Stderr, "\nReady. Point a terminal at it, with the pinned kubectl first on PATH:\n  eval \"$(make -s -C %s env%s)\"\n", shellQuote(root), which)
		return nil
	case "down":
		fmt.Fprintf(os.Stderr, "cluster down: %s cluster %q\n", p.Name(), opts.Name)
		return p.Down(ctx)
	case "registry-up", "registry-down":
		r, ok := p.(cluster.Registrar)
		if !ok {
			return fmt.Errorf("the local registry is for CLUSTER=kind; a %s cluster's nodes do not pull from it", p.Name())
		}
		if cmd == "registry-down" {
			return r.RegistryDown(ctx)
		}
		return r.RegistryUp(ctx, root)
	case "run":
		rest := args[1:]
		if len(rest) > 0 && rest[0] == "--" {
			rest = rest[1:]
		}
		if len(rest) == 0 {
			return fmt.Errorf("run needs a command after --")
		}
		return runWith(ctx, p, opts.Name, rest)
	default:
		flag.Usage()
		return fmt.Errorf("unknown command %q", cmd)
	}
}

// runWith runs a command against the cluster, creating it first when it is
// not there, and removing afterwards only what it created.
func runWith(ctx context.Context, p cluster.Provider, name string, command []string) error {
	start := time.Now()
	existed, err := p.Exists(ctx)
	if err != nil {
		return err
	}
	if existed {
		fmt.Fprintf(os.Stderr, "cluster run: reusing the %s cluster %q (it will be left up)\n", p.Name(), name)
	} else {
		fmt.Fprintf(os.Stderr, "cluster run: creating the %s cluster %q (it will be deleted afterwards)\n", p.Name(), name)
	}
	if err := p.Up(ctx); err != nil {
		return err
	}
	upTime := time.Since(start)

	cmd := exec.CommandContext(ctx, command[0], command[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), "KUBECONFIG="+p.Kubeconfig(), "E2E_KUBECONFIG="+p.Kubeconfig(), "CLUSTER="+p.Name())
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 30 * time.Second
	runStart := time.Now()
	runErr := cmd.Run()
	var exitErr *exec.ExitError
	if errors.As(runErr, &exitErr) {
		runErr = childExit{code: exitErr.ExitCode()}
	}
	runTime := time.Since(runStart)

	var downTime time.Duration
	if !existed {
		downStart := time.Now()
		// Clean up even when interrupted.
		if err := p.Down(context.WithoutCancel(ctx)); err != nil && runErr == nil {
			runErr = err
		}
		downTime = time.Since(downStart)
	}
	fmt.Fprintf(os.Stderr, "cluster run: cluster up %s, command %s, cluster down %s\n",
		upTime.Round(100*time.Millisecond), runTime.Round(100*time.Millisecond), downTime.Round(100*time.Millisecond))
	return runErr
}

// childExit is the exit code of the command `run` ran.
type childExit struct{ code int }

func (c childExit) Error() string { return fmt.Sprintf("command exited with status %d", c.code) }

// shellQuote quotes s for bash and zsh alike: in single quotes, with each
// single quote in s closed, escaped and reopened.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
