package main

import (
	"encoding/base64"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// TestApplyAfterPointConversion: once make run has pointed the CRD at this
// machine, `make install` still works and puts config/crd's Service back in
// place of the URL, in each module that runs this program. Whether it does is
// kubectl's business (it computes its patch from the last-applied
// annotation), so this runs the real kubectl against a real API server:
// TestPointConversion's fake client cannot tell.
func TestApplyAfterPointConversion(t *testing.T) {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		t.Skip("KUBEBUILDER_ASSETS is not set: this test runs kubectl against an envtest API server " +
			"(kube-apiserver, etcd and kubectl from that directory). Run it with make test, " +
			"or KUBEBUILDER_ASSETS=$(cd .. && pwd)/bin go test ./localwebhook")
	}
	// envtest's kubectl is $KUBEBUILDER_ASSETS/kubectl, which make tools builds.
	if _, err := os.Stat(filepath.Join(assets, "kubectl")); err != nil {
		t.Fatalf("this test needs kubectl in KUBEBUILDER_ASSETS (%v): make tools builds the pinned one into ../bin", err)
	}
	// No user kuberc (it could make apply server-side) and no shared
	// discovery cache (another server may have used this port).
	t.Setenv("KUBERC", "off")
	t.Setenv("KUBECACHEDIR", t.TempDir())
	for _, demo := range demos {
		t.Run(demo.dir, func(t *testing.T) { applyAfterPointConversion(t, assets, demo.dir) })
	}
}

// applyAfterPointConversion installs demo's CRDs in an API server of its
// own, points their conversion here, and installs them again.
func applyAfterPointConversion(t *testing.T, assets, demo string) {
	env, cfg := startEnv(t, assets)
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping the test API server: %v", err)
		}
	})
	admin, err := env.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kubectl, err := admin.Kubectl()
	if err != nil {
		t.Fatal(err)
	}
	// make install is `kustomize build config/crd | kubectl apply -f -`;
	// kubectl apply -k runs the same build with the kustomize built into kubectl.
	install := func(when string) {
		t.Helper()
		stdout, stderr, err := kubectl.Run("apply", "-k", demoPath(demo, "config", "crd"))
		if err != nil {
			out, _ := io.ReadAll(io.MultiReader(stdout, stderr))
			t.Fatalf("%s: kubectl apply -k %s/config/crd: %v\n%s", when, demo, err, out)
		}
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	clientConfig := func(crd string) map[string]any {
		t.Helper()
		obj, err := dyn.Resource(crdResource).Get(t.Context(), crd, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cc, _, _ := unstructured.NestedMap(obj.Object, "spec", "conversion", "webhook", "clientConfig")
		return cc
	}

	install("installing")
	conversions, err := readConversions(demoPath(demo, "config", "crd", "patches"))
	if err != nil {
		t.Fatal(err)
	}
	if len(conversions) == 0 {
		t.Fatal("config/crd/patches gives no CRD a conversion webhook")
	}
	ca, err := ensureCerts(t.TempDir(), "127.0.0.1", demo, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	caBundle := base64.StdEncoding.EncodeToString(ca)
	o := options{host: "127.0.0.1", port: 9443, prefix: demo + "-"}
	for _, c := range conversions {
		if err := pointConversion(t.Context(), dyn, c, ca, o, io.Discard); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{"url": "https://127.0.0.1:9443" + c.path, "caBundle": caBundle}
		if cc := clientConfig(c.crd); !reflect.DeepEqual(cc, want) {
			t.Fatalf("%s after pointConversion: clientConfig %v, want %v", c.crd, cc, want)
		}
	}

	install("after pointConversion")
	for _, c := range conversions {
		// The patch's Service (the API server defaults its port); the CA
		// stays, as config/crd gives none.
		want := map[string]any{
			"service":  map[string]any{"namespace": "system", "name": "webhook-service", "path": c.path, "port": int64(443)},
			"caBundle": caBundle,
		}
		if cc := clientConfig(c.crd); !reflect.DeepEqual(cc, want) {
			t.Errorf("%s after installing again: clientConfig %v, want %v", c.crd, cc, want)
		}
	}
}

// startEnv starts envtest's etcd and kube-apiserver from assets. envtest then
// gives the API server 5 seconds to show the default namespace
// (controller-runtime v0.25.2, pkg/envtest/server.go:405), which a 2-core
// machine running other suites beside this one has missed: a new environment
// gets a second try.
func startEnv(t *testing.T, assets string) (*envtest.Environment, *rest.Config) {
	t.Helper()
	for try := 1; ; try++ {
		env := &envtest.Environment{BinaryAssetsDirectory: assets}
		cfg, err := env.Start()
		if err == nil {
			return env, cfg
		}
		_ = env.Stop()
		if try == 2 || !strings.Contains(err.Error(), "default namespace didn't register") {
			t.Fatalf("starting etcd and kube-apiserver from KUBEBUILDER_ASSETS=%s (try %d): %v", assets, try, err)
		}
		t.Logf("starting etcd and kube-apiserver, try %d: %v; trying a new environment", try, err)
	}
}
