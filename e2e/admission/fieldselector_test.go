package admission

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"example.com/k8s-demo/e2e/harness"
)

// TestCustomPodFieldSelectors lists CustomPods with the field selectors the
// CRDs declare (selectableFields: spec.replicas, and v2's
// spec.template.image), against crd-demo's hand-written CRD and the one
// controller-gen makes from the +kubebuilder:selectablefield markers: the
// API server returns only the objects that match, and refuses a field the
// CRD does not declare, naming it.
func TestCustomPodFieldSelectors(t *testing.T) {
	for _, schema := range crds {
		t.Run(schema.name, func(t *testing.T) {
			h := harness.New(t)
			for _, f := range schema.files {
				h.KubectlIn(h.Path(), "apply", "-f", f)
				h.WaitEstablished(h.Path(), "-f", f)
			}
			// v2, the version stored: no conversion webhook is needed to
			// write or list them.
			var manifest strings.Builder
			for _, cp := range []struct{ name, replicas, image string }{
				{"idle", "0", "busybox:1.36"},
				{"two-busybox", "2", "busybox:1.36"},
				{"two-nginx", "2", "nginx:1.27"},
			} {
				manifest.WriteString("---\napiVersion: zhhnzw.mock.com/v2\nkind: CustomPod\nmetadata:\n  name: " + cp.name +
					"\nspec:\n  replicas: " + cp.replicas + "\n  template:\n    image: " + cp.image + "\n    command: [sleep, \"3600\"]\n")
			}
			f := filepath.Join(h.Dir, "custompods.yaml")
			if err := os.WriteFile(f, []byte(manifest.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			h.Kubectl("apply", "-f", f)
			t.Cleanup(func() { _, _ = h.KubectlErr("delete", "--ignore-not-found", "-f", f) })

			for _, c := range []struct{ selector, want string }{
				{"spec.replicas=2", "two-busybox two-nginx"},
				{"spec.replicas!=2", "idle"},
				{"spec.template.image=busybox:1.36", "idle two-busybox"},
				{"spec.template.image=busybox:1.36,spec.replicas=2", "two-busybox"},
				{"spec.template.image=busybox:1.37", ""},
			} {
				out := h.Kubectl("get", "custompods", "--field-selector", c.selector, "-o", "jsonpath={.items[*].metadata.name}")
				if got := strings.TrimSpace(out); got != c.want {
					t.Errorf("kubectl get custompods --field-selector %s: got [%s], want [%s]", c.selector, got, c.want)
				}
			}

			// A field the CRD does not declare selectable is refused, by name.
			out, err := h.KubectlErr("get", "custompods", "--field-selector", "spec.template.command=sleep")
			if err == nil {
				t.Fatalf("a field selector on spec.template.command, which no CRD declares, was accepted:\n%s", out)
			}
			if !strings.Contains(out, "spec.template.command") {
				t.Errorf("the refusal of spec.template.command does not name the field:\n%s", out)
			}
		})
	}
}
