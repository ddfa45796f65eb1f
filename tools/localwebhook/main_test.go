package main

import (
	"context"
	"io"
	"path/filepath"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
)

// demos are the modules whose `make run` runs this program, in their
// directories, and the webhook configurations their
// config/webhook/manifests.yaml holds.
var demos = []struct {
	dir     string
	configs []string // kind/name
}{
	{dir: "kubebuilder-demo"}, // conversion only: controller-gen writes no manifests.yaml
	{dir: "operator-demo", configs: []string{"ValidatingWebhookConfiguration/validating-webhook-configuration"}}, // the Vpc webhook
}

// demoPath is a path in a demo module, from this directory.
func demoPath(demo string, elem ...string) string {
	return filepath.Join(append([]string{"..", "..", demo}, elem...)...)
}

// Each module's own conversion patch is what its make run reads.
func TestReadConversions(t *testing.T) {
	for _, demo := range demos {
		got, err := readConversions(demoPath(demo.dir, "config", "crd", "patches"))
		if err != nil {
			t.Fatal(err)
		}
		want := []conversion{{crd: "custompods.zhhnzw.mock.com", path: "/convert"}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: conversions %+v, want %+v", demo.dir, got, want)
		}
	}
}

// Each module's webhook configurations, from its manifests.
func TestReadConfigs(t *testing.T) {
	for _, demo := range demos {
		configs, err := readConfigs(demoPath(demo.dir, "config", "webhook", "manifests.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range configs {
			got = append(got, c.kind+"/"+c.name)
		}
		if !reflect.DeepEqual(got, demo.configs) {
			t.Errorf("%s: configs %v, want %v", demo.dir, got, demo.configs)
		}
	}
}

// A module with conversion webhooks only has no config/webhook/manifests.yaml.
func TestReadConfigsWithoutManifests(t *testing.T) {
	configs, err := readConfigs(filepath.Join(t.TempDir(), "manifests.yaml"))
	if err != nil || configs != nil {
		t.Errorf("readConfigs of a missing file: %v, %v; want nothing and no error", configs, err)
	}
}

// pointConversion replaces the CRD's Service with this machine's URL and
// the local CA, and leaves the rest of the CRD as it was.
func TestPointConversion(t *testing.T) {
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata": map[string]any{"name": "custompods.zhhnzw.mock.com", "annotations": map[string]any{
			lastApplied: `{"kind":"CustomResourceDefinition","spec":{"conversion":{"strategy":"Webhook","webhook":{"clientConfig":{"service":{"name":"webhook-service","namespace":"system","path":"/convert"}}}}}}`,
		}},
		"spec": map[string]any{
			"group": "zhhnzw.mock.com",
			"conversion": map[string]any{
				"strategy": "Webhook",
				"webhook": map[string]any{
					"conversionReviewVersions": []any{"v1"},
					"clientConfig": map[string]any{
						"service": map[string]any{"namespace": "system", "name": "webhook-service", "path": "/convert"},
					},
				},
			},
		},
	}}
	gvr := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{gvr: "CustomResourceDefinitionList"}, crd)
	o := options{host: "127.0.0.1", port: 9443, prefix: "kubebuilder-demo-"}
	if err := pointConversion(context.Background(), dyn, conversion{crd: crd.GetName(), path: "/convert"}, []byte("CA"), o, io.Discard); err != nil {
		t.Fatal(err)
	}
	got, err := dyn.Resource(gvr).Get(context.Background(), crd.GetName(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cc, _, _ := unstructured.NestedMap(got.Object, "spec", "conversion", "webhook", "clientConfig")
	want := map[string]any{"url": "https://127.0.0.1:9443/convert", "caBundle": "Q0E="} // base64 of "CA"
	if !reflect.DeepEqual(cc, want) {
		t.Errorf("clientConfig %v, want %v", cc, want)
	}
	// What kubectl apply last applied now names the URL alone: the next
	// make install deletes it and sets the service again.
	wantApplied := `{"kind":"CustomResourceDefinition","spec":{"conversion":{"strategy":"Webhook","webhook":{"clientConfig":{"url":"https://127.0.0.1:9443/convert"}}}}}`
	if applied := got.GetAnnotations()[lastApplied]; applied != wantApplied {
		t.Errorf("%s:\n%s\nwant\n%s", lastApplied, applied, wantApplied)
	}
	if group, _, _ := unstructured.NestedString(got.Object, "spec", "group"); group != "zhhnzw.mock.com" {
		t.Errorf("spec.group %q: the rest of the CRD changed", group)
	}

	err = pointConversion(context.Background(), dyn, conversion{crd: "absent.example.com", path: "/convert"}, nil, o, io.Discard)
	if want := "CustomResourceDefinition absent.example.com is not installed: run `make install` first"; err == nil || err.Error() != want {
		t.Errorf("an absent CRD: %v, want %q", err, want)
	}
}
