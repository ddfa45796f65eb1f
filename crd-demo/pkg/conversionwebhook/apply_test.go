package conversionwebhook_test

import (
	"testing"
	"time"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2/ktesting"

	"example.com/k8s-demo/crd-demo/internal/testenv"
	"example.com/k8s-demo/crd-demo/pkg/conversionwebhook"
)

// applyServer is an API server of TestApplyAfterURLPatch's own, where
// kubectl apply creates the CRD (TestUpgradeToV2's creates it otherwise).
var applyServer = testenv.New("")

// TestApplyAfterURLPatch: once the controller has pointed the CRD at a URL,
// `kubectl apply -f crd/custompod.yaml` (the chapters' install) still works,
// and puts the file's service back in place of the URL.
func TestApplyAfterURLPatch(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	cfg := applyServer.Config(t)
	client := apiextensionsclient.NewForConfigOrDie(cfg)
	crds := client.ApiextensionsV1().CustomResourceDefinitions()
	apply := func(when string) {
		t.Helper()
		if out, err := applyServer.Kubectl(t, "apply", "-f", "../../crd/custompod.yaml"); err != nil {
			t.Fatalf("%s: kubectl apply -f crd/custompod.yaml: %v\n%s", when, err, out)
		}
	}
	apply("installing")
	const url = "https://127.0.0.1:9443/convert"
	cert, err := conversionwebhook.SelfSigned([]string{"127.0.0.1"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := conversionwebhook.PatchCRD(ctx, client, cert.CA, conversionwebhook.ClientConfig{URL: url}, "test"); err != nil {
		t.Fatal(err)
	}
	crd, err := crds.Get(ctx, conversionwebhook.CRDName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cc := crd.Spec.Conversion.Webhook.ClientConfig; cc.URL == nil || *cc.URL != url || cc.Service != nil {
		t.Fatalf("after PatchCRD, clientConfig %+v, want the URL %s alone", cc, url)
	}
	apply("after the URL patch")
	crd, err = crds.Get(ctx, conversionwebhook.CRDName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cc := crd.Spec.Conversion.Webhook.ClientConfig
	if cc.URL != nil || cc.Service == nil || cc.Service.Name != "custompod-webhook" || string(cc.CABundle) != string(cert.CA) {
		t.Errorf("after applying the file again, clientConfig url=%v service=%+v caBundle=%q, want the file's service and the CA kept", cc.URL, cc.Service, cc.CABundle)
	}
}
