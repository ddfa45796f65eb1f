package admission

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"example.com/k8s-demo/e2e/harness"
)

// The ValidatingAdmissionPolicy of operator-demo/config/policy: a rule that
// reads the Vpc's namespace, which the CRD's CEL cannot see, enforced by the
// API server itself with no webhook. Only namespaces with the annotation are
// limited, so the policy does not reach the other tests' Vpcs.
func TestVpcAllowedCIDRsPolicy(t *testing.T) {
	h := harness.New(t)
	const policy = "operator-demo/config/policy/vpc_allowed_cidrs.yaml"
	crd := "operator-demo/config/crd/bases/network.mock.com_vpcs.yaml"
	h.KubectlIn(h.Path(), "apply", "-f", crd)
	h.WaitEstablished(h.Path(), "-f", crd)
	h.KubectlIn(h.Path(), "apply", "-f", policy)
	t.Cleanup(func() { _, _ = h.KubectlErr("delete", "--ignore-not-found", "-f", h.Path(policy)) })

	vpc := func(name, cidr string) string {
		return "apiVersion: network.mock.com/v1\nkind: Vpc\nmetadata:\n  name: " + name +
			"\nspec:\n  vpcname: " + name + "\n  cidrblock: " + cidr + "\n  subnetnum: 1\n"
	}
	// apply writes a manifest to the test's directory and applies it.
	apply := func(manifest string, extra ...string) (string, error) {
		f := filepath.Join(h.Dir, "vpc.yaml")
		if err := os.WriteFile(f, []byte(manifest), 0o644); err != nil {
			t.Fatal(err)
		}
		return h.KubectlErr(append([]string{"apply", "-f", f}, extra...)...)
	}

	// Without the annotation the namespace is not limited.
	if out, err := apply(vpc("anywhere", "192.168.0.0/16"), "--dry-run=server"); err != nil {
		t.Fatalf("a Vpc in a namespace without the annotation was refused: %v\n%s", err, out)
	}

	h.Kubectl("annotate", "namespace", h.Namespace, "network.mock.com/allowed-cidrs=10.1.0.0/16, fd00:1::/48")
	// The API server compiles a new policy in the background: wait until it
	// refuses what it must, then check the message.
	var refusal string
	h.WaitFor("the policy to refuse a Vpc outside 10.1.0.0/16", 30*time.Second, func(context.Context) (bool, string, error) {
		out, err := apply(vpc("outside", "10.2.0.0/16"), "--dry-run=server")
		refusal = out
		return err != nil, strings.TrimSpace(out), nil
	})
	for _, want := range []string{`ValidatingAdmissionPolicy 'vpc-allowed-cidrs.network.mock.com'`, "denied request",
		"spec.cidrblock: 10.2.0.0/16 is outside the ranges namespace " + h.Namespace + " allows (10.1.0.0/16, fd00:1::/48)"} {
		if !strings.Contains(refusal, want) {
			t.Errorf("the refusal lacks %q:\n%s", want, refusal)
		}
	}

	// Inside one of the ranges, IPv4 or IPv6, a Vpc is admitted, and stored.
	for name, cidr := range map[string]string{"inside": "10.1.4.0/24", "inside6": "fd00:1:0:8::/64"} {
		if out, err := apply(vpc(name, cidr)); err != nil {
			t.Errorf("Vpc %s (%s) was refused: %v\n%s", name, cidr, err, out)
		}
	}
	// The rule holds on update too.
	if out, err := h.KubectlErr("patch", "vpc", "inside", "--type=merge", "-p", `{"spec":{"cidrblock":"10.9.0.0/16"}}`); err == nil ||
		!strings.Contains(out, "10.9.0.0/16 is outside the ranges") {
		t.Errorf("moving Vpc inside out of the allowed ranges: want it refused by the policy, got err=%v:\n%s", err, out)
	}

	// Narrowing the annotation leaves Vpc inside (10.1.4.0/24) outside the
	// ranges. Its updates that keep the range must still pass, or its labels
	// and the removal of its finalizers would be frozen; a new range must
	// still lie inside.
	h.Kubectl("annotate", "--overwrite", "namespace", h.Namespace, "network.mock.com/allowed-cidrs=10.1.8.0/24")
	h.WaitFor("the policy to read the narrowed annotation", 30*time.Second, func(context.Context) (bool, string, error) {
		out, err := apply(vpc("narrowed", "10.1.4.0/24"), "--dry-run=server")
		return err != nil && strings.Contains(out, "allows (10.1.8.0/24)"), strings.TrimSpace(out), nil
	})
	if out, err := h.KubectlErr("label", "vpc", "inside", "team=blue"); err != nil {
		t.Errorf("labelling Vpc inside, whose range the narrowed annotation excludes: want it admitted, got %v:\n%s", err, out)
	}
	want := "spec.cidrblock: 10.1.5.0/24 is outside the ranges namespace " + h.Namespace + " allows (10.1.8.0/24)"
	if out, err := h.KubectlErr("patch", "vpc", "inside", "--type=merge", "-p", `{"spec":{"cidrblock":"10.1.5.0/24"}}`); err == nil ||
		!strings.Contains(out, want) {
		t.Errorf("moving Vpc inside to another range outside the narrowed annotation: want it refused with %q, got err=%v:\n%s", want, err, out)
	}
}
