package walkthrough

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/yaml"

	"example.com/k8s-demo/e2e/custompod"
	"example.com/k8s-demo/e2e/harness"
	"example.com/k8s-demo/e2e/impls"
)

// customPodsV1 is the version the articles' clients use: every request for
// it goes through the CRD's conversion webhook (v2 is stored).
var customPodsV1 = schema.GroupVersionResource{Group: "zhhnzw.mock.com", Version: "v1", Resource: "custompods"}

// v1Default is the template v1 has no field for: every v1 CustomPod's pods
// run it, and a v1 object read as v2 carries it.
var v1Default = custompod.Template{Image: "busybox:1.36", Command: []string{"sleep", "3600"}}

// templateAnnotation is where v1 keeps a v2 template it cannot express.
const templateAnnotation = "zhhnzw.mock.com/v2-template"

// TestCustomPodConversion checks each implementation's conversion webhook
// through the real API server: a v1 CustomPod read as v2; a v2 CustomPod
// read as v1, written back through v1 and read as v2 with nothing lost; the
// pods running v2's template; and, with the webhook down, reads of v1
// failing with the API server's conversion error while v2 reads go on.
//
// A CRD has one conversion webhook: each subtest points it at its
// implementation's (the controller or `make run` beside the cluster); no
// other test runs meanwhile to point it elsewhere (see the package's doc).
//
// In the cluster, TestCustomPod/<implementation>/conversion runs the same
// checks on the Deployment TestCustomPod made: `make deploy` points the CRD
// at the module's Service, and a Deployment of its own here would only add
// a deploy and an undeploy per implementation.
func TestCustomPodConversion(t *testing.T) {
	if harness.InCluster() {
		t.Skip("in the cluster, TestCustomPod/<implementation>/conversion checks conversion on TestCustomPod's Deployment")
	}
	for _, impl := range implementations {
		t.Run(impl.Name, func(t *testing.T) {
			h := harness.New(t)
			h.Track("custompod/from-v1", "custompod/"+impl.SampleName)
			webhook := startConversionWebhook(h, impl)
			testConversion(h, impl, webhook)
		})
	}
}

// startConversionWebhook runs impl beside the cluster with its conversion
// webhook, the CRD pointed at it, and returns what to stop to take the
// webhook down.
func startConversionWebhook(h *harness.H, impl implementation) harness.Controller {
	h.Helper()
	kubeconfig := h.KubeconfigAs("controller", impl.Install(h))
	if impl.Impl == &impls.ClientGo {
		// It patches the CRD with its URL and CA: a right its
		// controller's ClusterRole (for a controller per namespace) does
		// not give; in a cluster, config/webhook's ClusterRole does.
		kubeconfig = h.Kubeconfig
	}
	return start(h, impl, kubeconfig, true)
}

