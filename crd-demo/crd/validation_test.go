package crd_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"net/netip"
	"os"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"example.com/k8s-demo/crd-demo/internal/testenv"
	"example.com/k8s-demo/crd-demo/pkg/backend"
)

// apiServer runs etcd and kube-apiserver with the CRDs of this directory
// installed, and CustomPod's conversion webhook, which every v1 write needs
// (v1 objects are stored as v2).
var apiServer = testenv.New(".").WithConversionWebhook()

func TestMain(m *testing.M) {
	code := m.Run()
	apiServer.Stop()
	os.Exit(code)
}

var (
	networks     = schema.GroupVersionResource{Group: "samplecrd.k8s.io", Version: "v1", Resource: "networks"}
	customPods   = schema.GroupVersionResource{Group: "zhhnzw.mock.com", Version: "v1", Resource: "custompods"}
	customPodsV2 = schema.GroupVersionResource{Group: "zhhnzw.mock.com", Version: "v2", Resource: "custompods"}
)

// create sends obj, written as YAML, the way `kubectl apply` does: with
// field validation Strict, so that unknown fields are refused instead of
// silently dropped.
func create(t *testing.T, client dynamic.Interface, gvr schema.GroupVersionResource, ns, manifest string) (*unstructured.Unstructured, error) {
	t.Helper()
	var obj unstructured.Unstructured
	if err := yaml.Unmarshal([]byte(manifest), &obj.Object); err != nil {
		t.Fatal(err)
	}
	return client.Resource(gvr).Namespace(ns).Create(context.Background(), &obj, metav1.CreateOptions{FieldValidation: metav1.FieldValidationStrict})
}

// newNamespace creates a namespace of its own for the test.
func newNamespace(t *testing.T, cfg *rest.Config) string {
	t.Helper()
	ns, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "crd-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// validationCase is an object and what the API server must say about it:
// nothing (accepted) or an Invalid or BadRequest error containing every one
// of the strings in refused, which name the field and the problem.
type validationCase struct {
	name     string
	manifest string
	refused  []string
}

func runCases(t *testing.T, gvr schema.GroupVersionResource, cases []validationCase) {
	cfg := apiServer.Config(t)
	client := dynamic.NewForConfigOrDie(cfg)
	ns := newNamespace(t, cfg)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := create(t, client, gvr, ns, tc.manifest)
			if len(tc.refused) == 0 {
				if err != nil {
					t.Fatalf("refused a valid object: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted an invalid object; want an error mentioning %q", tc.refused)
			}
			if !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err) {
				t.Fatalf("error is %v (reason %s); want Invalid or BadRequest", err, apierrors.ReasonForError(err))
			}
			t.Logf("refused: %v", err)
			for _, s := range tc.refused {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
		})
	}
}

func network(name, spec string) string {
	return "apiVersion: samplecrd.k8s.io/v1\nkind: Network\nmetadata:\n  name: " + name + "\n" + spec
}

