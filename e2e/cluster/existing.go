package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// existing is whatever cluster KUBECONFIG points at. It is never created or
// deleted: Up only checks that it answers.
type existing struct {
	o Options
}

func newExisting(o Options) *existing { return &existing{o: o} }

func (e *existing) Name() string { return "existing" }

// Kubeconfig is the first file of KUBECONFIG, or ~/.kube/config, as kubectl
// would read it.
func (e *existing) Kubeconfig() string {
	if list := filepath.SplitList(e.o.Kubeconfig); len(list) > 0 && list[0] != "" {
		return list[0]
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".kube", "config")
}

func (e *existing) Preflight(context.Context) error {
	if _, err := os.Stat(e.Kubeconfig()); err != nil {
		return fmt.Errorf("CLUSTER=existing uses the cluster KUBECONFIG points at, but %s cannot be read: %v", e.Kubeconfig(), err)
	}
	return nil
}

func (e *existing) Exists(ctx context.Context) (bool, error) {
	return true, e.Preflight(ctx)
}

func (e *existing) Up(ctx context.Context) error {
	if err := e.Preflight(ctx); err != nil {
		return err
	}
	cs, err := Clientset(e.Kubeconfig())
	if err != nil {
		return err
	}
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		return fmt.Errorf("the cluster in %s does not answer: %w", e.Kubeconfig(), err)
	}
	fmt.Fprintf(e.o.Log, "  using the existing cluster in %s (Kubernetes %s)\n", e.Kubeconfig(), v.GitVersion)
	return nil
}

func (e *existing) Down(context.Context) error {
	fmt.Fprintf(e.o.Log, "  CLUSTER=existing: leaving the cluster in %s as it is\n", e.Kubeconfig())
	return nil
}
