// Package admission checks that bad input stops at the earliest layer: every
// manifest in testdata/invalid is refused by the API server (the CRDs'
// OpenAPI schemas and CEL rules, and strict field validation), with a
// message that names the field, and nothing of it is stored, so no
// controller ever sees it.
//
// Each file says what the refusal must contain in its "# want:" lines:
//
//	kubectl apply -f e2e/admission/testdata/invalid/vpc-subnetnum-zero.yaml
package admission

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"example.com/k8s-demo/e2e/harness"
)

func TestMain(m *testing.M) { harness.Main(m) }

// crds install every schema the invalid manifests are checked against. The
// CustomPod cases run against crd-demo's hand-written CRD and against the one
// controller-gen makes for kubebuilder-demo (operator-demo's is the same
// file, which make verify checks).
//
// valid are the samples the articles apply: accepted by the same schemas, so
// that a refusal below is the rule's doing, not a missing CRD's. CustomPod's
// are v2, the version stored: crd-demo's CRD converts by webhook, which this
// suite does not run, and even a dry run of a v1 object is encoded as v2.
// (A v1 manifest is still checked against v1's schema, before any
// conversion: the v1 cases below are refused by it.)
var crds = []struct {
	name         string
	files, valid []string
}{
	{"crd-demo",
		[]string{"crd-demo/crd/network.yaml", "crd-demo/crd/custompod.yaml"},
		[]string{"crd-demo/example/example-network.yaml", "crd-demo/example/example-custompod-v2.yaml"}},
	{"controller-gen",
		[]string{"crd-demo/crd/network.yaml", "kubebuilder-demo/config/crd/bases/zhhnzw.mock.com_custompods.yaml",
			"operator-demo/config/crd/bases/apps.mock.com_podsets.yaml", "operator-demo/config/crd/bases/network.mock.com_vpcs.yaml",
			"operator-demo/config/crd/bases/debug.mock.com_podbuggertools.yaml"},
		[]string{"kubebuilder-demo/config/samples/zhhnzw_v2_custompod.yaml",
			"operator-demo/config/samples/apps_v1alpha1_podset.yaml", "operator-demo/config/samples/network_v1_vpc.yaml",
			"operator-demo/config/samples/debug_v1alpha1_podbuggertool.yaml"}},
}

type invalidCase struct {
	file, kind string
	want       []string
}

func invalidCases(t *testing.T) []invalidCase {
	files, err := filepath.Glob("testdata/invalid/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cases []invalidCase
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		c := invalidCase{file: f}
		for _, line := range strings.Split(string(b), "\n") {
			if w, ok := strings.CutPrefix(line, "# want: "); ok {
				c.want = append(c.want, w)
			}
			if k, ok := strings.CutPrefix(line, "kind: "); ok {
				c.kind = strings.ToLower(k)
			}
		}
		if len(c.want) == 0 || c.kind == "" {
			t.Fatalf("%s: want a kind and at least one \"# want:\" line", f)
		}
		cases = append(cases, c)
	}
	// The issue asks for at least 20, across all the CRDs.
	if len(cases) < 20 {
		t.Fatalf("%d invalid manifests, want at least 20", len(cases))
	}
	return cases
}

func TestInvalidManifestsAreRefusedAtAdmission(t *testing.T) {
	cases := invalidCases(t)
	for _, schema := range crds {
		t.Run(schema.name, func(t *testing.T) {
			h := harness.New(t)
			for _, f := range schema.files {
				h.KubectlIn(h.Path(), "apply", "-f", f)
				h.WaitEstablished(h.Path(), "-f", f)
			}
			for _, f := range schema.valid {
				h.KubectlIn(h.Path(), "apply", "--dry-run=server", "-f", f)
			}
			for _, c := range cases {
				if schema.name == "crd-demo" && c.kind != "network" && c.kind != "custompod" ||
					schema.name == "controller-gen" && c.kind == "network" {
					continue
				}
				t.Run(strings.TrimSuffix(filepath.Base(c.file), ".yaml"), func(t *testing.T) {
					out, err := h.KubectlErr("apply", "-f", c.file)
					if err == nil {
						t.Fatalf("kubectl apply -f %s was accepted, want it refused with %q:\n%s", c.file, c.want, out)
					}
					for _, w := range c.want {
						if !strings.Contains(out, w) {
							t.Errorf("kubectl apply -f %s was refused, but the message lacks %q:\n%s", c.file, w, out)
						}
					}
				})
			}
			// Nothing was stored: no controller can have seen any of it.
			for _, kind := range []string{"networks.samplecrd.k8s.io", "custompods.zhhnzw.mock.com", "podsets.apps.mock.com", "vpcs.network.mock.com"} {
				if out, err := h.KubectlErr("get", kind, "-o", "name"); err == nil && strings.TrimSpace(out) != "" {
					t.Errorf("kubectl get %s shows objects that should have been refused:\n%s", kind, out)
				}
			}
		})
	}
}