func TestNetworkValidation(t *testing.T) {
	runCases(t, networks, []validationCase{
		{"the article's example", network("example", "spec:\n  cidr: 192.168.0.0/16\n  gateway: 192.168.0.1"), nil},
		{"IPv6", network("v6", "spec:\n  cidr: fd00:10::/64\n  gateway: fd00:10::1"), nil},
		{"bad cidr", network("bad-cidr", "spec:\n  cidr: 192.168.0.0/33\n  gateway: 192.168.0.1"),
			[]string{"spec.cidr", "must be a CIDR"}},
		{"cidr is an address", network("cidr-address", "spec:\n  cidr: 192.168.0.1\n  gateway: 192.168.0.1"),
			[]string{"spec.cidr", "must be a CIDR"}},
		{"cidr with host bits", network("host-bits", "spec:\n  cidr: 192.168.0.1/16\n  gateway: 192.168.0.1"),
			[]string{"spec.cidr", "no host bits"}},
		{"bad gateway", network("bad-gateway", "spec:\n  cidr: 192.168.0.0/16\n  gateway: 192.168.0.256"),
			[]string{"spec.gateway", "must be an IP address"}},
		{"gateway outside cidr", network("outside", "spec:\n  cidr: 192.168.0.0/16\n  gateway: 10.0.0.1"),
			[]string{"spec.gateway", "must be an address inside cidr"}},
		{"IPv4 gateway in IPv6 cidr", network("mixed", "spec:\n  cidr: fd00::/64\n  gateway: 192.168.0.1"),
			[]string{"spec.gateway", "must be an address inside cidr"}},
		{"missing gateway", network("no-gateway", "spec:\n  cidr: 192.168.0.0/16"),
			[]string{"spec.gateway", "Required value"}},
		{"missing cidr", network("no-cidr", "spec:\n  gateway: 192.168.0.1"),
			[]string{"spec.cidr", "Required value"}},
		{"missing spec", network("no-spec", ""),
			[]string{"spec", "Required value"}},
		{"cidr not a string", network("number", "spec:\n  cidr: 42\n  gateway: 192.168.0.1"),
			[]string{"spec.cidr", "must be of type string"}},
		{"unknown field", network("unknown", "spec:\n  cidr: 192.168.0.0/16\n  gateway: 192.168.0.1\n  mtu: 1500"),
			[]string{`unknown field "spec.mtu"`}},
		// Addresses that can never work (issue 35, item 5).
		{"gateway is the network address", network("gw-network", "spec:\n  cidr: 10.0.0.0/24\n  gateway: 10.0.0.0"),
			[]string{"spec.gateway", "must not be the network address"}},
		{"gateway is the broadcast address", network("gw-broadcast", "spec:\n  cidr: 10.0.0.0/24\n  gateway: 10.0.0.255"),
			[]string{"spec.gateway", "must not be the broadcast address"}},
		{"gateway is the last address of a /31", network("gw-31", "spec:\n  cidr: 10.0.0.0/31\n  gateway: 10.0.0.1"), nil},
		{"every IPv4 address", network("all-v4", "spec:\n  cidr: 0.0.0.0/0\n  gateway: 10.0.0.1"),
			[]string{"spec.cidr", "must not be 0.0.0.0/0 or ::/0"}},
		{"every IPv6 address", network("all-v6", "spec:\n  cidr: ::/0\n  gateway: fd00::1"),
			[]string{"spec.cidr", "must not be 0.0.0.0/0 or ::/0"}},
		{"loopback", network("loopback", "spec:\n  cidr: 127.0.0.0/8\n  gateway: 127.0.0.1"),
			[]string{"spec.cidr", "must not overlap the loopback"}},
		{"multicast", network("multicast", "spec:\n  cidr: 224.0.0.0/4\n  gateway: 224.0.0.1"),
			[]string{"spec.cidr", "must not overlap", "multicast (224.0.0.0/4"}},
		{"link-local", network("link-local", "spec:\n  cidr: 169.254.0.0/16\n  gateway: 169.254.0.1"),
			[]string{"spec.cidr", "must not overlap", "link-local (169.254.0.0/16"}},
	})
}

