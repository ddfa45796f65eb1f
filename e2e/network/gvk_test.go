package network

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/restmapper"

	"example.com/k8s-demo/e2e/harness"
)

// TestGVK is docs/concepts.md's example: how a client goes from a kind, as
// written in a YAML file, to the resource and URL it sends requests to, and
// from a name typed on kubectl's command line back to the kind.
func TestGVK(t *testing.T) {
	h := harness.New(t)
	h.KubectlIn(h.Path("crd-demo"), "apply", "-f", "crd/network.yaml")
	// The API server serves a new CRD's resource once it is Established.
	h.WaitEstablished("", "crd/networks.samplecrd.k8s.io")

	// +docs:begin discovery
	// Discovery: what the API server serves. One request per group version,
	// the same as `kubectl get --raw /apis/samplecrd.k8s.io/v1`.
	dc, err := discovery.NewDiscoveryClientForConfig(h.Env.Config)
	if err != nil {
		t.Fatal(err)
	}
	resources, err := dc.ServerResourcesForGroupVersion("samplecrd.k8s.io/v1")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range resources.APIResources {
		t.Logf("resource %-15s kind %-8s namespaced %-5v shortNames %v verbs %v",
			r.Name, r.Kind, r.Namespaced, r.ShortNames, r.Verbs)
	}
	// +docs:end discovery

	// +docs:begin restmapper
	// A RESTMapper turns discovery into a lookup table between kinds (GVK,
	// what a YAML file says) and resources (GVR, what a URL says). The
	// shortcut expander adds short names, as kubectl does.
	mapper := restmapper.NewShortcutExpander(
		restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc)), dc, nil)

	// apiVersion: samplecrd.k8s.io/v1 + kind: Network → which resource?
	gvk := schema.GroupVersionKind{Group: "samplecrd.k8s.io", Version: "v1", Kind: "Network"}
	mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("GVK %s → GVR %s (scope %s)", gvk, mapping.Resource, mapping.Scope.Name())
	t.Logf("URL: /apis/%s/%s/namespaces/%s/%s", mapping.Resource.Group, mapping.Resource.Version,
		h.Namespace, mapping.Resource.Resource)

	// `kubectl get net` → which resource, and which kind?
	for _, typed := range []string{"net", "networks", "deploy", "po"} {
		gvr, err := mapper.ResourceFor(schema.GroupVersionResource{Resource: typed})
		if err != nil {
			t.Fatal(err)
		}
		kind, err := mapper.KindFor(gvr)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("kubectl get %-8s → GVR %-40s → GVK %s", typed, gvr, kind)
	}
	// +docs:end restmapper

	if mapping.Resource != (schema.GroupVersionResource{Group: "samplecrd.k8s.io", Version: "v1", Resource: "networks"}) {
		t.Errorf("Network maps to %s, want samplecrd.k8s.io/v1, Resource=networks", mapping.Resource)
	}
	if gvr, err := mapper.ResourceFor(schema.GroupVersionResource{Resource: "net"}); err != nil || gvr.Resource != "networks" {
		t.Errorf("the short name net maps to %s (%v), want networks", gvr, err)
	}
}
