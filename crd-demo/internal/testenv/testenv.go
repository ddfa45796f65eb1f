// Package testenv starts a real API server for tests: etcd and
// kube-apiserver, run by controller-runtime's envtest from the binaries in
// $KUBEBUILDER_ASSETS, with the module's CRDs installed.
package testenv

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	zhhnzwv1 "example.com/k8s-demo/crd-demo/pkg/apis/zhhnzw/v1"
	clientset "example.com/k8s-demo/crd-demo/pkg/client/clientset/versioned"
	"example.com/k8s-demo/crd-demo/pkg/conversionwebhook"
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
	crdDir  string
	webhook bool
	stop    func()

	once sync.Once
	env  *envtest.Environment
	cfg  *rest.Config
	// admin is the user Kubectl runs as.
	admin *envtest.AuthenticatedUser
	err   error
}

// New returns an Env that installs the CRDs in crdDir (relative to the test's
// package directory), or none if crdDir is "".
func New(crdDir string) *Env {
	return &Env{crdDir: crdDir}
}

// WithConversionWebhook makes the Env serve CustomPod's conversion webhook
// from the test process, as `custompod-controller --conversion-port` does: on
// 127.0.0.1, with a self-signed certificate, the CRD patched to call it.
// Without it, only v2 (the stored version) can be read and written.
func (e *Env) WithConversionWebhook() *Env {
	e.webhook = true
	return e
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

// Kubectl runs the real kubectl from $KUBEBUILDER_ASSETS against the API
// server, as its admin, and returns what it printed.
func (e *Env) Kubectl(t *testing.T, args ...string) (string, error) {
	t.Helper()
	e.Config(t)
	kubectl, err := e.admin.Kubectl()
	if err != nil {
		return "", err
	}
	stdout, stderr, err := kubectl.Run(args...)
	var out strings.Builder
	if stdout != nil {
		_, _ = io.Copy(&out, stdout)
	}
	if stderr != nil {
		_, _ = io.Copy(&out, stderr)
	}
	return out.String(), err
}

func (e *Env) start() {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		e.err = fmt.Errorf("%s", missingAssets)
		return
	}
	e.env = &envtest.Environment{
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: assets,
	}
	if e.crdDir != "" {
		e.env.CRDDirectoryPaths = []string{e.crdDir}
	}
	e.cfg, e.err = e.env.Start()
	if e.err != nil {
		e.err = fmt.Errorf("starting etcd and kube-apiserver from KUBEBUILDER_ASSETS=%s: %w", assets, e.err)
		return
	}
	if e.admin, e.err = e.env.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil); e.err != nil {
		e.err = fmt.Errorf("a kubectl user for the test API server: %w", e.err)
		return
	}
	if e.webhook {
		if e.stop, e.err = StartConversionWebhook(context.Background(), e.cfg); e.err != nil {
			e.err = fmt.Errorf("starting the conversion webhook: %w", e.err)
		}
	}
}

// StartConversionWebhook serves CustomPod's conversion webhook on 127.0.0.1,
// with a new self-signed certificate, and points the CRD at it. It returns
// once a v1 CustomPod can be written (converted to v2 to be stored), with a
// function that stops the webhook and returns once it no longer listens.
func StartConversionWebhook(ctx context.Context, cfg *rest.Config) (stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	cert, err := conversionwebhook.SelfSigned([]string{"127.0.0.1"}, time.Hour)
	if err != nil {
		return nil, err
	}
	getCertificate, err := conversionwebhook.StaticCertificate(cert.Cert, cert.Key)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = (&conversionwebhook.Server{GetCertificate: getCertificate}).Serve(ctx, ln)
	}()
	stop = func() { cancel(); <-served }
	crdClient := apiextensionsclient.NewForConfigOrDie(cfg)
	url := "https://" + ln.Addr().String() + conversionwebhook.Path
	if err := conversionwebhook.PatchCRD(ctx, crdClient, cert.CA, conversionwebhook.ClientConfig{URL: url}, "testenv"); err != nil {
		stop()
		return nil, err
	}
	if err := WaitForConversion(ctx, cfg); err != nil {
		stop()
		return nil, err
	}
	return stop, nil
}

// WaitForConversion waits until the API server uses the conversion webhook
// the CRD names now (it takes a moment to notice a change of the CRD): until
// a v1 CustomPod created in the default namespace reads as v2 with the
// template the webhook gives it. A create that succeeds is not proof: under
// the None strategy the API server stores a v1 object as v2 with no
// template, and once the webhook answers, that object no longer converts to
// v1 and back. So the object is read and deleted as v2, the version it is
// stored in, which needs no conversion.
func WaitForConversion(ctx context.Context, cfg *rest.Config) error {
	cs := clientset.NewForConfigOrDie(cfg)
	v1s, v2s := cs.ZhhnzwV1().CustomPods(metav1.NamespaceDefault), cs.ZhhnzwV2().CustomPods(metav1.NamespaceDefault)
	const name = "testenv-conversion-check"
	var lastErr error
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		if _, lastErr = v1s.Create(ctx, &zhhnzwv1.CustomPod{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); lastErr != nil && !apierrors.IsAlreadyExists(lastErr) {
			return false, nil
		}
		got, err := v2s.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			lastErr = err
			return false, nil
		}
		if err := v2s.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return false, err
		}
		if got.Spec.Template.Image != zhhnzwv1.PodImage {
			lastErr = fmt.Errorf("created as v1, it reads as v2 with the template %+v, not the webhook's: the API server did not convert it yet", got.Spec.Template)
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("the API server does not convert CustomPods with the webhook: %w (last error: %v)", err, lastErr)
	}
	return nil
}

// Stop stops the API server, if it was started. Call it from TestMain.
func (e *Env) Stop() {
	if e.stop != nil {
		e.stop()
	}
	if e.env != nil {
		if err := e.env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stopping the test API server: %v\n", err)
		}
	}
}