// TestNetworkValidationAgreesWithBackend sends the same networks to the API
// server, through the CRD, and to the backend's Validate: each must accept
// what the other accepts, so that a Network the API server admits is never
// refused by the backend, and the backend trusts no caller to have been
// admitted.
func TestNetworkValidationAgreesWithBackend(t *testing.T) {
	cfg := apiServer.Config(t)
	client := dynamic.NewForConfigOrDie(cfg)
	ns := newNamespace(t, cfg)
	type pair struct{ cidr, gateway string }
	// The broadcast rule computes the last address octet by octet: try every
	// IPv4 prefix length from /8 on, its first, second, second to last and
	// last address.
	var every []pair
	for bits := 8; bits <= 32; bits++ {
		p := netip.PrefixFrom(netip.MustParseAddr("10.123.45.67"), bits).Masked()
		first := binary.BigEndian.Uint32(p.Addr().AsSlice())
		last := first | (1<<(32-bits) - 1)
		for _, a := range []uint32{first, first + 1, last - 1, last} {
			every = append(every, pair{p.String(), netip.AddrFrom4([4]byte(binary.BigEndian.AppendUint32(nil, a))).String()})
		}
	}
	for _, tc := range append(every, []pair{
		{"192.168.0.0/16", "192.168.0.1"},
		{"192.168.0.0/16", "192.168.255.254"},
		{"192.168.0.0/16", "192.168.255.255"},
		{"192.168.0.0/16", "192.168.0.0"},
		{"192.168.0.0/20", "192.168.15.255"},
		{"192.168.0.0/20", "192.168.7.255"},
		{"10.0.0.0/8", "10.255.255.255"},
		{"8.0.0.0/5", "15.255.255.255"},
		{"10.0.0.0/30", "10.0.0.3"},
		{"10.0.0.0/30", "10.0.0.2"},
		{"10.0.0.0/31", "10.0.0.0"},
		{"10.0.0.0/31", "10.0.0.1"},
		{"10.0.0.4/32", "10.0.0.4"},
		{"10.0.0.0/24", "10.0.1.1"},
		{"fd00::/64", "fd00::"},
		{"fd00::/64", "fd00::1"},
		{"fd00::/64", "fd00::ffff:ffff:ffff:ffff"},
		{"fd00::/127", "fd00::"},
		{"fd00::/64", "10.0.0.1"},
		{"0.0.0.0/0", "10.0.0.1"},
		{"::/0", "fd00::1"},
		{"128.0.0.0/1", "128.0.0.1"},
		{"127.0.0.0/8", "127.0.0.1"},
		{"120.0.0.0/5", "120.0.0.1"},
		{"::1/128", "::1"},
		{"169.254.0.0/16", "169.254.0.1"},
		{"fe80::/64", "fe80::1"},
		{"224.0.0.0/4", "224.0.0.1"},
		{"ff05::/16", "ff05::1"},
		{"240.0.0.0/4", "240.0.0.1"},
	}...) {
		manifest := network("agree", "spec:\n  cidr: '"+tc.cidr+"'\n  gateway: '"+tc.gateway+"'")
		var obj unstructured.Unstructured
		if err := yaml.Unmarshal([]byte(manifest), &obj.Object); err != nil {
			t.Fatal(err)
		}
		_, apiErr := client.Resource(networks).Namespace(ns).Create(context.Background(), &obj,
			metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		backendErr := backend.Validate(backend.Network{Name: ns + "/agree", CIDR: tc.cidr, GatewayIP: tc.gateway})
		if (apiErr == nil) != (backendErr == nil) {
			t.Errorf("cidr %s, gateway %s: the API server says %v, the backend %v", tc.cidr, tc.gateway, apiErr, backendErr)
		}
	}
}

func customPod(name, spec string) string {
	return "apiVersion: zhhnzw.mock.com/v1\nkind: CustomPod\nmetadata:\n  name: " + name + "\n" + spec
}

func TestCustomPodValidation(t *testing.T) {
	runCases(t, customPods, []validationCase{
		{"the article's sample", customPod("sample", "spec:\n  replicas: 1"), nil},
		{"zero", customPod("zero", "spec:\n  replicas: 0"), nil},
		{"maximum", customPod("max", "spec:\n  replicas: 100"), nil},
		{"negative", customPod("negative", "spec:\n  replicas: -1"),
			[]string{"spec.replicas", "greater than or equal to 0"}},
		{"above maximum", customPod("too-many", "spec:\n  replicas: 101"),
			[]string{"spec.replicas", "less than or equal to 100"}},
		{"a string", customPod("string", "spec:\n  replicas: three"),
			[]string{"spec.replicas", "must be of type integer"}},
		{"a fraction", customPod("fraction", "spec:\n  replicas: 1.5"),
			[]string{"spec.replicas", "must be of type integer"}},
		{"a misspelt field", customPod("misspelt", "spec:\n  replica: 1"),
			[]string{`unknown field "spec.replica"`}},
	})
}

func customPodV2(name, spec string) string {
	return "apiVersion: zhhnzw.mock.com/v2\nkind: CustomPod\nmetadata:\n  name: " + name + "\n" + spec
}

func TestCustomPodV2Validation(t *testing.T) {
	runCases(t, customPodsV2, []validationCase{
		{"a template", customPodV2("sample", "spec:\n  replicas: 1\n  template:\n    image: busybox:1.36\n    command: [sleep, '3600']"), nil},
		{"no command", customPodV2("no-command", "spec:\n  template:\n    image: nginx:1.27"), nil},
		{"longest image", customPodV2("long-image", "spec:\n  template:\n    image: "+strings.Repeat("a", 255)), nil},
		{"no template", customPodV2("no-template", "spec:\n  replicas: 1"),
			[]string{"spec.template", "Required value"}},
		{"no image", customPodV2("no-image", "spec:\n  template:\n    command: [sh]"),
			[]string{"spec.template.image", "Required value"}},
		{"empty image", customPodV2("empty-image", "spec:\n  template:\n    image: ''"),
			[]string{"spec.template.image", "at least 1 chars long"}},
		{"image too long", customPodV2("too-long", "spec:\n  template:\n    image: "+strings.Repeat("a", 256)),
			[]string{"spec.template.image", "may not be more than 255 bytes"}},
		{"command not a list", customPodV2("command-string", "spec:\n  template:\n    image: busybox:1.36\n    command: sleep 3600"),
			[]string{"spec.template.command", "must be of type array"}},
		{"replicas as v1", customPodV2("too-many", "spec:\n  replicas: 101\n  template:\n    image: busybox:1.36"),
			[]string{"spec.replicas", "less than or equal to 100"}},
		{"a v1 annotation is just an annotation in v2", customPodV2("annotated",
			"  annotations:\n    zhhnzw.mock.com/v2-template: not JSON\nspec:\n  template:\n    image: busybox:1.36"), nil},
	})
}

// TestCustomPodV1TemplateAnnotation: a v1 write with a template annotation
// that is not one is refused, by the conversion to v2 it needs to be stored,
// with the webhook's message.
func TestCustomPodV1TemplateAnnotation(t *testing.T) {
	cfg := apiServer.Config(t)
	client := dynamic.NewForConfigOrDie(cfg)
	ns := newNamespace(t, cfg)
	for _, tc := range []struct{ value, want string }{
		{`not JSON`, "annotation zhhnzw.mock.com/v2-template: not a template"},
		{`{"imag":"nginx"}`, `unknown field "imag"`},
		{`{"command":["sh"]}`, "the template has no image"},
	} {
		manifest := customPod("annotated", "  annotations:\n    zhhnzw.mock.com/v2-template: '"+tc.value+"'\nspec:\n  replicas: 1")
		_, err := create(t, client, customPods, ns, manifest)
		if err == nil || !strings.Contains(err.Error(), "conversion webhook for zhhnzw.mock.com/v1, Kind=CustomPod failed") ||
			!strings.Contains(err.Error(), "converting CustomPod "+ns+"/annotated from zhhnzw.mock.com/v1 to zhhnzw.mock.com/v2") ||
			!strings.Contains(err.Error(), tc.want) {
			t.Errorf("annotation %s: got %v, want the conversion webhook's failure mentioning %q", tc.value, err, tc.want)
		} else {
			t.Logf("refused: %v", err)
		}
	}
}

// TestCustomPodDefaults checks that replicas defaults to 1 in an empty spec,
// and that a CustomPod without a spec is refused (as kubebuilder's is).
func TestCustomPodDefaults(t *testing.T) {
	cfg := apiServer.Config(t)
	client := dynamic.NewForConfigOrDie(cfg)
	ns := newNamespace(t, cfg)
	if _, err := create(t, client, customPods, ns, customPod("no-spec", "")); err == nil || !strings.Contains(err.Error(), "spec: Required value") {
		t.Errorf("no spec: want \"spec: Required value\", got %v", err)
	}
	for name, manifest := range map[string]string{
		"empty-spec": customPod("empty-spec", "spec: {}"),
	} {
		obj, err := create(t, client, customPods, ns, manifest)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		replicas, found, err := unstructured.NestedInt64(obj.Object, "spec", "replicas")
		if err != nil || !found || replicas != 1 {
			t.Errorf("%s: spec.replicas = %d (found %v, err %v), want the default 1", name, replicas, found, err)
		}
	}
}

// TestCustomPodScaleSubresource scales a CustomPod through /scale, as
// `kubectl scale` does, and reads spec.replicas back.
func TestCustomPodScaleSubresource(t *testing.T) {
	cfg := apiServer.Config(t)
	client := dynamic.NewForConfigOrDie(cfg)
	ns := newNamespace(t, cfg)
	ctx := context.Background()
	if _, err := create(t, client, customPods, ns, customPod("scaled", "spec:\n  replicas: 1")); err != nil {
		t.Fatal(err)
	}
	scale, err := client.Resource(customPods).Namespace(ns).Get(ctx, "scaled", metav1.GetOptions{}, "scale")
	if err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(scale.Object, int64(4), "spec", "replicas"); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Resource(customPods).Namespace(ns).Update(ctx, scale, metav1.UpdateOptions{}, "scale"); err != nil {
		t.Fatal(err)
	}
	obj, err := client.Resource(customPods).Namespace(ns).Get(ctx, "scaled", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if replicas, _, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas"); replicas != 4 {
		t.Errorf("after scaling to 4, spec.replicas = %d", replicas)
	}
	// The scale subresource enforces the schema too.
	_ = unstructured.SetNestedField(scale.Object, int64(101), "spec", "replicas")
	scale.SetResourceVersion("")
	if _, err := client.Resource(customPods).Namespace(ns).Update(ctx, scale, metav1.UpdateOptions{}, "scale"); err == nil {
		t.Error("scaling to 101 succeeded; want the maximum of 100 enforced")
	}
}

// TestDiscovery checks what `kubectl get`, `kubectl get net` and the
// controllers' UpdateStatus rely on: the short name and the subresources.
func TestDiscovery(t *testing.T) {
	cfg := apiServer.Config(t)
	dc := discovery.NewDiscoveryClientForConfigOrDie(cfg)
	for _, tc := range []struct {
		groupVersion string
		resources    []string
		shortNames   []string
	}{
		{"samplecrd.k8s.io/v1", []string{"networks", "networks/status"}, []string{"net"}},
		{"zhhnzw.mock.com/v1", []string{"custompods", "custompods/scale", "custompods/status"}, nil},
		{"zhhnzw.mock.com/v2", []string{"custompods", "custompods/scale", "custompods/status"}, nil},
	} {
		list, err := dc.ServerResourcesForGroupVersion(tc.groupVersion)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, r := range list.APIResources {
			names = append(names, r.Name)
			if !strings.Contains(r.Name, "/") {
				if !r.Namespaced {
					t.Errorf("%s is cluster-scoped, want Namespaced", r.Name)
				}
				if !slices.Equal(r.ShortNames, tc.shortNames) {
					t.Errorf("%s short names = %v, want %v", r.Name, r.ShortNames, tc.shortNames)
				}
			}
		}
		slices.Sort(names)
		if !slices.Equal(names, tc.resources) {
			t.Errorf("%s resources = %v, want %v", tc.groupVersion, names, tc.resources)
		}
	}
}

// TestPrinterColumns asks for a Network and a CustomPod as a Table, the form
// `kubectl get` prints.
func TestPrinterColumns(t *testing.T) {
	cfg := apiServer.Config(t)
	client := dynamic.NewForConfigOrDie(cfg)
	kube := kubernetes.NewForConfigOrDie(cfg)
	ns := newNamespace(t, cfg)
	if _, err := create(t, client, networks, ns, network("example-network", "spec:\n  cidr: 192.168.0.0/16\n  gateway: 192.168.0.1")); err != nil {
		t.Fatal(err)
	}
	if _, err := create(t, client, customPods, ns, customPod("sample", "spec:\n  replicas: 3")); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		path    string
		columns []string
		cells   []any // the first ones, before Age
	}{
		{"/apis/samplecrd.k8s.io/v1/namespaces/" + ns + "/networks", []string{"Name", "CIDR", "Gateway", "Ready", "Age"},
			[]any{"example-network", "192.168.0.0/16", "192.168.0.1", nil}},
		// No controller runs here, but Current and Ready show 0, not
		// nothing: the v1 object went through the conversion webhook to be
		// stored as v2, and the Go types always write status.replicas and
		// status.readyReplicas.
		{"/apis/zhhnzw.mock.com/v1/namespaces/" + ns + "/custompods", []string{"Name", "Desired", "Current", "Ready", "Age"},
			[]any{"sample", float64(3), float64(0), float64(0)}},
		// The same object, read as v2: the template a v1 object runs.
		{"/apis/zhhnzw.mock.com/v2/namespaces/" + ns + "/custompods", []string{"Name", "Desired", "Current", "Ready", "Image", "Age"},
			[]any{"sample", float64(3), float64(0), float64(0), "busybox:1.36"}},
	} {
		// The Accept header asks for the server-side Table that kubectl prints.
		raw, err := kube.CoreV1().RESTClient().Get().AbsPath(tc.path).
			SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").
			DoRaw(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var table metav1.Table
		if err := json.Unmarshal(raw, &table); err != nil {
			t.Fatal(err)
		}
		var columns []string
		for _, c := range table.ColumnDefinitions {
			columns = append(columns, c.Name)
		}
		if !slices.Equal(columns, tc.columns) {
			t.Errorf("%s: columns %v, want %v", tc.path, columns, tc.columns)
		}
		if len(table.Rows) != 1 {
			t.Fatalf("%s: %d rows, want 1", tc.path, len(table.Rows))
		}
		for i, want := range tc.cells {
			if got := table.Rows[0].Cells[i]; got != want {
				t.Errorf("%s: cell %q = %#v, want %#v", tc.path, columns[i], got, want)
			}
		}
	}
}
