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

package v1alpha1

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	"sigs.k8s.io/yaml"

	debugv1alpha1 "example.com/k8s-demo/operator-demo/api/debug/v1alpha1"
)

// The manager's identity under make deploy: the status writes are its.
const managerSA = "system:serviceaccount:operator-demo-system:operator-demo-controller-manager"

// The specs go through the API server, as kubectl does, each user
// impersonated with envtest's admin config: the request is admitted or
// refused by the webhook envtest registered from config/webhook/manifests.yaml,
// which asks the same API server's RBAC about that user.
var _ = Describe("PodBuggerTool Webhook", func() {
	var namespace string

	// as is a client that acts as user, in groups.
	as := func(user string, groups ...string) client.Client {
		GinkgoHelper()
		c := rest.CopyConfig(cfg)
		c.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
		cl, err := client.New(c, client.Options{Scheme: scheme.Scheme})
		Expect(err).NotTo(HaveOccurred())
		return cl
	}

	// clusterRole creates (or leaves as it is) a ClusterRole of config/rbac.
	clusterRole := func(file string) string {
		GinkgoHelper()
		b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "config", "rbac", file))
		Expect(err).NotTo(HaveOccurred())
		var role rbacv1.ClusterRole
		Expect(yaml.Unmarshal(b, &role)).To(Succeed())
		if err := k8sClient.Create(ctx, &role); !apierrors.IsAlreadyExists(err) {
			Expect(err).NotTo(HaveOccurred())
		}
		return role.Name
	}

	bind := func(name string, role rbacv1.RoleRef, subjects ...rbacv1.Subject) {
		GinkgoHelper()
		Expect(k8sClient.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
			RoleRef:    role, Subjects: subjects,
		})).To(Succeed())
	}
	user := func(name string) rbacv1.Subject {
		return rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}
	}

	tool := func(name string) *debugv1alpha1.PodBuggerTool {
		return &debugv1alpha1.PodBuggerTool{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
			Spec: debugv1alpha1.PodBuggerToolSpec{
				Selector: metav1.LabelSelector{MatchLabels: map[string]string{"debug.mock.com/debug": "true"}},
				Image:    "busybox",
			},
		}
	}

	// pastRBAC calls f until the API server's RBAC no longer refuses the
	// request itself, as it does until it has seen the spec's new bindings,
	// and returns the first answer after that: the webhook's.
	pastRBAC := func(f func() error) error {
		GinkgoHelper()
		var err error
		Eventually(func() bool {
			err = f()
			return !apierrors.IsForbidden(err) || strings.Contains(err.Error(), "admission webhook")
		}).Should(BeTrue(), func() string { return fmt.Sprintf("RBAC still refuses the request itself: %v", err) })
		return err
	}

	refusal := func(user, ns string) string {
		return `admission webhook "vpodbuggertool-v1alpha1.kb.io" denied the request: ` +
			`podbuggertools.debug.mock.com "peek" is forbidden: user ` + user +
			` may not patch pods/ephemeralcontainers in namespace ` + ns +
			`: a PodBuggerTool adds ephemeral containers to pods, as kubectl debug does, and needs the same right`
	}

	BeforeEach(func() {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "podbuggertool-webhook-"}}
		Expect(k8sClient.Create(ctx, ns)).To(Succeed())
		namespace = ns.Name

		// What chapter 4 grants alice: the scaffold's editor role. bob
		// holds it too, and may also do what kubectl debug needs; the
		// group debuggers may as well, which a SubjectAccessReview sees only
		// if the webhook passes the user's groups on.
		editor := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRole("debug_podbuggertool_editor_role.yaml")}
		Expect(k8sClient.Create(ctx, &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: "kubectl-debug", Namespace: namespace},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods/ephemeralcontainers"}, Verbs: []string{"patch"}}},
		})).To(Succeed())
		debug := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "kubectl-debug"}
		bind("editors", editor, user("alice"), user("bob"), user("carol"))
		bind("debuggers", debug, user("bob"), rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "debuggers"})
	})

	Context("When a user creates or changes a PodBuggerTool", func() {
		It("Should refuse a user who may write PodBuggerTools but not debug pods, naming the right, the namespace and the user", func() {
			alice := as("alice")
			err := pastRBAC(func() error { return alice.Create(ctx, tool("peek")) })
			Expect(apierrors.IsForbidden(err)).To(BeTrue(), "want 403 Forbidden, got %v", err)
			Expect(err.Error()).To(Equal(refusal("alice", namespace)))
			Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "peek"}, &debugv1alpha1.PodBuggerTool{}))).
				To(BeTrue(), "the refused PodBuggerTool must not be stored")
		})

		It("Should admit a user who may also patch pods/ephemeralcontainers in the namespace", func() {
			bob := as("bob")
			Eventually(func() error { return bob.Create(ctx, tool("peek")) }).Should(Succeed())
		})

		It("Should ask about the user's groups too", func() {
			Eventually(func() error { return as("carol", "debuggers").Create(ctx, tool("peek")) }).Should(Succeed())
			// Without the group, the same user is refused.
			err := as("carol").Create(ctx, tool("peek2"))
			Expect(err).To(MatchError(ContainSubstring("user carol may not patch pods/ephemeralcontainers")))
		})

		It("Should let a user who may not debug change what changes no debugger, and refuse a change to the spec", func() {
			t := tool("peek")
			Expect(k8sClient.Create(ctx, t)).To(Succeed())
			alice := as("alice")
			Eventually(func() error {
				Expect(alice.Get(ctx, client.ObjectKeyFromObject(t), t)).To(Succeed())
				t.Labels = map[string]string{"team": "a"}
				return alice.Update(ctx, t)
			}).Should(Succeed())

			t.Spec.Image = "busybox:musl"
			err := alice.Update(ctx, t)
			Expect(apierrors.IsForbidden(err)).To(BeTrue(), "want 403 Forbidden, got %v", err)
			Expect(err.Error()).To(Equal(refusal("alice", namespace)))
		})

		It("Should pass the controller's status writes, though it may not patch pods/ephemeralcontainers", func() {
			t := tool("peek")
			Expect(k8sClient.Create(ctx, t)).To(Succeed())
			// config/rbac/role.yaml, bound to the manager's ServiceAccount
			// in this namespace only.
			bind("manager", rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRole("role.yaml")},
				rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "operator-demo-controller-manager", Namespace: "operator-demo-system"})

			// The manager updates ephemeral containers, as the API's
			// update verb: it may not patch them, so a webhook that saw its
			// status writes would refuse them.
			sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User: managerSA, ResourceAttributes: &authorizationv1.ResourceAttributes{
					Namespace: namespace, Verb: "patch", Resource: "pods", Subresource: "ephemeralcontainers"}}}
			Expect(k8sClient.Create(ctx, sar)).To(Succeed())
			Expect(sar.Status.Allowed).To(BeFalse(), "the manager may patch pods/ephemeralcontainers: this spec would prove nothing")

			manager := as(managerSA)
			Eventually(func() error {
				if err := manager.Get(ctx, client.ObjectKeyFromObject(t), t); err != nil {
					return err
				}
				patch := client.MergeFrom(t.DeepCopy())
				t.Status.DebuggedPods = 1
				return manager.Status().Patch(ctx, t, patch)
			}).Should(Succeed())
			Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(t), t)).To(Succeed())
			Expect(t.Status.DebuggedPods).To(Equal(int32(1)))
		})
	})

	Context("When the check cannot be made", func() {
		request := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
			Operation: admissionv1.Create,
			UserInfo:  authenticationv1.UserInfo{Username: "alice", Groups: []string{"system:authenticated"}},
		}}

		It("Should refuse when the SubjectAccessReview fails, saying so", func() {
			failing := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithInterceptorFuncs(interceptor.Funcs{
				Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error {
					return errors.New("connection refused")
				},
			}).Build()
			v := &PodBuggerToolValidator{Client: failing}
			_, err := v.ValidateCreate(admission.NewContextWithRequest(ctx, request), tool("peek"))
			Expect(apierrors.IsInternalError(err)).To(BeTrue(), "want 500 InternalError, got %v", err)
			Expect(err).To(MatchError("Internal error occurred: refused: could not ask the API server whether user alice may patch " +
				"pods/ephemeralcontainers in namespace " + namespace + ": SubjectAccessReview: connection refused"))
		})

		It("Should refuse a call that carries no admission request", func() {
			v := &PodBuggerToolValidator{Client: k8sClient}
			_, err := v.ValidateCreate(ctx, tool("peek"))
			Expect(apierrors.IsInternalError(err)).To(BeTrue(), "want 500 InternalError, got %v", err)
			Expect(err).To(MatchError(ContainSubstring("want the admission request")))
		})
	})
})