// testConversion checks the conversion webhook that webhook serves and the
// CRD points at (in the cluster: `make deploy`'s Deployment, behind the
// module's Service, with the CA its manager wrote into the CRD). It ends by
// stopping webhook, and leaves it down: callers call it last, so no test
// waits for a restart it does not need.
func testConversion(h *harness.H, impl implementation, webhook harness.Controller) {
	h.Helper()
	dyn, err := dynamic.NewForConfig(h.Env.Config)
	if err != nil {
		h.Fatal(err)
	}
	v1 := dyn.Resource(customPodsV1).Namespace(h.Namespace)
	v2 := dyn.Resource(impls.CustomPods).Namespace(h.Namespace)

	// A v1 CustomPod, as the articles write them: the API server stores it
	// as v2, through the webhook. Until the webhook serves with the CA the
	// CRD names, the write fails: wait for it.
	fromV1 := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "zhhnzw.mock.com/v1", "kind": "CustomPod",
		"metadata": map[string]any{"name": "from-v1"},
		"spec":     map[string]any{"replicas": int64(1)},
	}}
	h.WaitFor("a v1 CustomPod to be created through the conversion webhook", 3*time.Minute, func(ctx context.Context) (bool, string, error) {
		_, err := v1.Create(ctx, fromV1, metav1.CreateOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		return true, "", nil
	})

	// Read as v2: v1's default template.
	got, err := custompod.Get(h.Ctx, h, "from-v1")
	if err != nil {
		h.Fatal(err)
	}
	if !sameTemplate(got.Spec.Template, v1Default) || got.Spec.Replicas == nil || *got.Spec.Replicas != 1 {
		h.Errorf("the v1 CustomPod read as v2 has replicas %v and template %+v, want 1 and %+v", ptrStr(got.Spec.Replicas), got.Spec.Template, v1Default)
	}
	custompod.WaitForPods(h, "from-v1", 1)
	expectPodsRun(h, "from-v1", v1Default)

	// The module's v2 sample, with a template of its own, read as v1.
	name := impl.SampleName
	want := sampleTemplate(h, impl)
	h.KubectlIn(h.Path(impl.Dir), "apply", "-f", impl.Sample)
	// Written back through v1, as a v1 client does (read, change, update):
	// a label and the replicas. (Read again on a conflict: the controller
	// writes the status meanwhile.)
	first := true
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		asV1, err := v1.Get(h.Ctx, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("reading the v2 sample as v1: %w", err)
		}
		if first {
			first = false
			if asV1.GetAPIVersion() != "zhhnzw.mock.com/v1" {
				h.Errorf("read as v1, it says apiVersion %s", asV1.GetAPIVersion())
			}
			if _, found, _ := unstructured.NestedFieldNoCopy(asV1.Object, "spec", "template"); found {
				h.Errorf("read as v1, it has spec.template, which v1 does not have: %v", asV1.Object["spec"])
			}
			if asV1.GetAnnotations()[templateAnnotation] == "" {
				h.Errorf("read as v1, it lacks the %s annotation that keeps v2's template; annotations: %v", templateAnnotation, asV1.GetAnnotations())
			}
		}
		labels := asV1.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels["written-through"] = "v1"
		asV1.SetLabels(labels)
		if err := unstructured.SetNestedField(asV1.Object, int64(1), "spec", "replicas"); err != nil {
			return err
		}
		_, err = v1.Update(h.Ctx, asV1, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		h.Fatalf("updating it through v1: %v", err)
	}
	// Read as v2 again: the v1 write landed, and the template is intact.
	got, err = custompod.Get(h.Ctx, h, name)
	if err != nil {
		h.Fatal(err)
	}
	if !sameTemplate(got.Spec.Template, want) {
		h.Errorf("after a write through v1, spec.template is %+v, want the sample's %+v", got.Spec.Template, want)
	}
	if got.Spec.Replicas == nil || *got.Spec.Replicas != 1 || got.Metadata.Labels["written-through"] != "v1" {
		h.Errorf("the write through v1 was lost: replicas %v, labels %v", ptrStr(got.Spec.Replicas), got.Metadata.Labels)
	}
	if a, ok := got.Metadata.Annotations[templateAnnotation]; ok {
		h.Errorf("read as v2, it still carries the %s annotation (%q): v2 has the template in its spec", templateAnnotation, a)
	}
	// Its pods run v2's template.
	custompod.WaitForPods(h, name, 1)
	expectPodsRun(h, name, want)

	// The webhook down: reading v1 fails with the API server's conversion
	// error, reading v2 does not.
	if err := webhook.Stop(); err != nil {
		h.Fatal(err)
	}
	h.WaitFor("reading v1 to fail with the webhook down", time.Minute, func(ctx context.Context) (bool, string, error) {
		// In a cluster, a read just after the pod has gone can have the API
		// server dial the Service while it still leads to the pod's address,
		// where nothing answers: the read waits out the webhook's 30 s
		// timeout (on kind: 2 of 6 checks on two runs, all 3 on a third).
		// A moment later the Service refuses at once: give each read a few
		// seconds, and read again.
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_, err := v1.Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			return false, "read as v1 without error", nil
		}
		if ctx.Err() != nil {
			return false, "no answer within 5 s: " + err.Error(), nil
		}
		if !strings.Contains(err.Error(), "conversion webhook for zhhnzw.mock.com/v2, Kind=CustomPod failed") {
			h.Fatalf("reading v1 with the webhook down failed, but not with the API server's conversion error: %v", err)
		}
		h.Logf("reading v1 with the webhook down: %v", err)
		return true, "", nil
	})
	if _, err := v2.Get(h.Ctx, name, metav1.GetOptions{}); err != nil {
		h.Errorf("reading v2 with the webhook down failed: %v", err)
	}
	if out, err := h.KubectlErr("get", "custompods.v1.zhhnzw.mock.com", name); err == nil {
		h.Errorf("kubectl get custompods.v1.zhhnzw.mock.com with the webhook down succeeded:\n%s", out)
	}
	h.Kubectl("get", "custompods.v2.zhhnzw.mock.com", name)
}

// expectServiceWebhook fails the test unless the CustomPod CRD sends its
// conversions to a Service in the namespace of impl's `make deploy`, with a
// CA, which its manager wrote (the manifests carry none): the conversions
// testConversion sees then went through that Service to the Deployment, and
// not to a URL that a run beside the cluster left.
func expectServiceWebhook(h *harness.H, impl implementation) {
	h.Helper()
	out := h.Kubectl("get", "crd", "custompods.zhhnzw.mock.com", "-o", "jsonpath={.spec.conversion.webhook.clientConfig}")
	var cc struct {
		URL      string `json:"url"`
		CABundle string `json:"caBundle"`
		Service  *struct {
			Namespace string `json:"namespace"`
			Name      string `json:"name"`
		} `json:"service"`
	}
	if err := json.Unmarshal([]byte(out), &cc); err != nil {
		h.Fatalf("the CRD's conversion clientConfig %q: %v", out, err)
	}
	if cc.Service == nil || cc.Service.Namespace != impl.Dir+"-system" || cc.URL != "" || cc.CABundle == "" {
		h.Fatalf("the CRD's conversion clientConfig is %s; want a Service in %s-system, no url, and a caBundle", out, impl.Dir)
	}
	h.Logf("the CRD converts through Service %s/%s", cc.Service.Namespace, cc.Service.Name)
}

// sampleTemplate is spec.template of impl's v2 sample, read from its file.
func sampleTemplate(h *harness.H, impl implementation) custompod.Template {
	h.Helper()
	b, err := os.ReadFile(h.Path(impl.Dir, impl.Sample))
	if err != nil {
		h.Fatal(err)
	}
	var cp custompod.CustomPod
	if err := yaml.Unmarshal(b, &cp); err != nil {
		h.Fatal(err)
	}
	if cp.Spec.Template.Image == "" {
		h.Fatalf("%s/%s has no spec.template.image", impl.Dir, impl.Sample)
	}
	return cp.Spec.Template
}

func sameTemplate(a, b custompod.Template) bool {
	return a.Image == b.Image && slices.Equal(a.Command, b.Command)
}

func ptrStr(p *int32) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprint(*p)
}
