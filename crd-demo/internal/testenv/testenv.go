// Package testenv starts a real API server for tests: etcd and
// kube-apiserver, run by controller-runtime's envtest from the binaries in
// $KUBEBUILDER_ASSETS, with the module's CRDs installed.
package testenv

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// missingAssets is the failure message when KUBEBUILDER_ASSETS is not set.
// These tests fail rather than skip: a skipped test is too easily read as a
// passing one.
const missingAssets = `KUBEBUILDER_ASSETS is not set.
This test needs a real API server: etcd and kube-apiserver, which envtest
starts from the directory KUBEBUILDER_ASSETS names. From crd-demo/:

    ../scripts/tools.sh etcd kube-apiserver kubectl   # builds them into ../bin
    make test                                         # sets KUBEBUILDER_ASSETS=$(abspath ../bin)

or: KUBEBUILDER_ASSETS=$(cd .. && pwd)/bin go test ./...`

// Env is an API server shared by the tests of one package. It starts on the
// first Config call, so that a package's unit tests run without it.
type Env struct {
	crdDir string

	once sync.Once
	env  *envtest.Environment
	cfg  *rest.Config
	err  error
}

// New returns an Env that installs the CRDs in crdDir (relative to the test's
// package directory).
func New(crdDir string) *Env {
	return &Env{crdDir: crdDir}
}

// Config starts the API server if it is not running yet and returns a client
// configuration for it (with full rights). It fails the test if the server
// cannot start.
func (e *Env) Config(t *testing.T) *rest.Config {
	t.Helper()
	e.once.Do(e.start)
	if e.err != nil {
		t.Fatal(e.err)
	}
	return rest.CopyConfig(e.cfg)
}

func (e *Env) start() {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		e.err = fmt.Errorf("%s", missingAssets)
		return
	}
	e.env = &envtest.Environment{
		CRDDirectoryPaths:     []string{e.crdDir},
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: assets,
	}
	e.cfg, e.err = e.env.Start()
	if e.err != nil {
		e.err = fmt.Errorf("starting etcd and kube-apiserver from KUBEBUILDER_ASSETS=%s: %w", assets, e.err)
	}
}

// Stop stops the API server, if it was started. Call it from TestMain.
func (e *Env) Stop() {
	if e.env != nil {
		if err := e.env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stopping the test API server: %v\n", err)
		}
	}
}
