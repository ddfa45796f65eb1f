package walkthrough

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"example.com/k8s-demo/e2e/custompod"
	"example.com/k8s-demo/e2e/harness"
)

// fieldManager is the name the three controllers write under, in the
// managedFields of the pods and of the CustomPod's status.
const fieldManager = "custompod-controller"

// TestCustomPodRestricted runs each implementation in a namespace that
// enforces the "restricted" Pod Security Standard: the pods must be
// admitted, run and be ready. Then it checks what the three have in common:
// the same pod, and their name in managedFields.
func TestCustomPodRestricted(t *testing.T) {
	podSpecs := map[string]string{} // implementation → its pod's spec, as JSON
	t.Run("each", func(t *testing.T) {
		for _, impl := range implementations {
			t.Run(impl.Name, func(t *testing.T) {
				h := harness.New(t)
				name := impl.SampleName
				h.Track("custompod/" + name)
				h.EnforceRestricted()
				startController(h, impl)

				h.KubectlIn(h.Path(impl.Dir), "apply", "-f", impl.Sample)
				custompod.WaitForPods(h, name, custompod.SampleReplicas)

				pods := custompod.OwnedPods(h, name)
				for _, p := range pods {
					h.ExpectManager(&p, fieldManager, "")
				}
				var cp metav1.PartialObjectMetadata
				raw, err := h.Env.Client.CoreV1().RESTClient().Get().
					AbsPath("/apis/zhhnzw.mock.com/v2/namespaces", h.Namespace, "custompods", name).DoRaw(h.Ctx)
				if err == nil {
					err = json.Unmarshal(raw, &cp)
				}
				if err != nil {
					t.Fatal(err)
				}
				h.ExpectManager(&cp, fieldManager, "status")

				podSpecs[impl.Name] = podTemplate(t, pods[0])
			})
		}
	})
	if t.Failed() {
		return
	}
	want := podSpecs[implementations[0].Name]
	for _, impl := range implementations[1:] {
		if got := podSpecs[impl.Name]; got != want {
			t.Errorf("%s and %s make different pods:\n%s: %s\n%s: %s",
				implementations[0].Name, impl.Name, implementations[0].Name, want, impl.Name, got)
		}
	}
}

// podTemplate is what a pod's spec says of the controller's template, as
// JSON: what the API server adds that differs from pod to pod (the node, the
// ServiceAccount token's volume) taken out.
func podTemplate(t *testing.T, pod corev1.Pod) string {
	t.Helper()
	spec := pod.Spec.DeepCopy()
	spec.NodeName, spec.Volumes = "", nil
	for i := range spec.Containers {
		spec.Containers[i].VolumeMounts = nil
	}
	b, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
