package admission

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"example.com/k8s-demo/e2e/harness"
)

// The rungs of docs/webhooks.md's admission ladder that testdata/invalid
// (creates only) and policy_test.go do not show: a transition rule, which
// needs an update; ratcheting, which needs a schema that changes under a
// stored object; and a MutatingAdmissionPolicy, whose default must be seen.

// writeFile writes a manifest into the test's directory and returns its path.
func writeFile(t *testing.T, h *harness.H, name, content string) string {
	t.Helper()
	f := filepath.Join(h.Dir, name)
	if err := os.WriteFile(f, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// wantRefused fails the test unless out and err are a refusal containing
// every want.
func wantRefused(t *testing.T, what, out string, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s was accepted, want it refused with %q:\n%s", what, want, out)
		return
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("%s was refused, but the message lacks %q:\n%s", what, w, out)
		}
	}
}

// TestPodBuggerToolSelectorImmutable: +k8s:immutable on PodBuggerTool's
// selector, which controller-gen writes as the transition rule
// self == oldSelf. A create and a change of another field pass; a change of
// the selector is refused, naming it.
func TestPodBuggerToolSelectorImmutable(t *testing.T) {
	h := harness.New(t)
	const crd = "operator-demo/config/crd/bases/debug.mock.com_podbuggertools.yaml"
	h.KubectlIn(h.Path(), "apply", "-f", crd)
	h.WaitEstablished(h.Path(), "-f", crd)
	h.KubectlIn(h.Path(), "apply", "-f", "operator-demo/config/samples/debug_v1alpha1_podbuggertool.yaml")

	if out, err := h.KubectlErr("patch", "podbuggertool", "podbuggertool-sample", "--type=merge",
		"-p", `{"spec":{"image":"busybox:musl"}}`); err != nil {
		t.Errorf("changing the image, which is not immutable, was refused: %v\n%s", err, out)
	}
	out, err := h.KubectlErr("patch", "podbuggertool", "podbuggertool-sample", "--type=merge",
		"-p", `{"spec":{"selector":{"matchLabels":{"debug.mock.com/debug":"yes"}}}}`)
	wantRefused(t, "changing the selector", out, err, "spec.selector: Invalid value", "field is immutable")
}

