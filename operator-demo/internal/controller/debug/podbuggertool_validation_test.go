/*
Copyright 2026.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package debug

import (
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	debugv1alpha1 "example.com/k8s-demo/operator-demo/api/debug/v1alpha1"
)

// The API server checks every PodBuggerTool against the schema and the CEL
// rules controller-gen wrote from the markers in
// api/debug/v1alpha1/podbuggertool_types.go; no controller needed.
var _ = Describe("PodBuggerTool validation", func() {
	var namespace string

	BeforeEach(func() {
		namespace = newNamespace(ctx)
	})

	// create sends spec as-is, with strict field validation as kubectl does,
	// as a dry run: the API server validates it but stores nothing.
	create := func(spec map[string]any) error {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": debugv1alpha1.GroupVersion.String(),
			"kind":       "PodBuggerTool",
			"metadata":   map[string]any{"generateName": "validation-", "namespace": namespace},
			"spec":       spec,
		}}
		return k8sClient.Create(ctx, u, client.FieldValidation(metav1.FieldValidationStrict), client.DryRunAll)
	}
	labels := map[string]any{"matchLabels": map[string]any{"app": "web"}}
	expr := func(op string, values ...any) map[string]any {
		e := map[string]any{"key": "app", "operator": op}
		if values != nil {
			e["values"] = values
		}
		return map[string]any{"matchExpressions": []any{e}}
	}
	// exprs is a selector of several expressions, ANDed.
	exprs := func(selectors ...map[string]any) map[string]any {
		var all []any
		for _, s := range selectors {
			all = append(all, s["matchExpressions"].([]any)...)
		}
		return map[string]any{"matchExpressions": all}
	}
	const requiresLabel = "spec.selector: Invalid value: the selector must require a label (matchLabels, or a matchExpressions entry with In or Exists)"

	DescribeTable("should refuse a bad spec with a message naming the field",
		func(spec map[string]any, message string) {
			err := create(spec)
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring(message))
		},
		Entry("no image", map[string]any{"selector": labels},
			"spec.image: Required value"),
		Entry("an empty image", map[string]any{"selector": labels, "image": ""},
			"spec.image: Invalid value: \"\": spec.image in body should be at least 1 chars long"),
		Entry("no selector", map[string]any{"image": "busybox"},
			"spec.selector: Required value"),
		Entry("an empty selector, which would match every pod", map[string]any{"selector": map[string]any{}, "image": "busybox"},
			requiresLabel),
		Entry("DoesNotExist alone, which matches every pod without the label", map[string]any{"selector": expr("DoesNotExist"), "image": "busybox"},
			requiresLabel),
		Entry("NotIn alone, which matches every pod without the label", map[string]any{"selector": expr("NotIn", "zzz"), "image": "busybox"},
			requiresLabel),
		Entry("NotIn and DoesNotExist together", map[string]any{"selector": exprs(expr("NotIn", "zzz"), expr("DoesNotExist")), "image": "busybox"},
			requiresLabel),
		Entry("empty matchLabels beside NotIn", map[string]any{"selector": map[string]any{"matchLabels": map[string]any{},
			"matchExpressions": expr("NotIn", "zzz")["matchExpressions"]}, "image": "busybox"},
			requiresLabel),
		Entry("an unknown operator", map[string]any{"selector": expr("Equals", "web"), "image": "busybox"},
			"spec.selector: Invalid value: a matchExpressions operator must be In, NotIn, Exists or DoesNotExist"),
		Entry("In without values", map[string]any{"selector": expr("In"), "image": "busybox"},
			"spec.selector: Invalid value: In and NotIn need values; Exists and DoesNotExist take none"),
		Entry("Exists with values", map[string]any{"selector": expr("Exists", "web"), "image": "busybox"},
			"spec.selector: Invalid value: In and NotIn need values; Exists and DoesNotExist take none"),
		Entry("an unknown field", map[string]any{"selector": labels, "image": "busybox", "command": "sh"},
			`unknown field "spec.command"`),
	)

	It("should accept matchLabels, and each operator used as it must be, beside one that requires a label", func() {
		Expect(create(map[string]any{"selector": labels, "image": "busybox"})).To(Succeed())
		Expect(create(map[string]any{"selector": expr("In", "web", "db"), "image": "busybox", "targetContainer": "app"})).To(Succeed())
		Expect(create(map[string]any{"selector": expr("Exists"), "image": "busybox"})).To(Succeed())
		Expect(create(map[string]any{"selector": exprs(expr("Exists"), expr("NotIn", "web")), "image": "busybox"})).To(Succeed())
		Expect(create(map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"tier": "db"},
			"matchExpressions": expr("DoesNotExist")["matchExpressions"]}, "image": "busybox"})).To(Succeed())
	})
})

// The ValidatingAdmissionPolicy config/default ships
// (config/policy/podbuggertool_debug_rights.yaml), in envtest's API server,
// which authorizes with RBAC: a PodBuggerTool is admitted only for a user
// who may patch pods/ephemeralcontainers in its namespace.
var _ = Describe("PodBuggerTool admission policy", func() {
	// objects reads a manifest's objects.
	objects := func(path string) []*unstructured.Unstructured {
		b, err := os.ReadFile(filepath.Join("..", "..", "..", path))
		Expect(err).NotTo(HaveOccurred())
		docs := strings.Split(string(b), "\n---\n")
		objs := make([]*unstructured.Unstructured, 0, len(docs))
		for _, doc := range docs {
			u := &unstructured.Unstructured{}
			Expect(yaml.Unmarshal([]byte(doc), &u.Object)).To(Succeed())
			objs = append(objs, u)
		}
		return objs
	}
	// apply creates a manifest's objects, and deletes them after the test.
	apply := func(path string) {
		for _, obj := range objects(path) {
			Expect(client.IgnoreAlreadyExists(k8sClient.Create(ctx, obj))).To(Succeed(), "%s", path)
			DeferCleanup(func() { Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, obj))).To(Succeed()) })
		}
	}
	// as is a client that authenticates as the API server's admin and acts
	// as user (impersonation), with user's rights only.
	as := func(user string) client.Client {
		c := rest.CopyConfig(cfg)
		c.Impersonate = rest.ImpersonationConfig{UserName: user}
		cl, err := client.New(c, client.Options{Scheme: scheme.Scheme})
		Expect(err).NotTo(HaveOccurred())
		return cl
	}
	bind := func(namespace, user, kind, role string) {
		Expect(k8sClient.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{GenerateName: user + "-", Namespace: namespace},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: role},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
		})).To(Succeed())
	}
	tool := func(namespace, image string) *debugv1alpha1.PodBuggerTool {
		return &debugv1alpha1.PodBuggerTool{
			ObjectMeta: metav1.ObjectMeta{Name: "peek", Namespace: namespace},
			Spec: debugv1alpha1.PodBuggerToolSpec{
				Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
				Image:    image,
			},
		}
	}

	It("should admit a PodBuggerTool, or a change to its spec, only for a user who may patch pods/ephemeralcontainers", func() {
		namespace := newNamespace(ctx)
		apply("config/rbac/debug_podbuggertool_editor_role.yaml")
		apply("config/policy/podbuggertool_debug_rights.yaml")
		// alice holds the editor role; bob also may kubectl debug.
		bind(namespace, "alice", "ClusterRole", "debug-podbuggertool-editor-role")
		bind(namespace, "bob", "ClusterRole", "debug-podbuggertool-editor-role")
		Expect(k8sClient.Create(ctx, &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: "debugger", Namespace: namespace},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods/ephemeralcontainers"}, Verbs: []string{"patch"}}},
		})).To(Succeed())
		bind(namespace, "bob", "Role", "debugger")
		alice, bob := as("alice"), as("bob")

		By("alice is refused, with a message that names the right she lacks")
		// The API server compiles a new policy in the background.
		Eventually(func() error {
			return alice.Create(ctx, tool(namespace, "busybox"), client.DryRunAll)
		}).Should(And(
			Satisfy(apierrors.IsForbidden),
			MatchError(ContainSubstring("user alice may not patch pods/ephemeralcontainers in namespace "+namespace)),
		))

		By("bob is admitted")
		Expect(bob.Create(ctx, tool(namespace, "busybox"))).To(Succeed())

		By("alice may change what changes no debugger, not the spec")
		var peek debugv1alpha1.PodBuggerTool
		Expect(alice.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "peek"}, &peek)).To(Succeed())
		patch := client.MergeFrom(peek.DeepCopy())
		peek.Labels = map[string]string{"team": "a"}
		Expect(alice.Patch(ctx, &peek, patch)).To(Succeed())
		patch = client.MergeFrom(peek.DeepCopy())
		peek.Spec.Image = "evil"
		err := alice.Patch(ctx, &peek, patch)
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "got %v", err)
		Expect(err).To(MatchError(ContainSubstring("pods/ephemeralcontainers")))

		By("a status write passes: the policy does not see podbuggertools/status")
		Expect(k8sClient.Create(ctx, &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: "status-writer", Namespace: namespace},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{debugv1alpha1.GroupVersion.Group},
				Resources: []string{"podbuggertools/status"}, Verbs: []string{"get", "patch"}}},
		})).To(Succeed())
		bind(namespace, "carol", "Role", "status-writer")
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "peek"}, &peek)).To(Succeed())
		patch = client.MergeFrom(peek.DeepCopy())
		peek.Status.DebuggedPods = 7
		Expect(as("carol").Status().Patch(ctx, &peek, patch)).To(Succeed())
	})
})