// TestCustomPodRatcheting: validation ratcheting (GA in 1.33) and the
// optionalOldSelf rule on the name. A CustomPod is stored under a looser
// schema (replicas up to 100, no name rule), then the real CRD, tightened to
// replicas <= 10, replaces it. An update that leaves the offending fields
// as they were is accepted; a new object, or a change of the field, is
// refused.
//
// The CRD is copied under a group and kind of its own (RatchetPod,
// ratchet.zhhnzw.mock.com), so that the tightened schema never reaches the
// other tests' CustomPods, and "kubectl get custompod" in a suite running
// beside this one never finds two kinds of that name.
func TestCustomPodRatcheting(t *testing.T) {
	h := harness.New(t)
	b, err := os.ReadFile(h.Path("kubebuilder-demo/config/crd/bases/zhhnzw.mock.com_custompods.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// crd returns the CRD in the test's group, replicas at most maxReplicas,
	// with the root's rules (the name's) or without.
	crd := func(maxReplicas int, nameRule bool) string {
		var obj map[string]any
		if err := yaml.Unmarshal(b, &obj); err != nil {
			t.Fatal(err)
		}
		obj["metadata"].(map[string]any)["name"] = "ratchetpods.ratchet.zhhnzw.mock.com"
		spec := obj["spec"].(map[string]any)
		spec["group"] = "ratchet.zhhnzw.mock.com"
		spec["names"] = map[string]any{"kind": "RatchetPod", "listKind": "RatchetPodList", "plural": "ratchetpods", "singular": "ratchetpod"}
		delete(spec, "conversion")
		for _, v := range spec["versions"].([]any) {
			root := v.(map[string]any)["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)
			if !nameRule {
				delete(root, "x-kubernetes-validations")
			}
			replicas := root["properties"].(map[string]any)["spec"].(map[string]any)["properties"].(map[string]any)["replicas"].(map[string]any)
			replicas["maximum"] = maxReplicas
		}
		out, err := yaml.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	apply := func(name, content string) (string, error) {
		return h.KubectlErr("apply", "-f", writeFile(t, h, name, content))
	}
	applyCRD := func(content string) {
		f := writeFile(t, h, "crd.yaml", content)
		h.Kubectl("apply", "-f", f)
		h.WaitEstablished("", "-f", f)
	}
	t.Cleanup(func() {
		_, _ = h.KubectlErr("delete", "--ignore-not-found", "crd", "ratchetpods.ratchet.zhhnzw.mock.com")
	})
	const long = "a-custompod-whose-name-is-longer-than-the-63-characters-a-label-value-may-hold"
	custompod := func(name string, replicas, image string) string {
		return "apiVersion: ratchet.zhhnzw.mock.com/v2\nkind: RatchetPod\nmetadata:\n  name: " + name +
			"\nspec:\n  replicas: " + replicas + "\n  template:\n    image: " + image + "\n"
	}

	applyCRD(crd(100, false))
	if out, err := apply("old.yaml", custompod(long, "50", "busybox:1.36")); err != nil {
		t.Fatalf("a CustomPod valid under the loose schema was refused: %v\n%s", err, out)
	}

	applyCRD(crd(10, true))
	// The API server reads a new schema in the background: wait until an
	// update is refused what the tightened schema must refuse.
	h.WaitFor("the tightened schema to refuse an update to replicas 60", 30*time.Second, func(context.Context) (bool, string, error) {
		out, err := h.KubectlErr("apply", "--dry-run=server", "-f", writeFile(t, h, "probe.yaml", custompod(long, "60", "busybox:1.36")))
		return err != nil, strings.TrimSpace(out), nil
	})

	// The old object still updates: replicas is unchanged, so the tightened
	// maximum does not apply to it (ratcheting), and the name rule's
	// oldSelf.hasValue() passes every update.
	if out, err := apply("old.yaml", custompod(long, "50", "busybox:1.37")); err != nil {
		t.Errorf("an update that leaves replicas (50) and the long name as they were was refused: %v\n%s", err, out)
	}
	out, err := apply("old.yaml", custompod(long, "60", "busybox:1.37"))
	wantRefused(t, "changing the old object's replicas to 60", out, err,
		"spec.replicas: Invalid value: 60", "less than or equal to 10")
	out, err = apply("new.yaml", custompod("new", "50", "busybox:1.36"))
	wantRefused(t, "a new CustomPod with replicas 50", out, err,
		"spec.replicas: Invalid value: 50", "less than or equal to 10")
	out, err = apply("long.yaml", custompod(long+"-2", "1", "busybox:1.36"))
	wantRefused(t, "a new CustomPod with a 80-character name", out, err, "metadata.name must be at most 63 characters")
}

// TestCustomPodDefaultTeamPolicy: operator-demo/config/policy's
// MutatingAdmissionPolicy gives a CustomPod created without the label
// mock.com/team its namespace's; a label the user set stays.
func TestCustomPodDefaultTeamPolicy(t *testing.T) {
	h := harness.New(t)
	const policy = "operator-demo/config/policy/custompod_default_team.yaml"
	crd := "kubebuilder-demo/config/crd/bases/zhhnzw.mock.com_custompods.yaml"
	h.KubectlIn(h.Path(), "apply", "-f", crd)
	h.WaitEstablished(h.Path(), "-f", crd)
	h.KubectlIn(h.Path(), "apply", "-f", policy)
	t.Cleanup(func() { _, _ = h.KubectlErr("delete", "--ignore-not-found", "-f", h.Path(policy)) })
	h.Kubectl("label", "namespace", h.Namespace, "mock.com/team=blue")

	custompod := func(name, labels string) string {
		return "apiVersion: zhhnzw.mock.com/v2\nkind: CustomPod\nmetadata:\n  name: " + name + labels +
			"\nspec:\n  template:\n    image: busybox:1.36\n"
	}
	team := func(name string) string {
		return h.Kubectl("get", "custompods.zhhnzw.mock.com", name, "-o", `jsonpath={.metadata.labels.mock\.com/team}`)
	}
	// The API server loads a new policy in the background: a dry run shows
	// when it mutates.
	h.WaitFor("the policy to default mock.com/team", 30*time.Second, func(context.Context) (bool, string, error) {
		out, err := h.KubectlErr("apply", "--dry-run=server", "-o", "yaml", "-f", writeFile(t, h, "probe.yaml", custompod("probe", "")))
		return err == nil && strings.Contains(out, "mock.com/team: blue"), strings.TrimSpace(out), nil
	})

	h.Kubectl("apply", "-f", writeFile(t, h, "defaulted.yaml", custompod("defaulted", "\n  labels:\n    app: web")))
	if got := team("defaulted"); got != "blue" {
		t.Errorf("CustomPod defaulted, created without mock.com/team: label %q, want the namespace's, \"blue\"", got)
	}
	if got := h.Kubectl("get", "custompods.zhhnzw.mock.com", "defaulted", "-o", "jsonpath={.metadata.labels.app}"); got != "web" {
		t.Errorf("CustomPod defaulted: label app %q, want \"web\": the policy must merge, not replace, the labels", got)
	}
	h.Kubectl("apply", "-f", writeFile(t, h, "own.yaml", custompod("own", "\n  labels:\n    mock.com/team: green")))
	if got := team("own"); got != "green" {
		t.Errorf("CustomPod own, created with mock.com/team=green: label %q, want it kept", got)
	}

	// A namespace without the label adds none, and refuses nothing: the
	// policy matches every CustomPod of the cluster.
	h.Kubectl("label", "namespace", h.Namespace, "mock.com/team-")
	h.WaitFor("the policy to read the namespace without its label", 30*time.Second, func(context.Context) (bool, string, error) {
		out, err := h.KubectlErr("apply", "--dry-run=server", "-o", "yaml", "-f", writeFile(t, h, "probe.yaml", custompod("probe", "")))
		return err == nil && !strings.Contains(out, "mock.com/team"), strings.TrimSpace(out), nil
	})
	h.Kubectl("apply", "-f", writeFile(t, h, "unlabelled.yaml", custompod("unlabelled", "")))
	if got := team("unlabelled"); got != "" {
		t.Errorf("CustomPod unlabelled, created in a namespace without mock.com/team: label %q, want none", got)
	}
}
