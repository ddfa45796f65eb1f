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

package v2

import (
	"path/filepath"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	zhhnzwv1 "example.com/k8s-demo/operator-demo/api/zhhnzw/v1"
	zhhnzwv2 "example.com/k8s-demo/operator-demo/api/zhhnzw/v2"
)

const crdName = "custompods.zhhnzw.mock.com"

// readCRD reads the CRD controller-gen writes (make manifests): v1 and v2,
// v2 stored. Its conversion is what config/crd/patches adds in a cluster;
// here installCRD sets it.
func readCRD() *apiextensionsv1.CustomResourceDefinition {
	o := envtest.CRDInstallOptions{Paths: []string{filepath.Join("..", "..", "..", "..", "config", "crd", "bases")}, ErrorIfPathMissing: true}
	Expect(envtest.ReadCRDFiles(&o)).To(Succeed())
	i := slices.IndexFunc(o.CRDs, func(c *apiextensionsv1.CustomResourceDefinition) bool { return c.Name == crdName })
	Expect(i).NotTo(Equal(-1), "no CRD %s in config/crd/bases", crdName)
	return o.CRDs[i]
}

// installCRD creates or updates the CRD and waits until the API server
// serves its versions. With webhook, envtest points a CRD whose kind the
// scheme knows as convertible at the suite's webhook server, as the
// scaffold's suite does for the CRDs it installs.
func installCRD(crd *apiextensionsv1.CustomResourceDefinition, webhook bool) {
	o := envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{crd}, Scheme: scheme.Scheme}
	if webhook {
		o.WebhookOptions = testEnv.WebhookInstallOptions
	}
	_, err := envtest.InstallCRDs(cfg, o)
	Expect(err).NotTo(HaveOccurred())
}

// oldCRD is the CRD before v2: this release's, less v2 and the conversion.
func oldCRD() *apiextensionsv1.CustomResourceDefinition {
	crd := readCRD()
	crd.Spec.Conversion = nil // strategy None
	crd.Spec.Versions = slices.DeleteFunc(crd.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool { return v.Name != "v1" })
	crd.Spec.Versions[0].Storage = true
	return crd
}

func storedVersions() []string {
	var crd apiextensionsv1.CustomResourceDefinition
	Expect(k8sClient.Get(ctx, client.ObjectKey{Name: crdName}, &crd)).To(Succeed())
	return crd.Status.StoredVersions
}

// newNamespace creates a namespace for one spec: envtest has no namespace
// controller to empty and delete an old one.
func newNamespace() string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "conversion-"}}
	Expect(k8sClient.Create(ctx, ns)).To(Succeed())
	return ns.Name
}

var nginx = zhhnzwv2.CustomPodTemplate{Image: "nginx:1.27", Command: []string{"nginx", "-g", "daemon off;"}}

const nginxAnnotation = `{"image":"nginx:1.27","command":["nginx","-g","daemon off;"]}`

// Ordered: the upgrade starts from a cluster without v2, so it runs first;
// the conversion specs after it install this release's CRD again (a no-op
// then), so that each Context also runs alone (ginkgo --focus). A failed
// spec does not skip the ones after it (ContinueOnFailure): each says what
// it checks.
var _ = Describe("CustomPod Webhook", Ordered, ContinueOnFailure, func() {
	SetDefaultEventuallyTimeout(20 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)

	Context("When upgrading from the CRD without v2", func() {
		var namespace string

		It("should read the CustomPods stored as v1 as v2, and migrate them to v2", func() {
			By("installing the CRD as it was: v1 only, stored as v1")
			installCRD(oldCRD(), false)
			Eventually(storedVersions).Should(Equal([]string{"v1"}))
			namespace = newNamespace()
			for _, name := range []string{"old-a", "old-b"} {
				Expect(k8sClient.Create(ctx, &zhhnzwv1.CustomPod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
					Spec: zhhnzwv1.CustomPodSpec{Replicas: ptr.To[int32](2)}})).To(Succeed())
			}

			By("installing this release's CRD: v1 and v2, stored as v2, converted by the webhook")
			installCRD(readCRD(), true)
			Eventually(storedVersions).Should(Equal([]string{"v1", "v2"}))

			By("reading a CustomPod stored as v1 as v2: the busybox it always ran")
			var oldA zhhnzwv2.CustomPod
			Eventually(func() error {
				return k8sClient.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "old-a"}, &oldA)
			}).Should(Succeed())
			Expect(oldA.Spec.Replicas).To(Equal(ptr.To[int32](2)))
			Expect(oldA.Spec.Template).To(Equal(zhhnzwv1.DefaultTemplate()))
			Expect(oldA.Annotations).To(BeEmpty())

			By("v1 cannot leave the CRD while objects may be stored as v1")
			dropV1 := func() error {
				var crd apiextensionsv1.CustomResourceDefinition
				Expect(k8sClient.Get(ctx, client.ObjectKey{Name: crdName}, &crd)).To(Succeed())
				crd.Spec.Versions = slices.DeleteFunc(crd.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool { return v.Name == "v1" })
				// A dry run: v1 stays served for the other specs.
				return k8sClient.Update(ctx, &crd, client.DryRunAll)
			}
			Expect(dropV1()).To(MatchError(ContainSubstring(`status.storedVersions[0]: Invalid value: "v1": missing from spec.versions`)))

			By("rewriting every CustomPod in the storage version, as kube-storage-version-migrator does")
			// An update that changes nothing: the API server still writes an
			// object stored as v1, whose bytes in etcd differ from the v2
			// ones, and it gets a new resourceVersion.
			var list zhhnzwv2.CustomPodList
			Expect(k8sClient.List(ctx, &list, client.InNamespace(namespace))).To(Succeed())
			Expect(list.Items).To(HaveLen(2))
			for i := range list.Items {
				cp := &list.Items[i]
				before := cp.ResourceVersion
				Expect(k8sClient.Update(ctx, cp)).To(Succeed())
				Expect(cp.ResourceVersion).NotTo(Equal(before), "%s was not rewritten", cp.Name)
			}

			By("saying so in the CRD's status: nothing is stored as v1 any more")
			var crd apiextensionsv1.CustomResourceDefinition
			Expect(k8sClient.Get(ctx, client.ObjectKey{Name: crdName}, &crd)).To(Succeed())
			crd.Status.StoredVersions = []string{"v2"}
			Expect(k8sClient.Status().Update(ctx, &crd)).To(Succeed())
			Expect(storedVersions()).To(Equal([]string{"v2"}))
			Expect(dropV1()).To(Succeed())

			By("still serving v1 until then, converted")
			var oldB zhhnzwv1.CustomPod
			Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "old-b"}, &oldB)).To(Succeed())
			Expect(oldB.Spec.Replicas).To(Equal(ptr.To[int32](2)))
			Expect(oldB.Annotations).To(BeEmpty())
		})
	})

	Context("When creating CustomPod under Conversion Webhook", func() {
		var namespace string

		BeforeAll(func() {
			installCRD(readCRD(), true)
		})
		BeforeEach(func() {
			namespace = newNamespace()
		})

		It("should read a v1 CustomPod as v2 with v1's template, and keep a template written through v2", func() {
			v1cp := &zhhnzwv1.CustomPod{
				ObjectMeta: metav1.ObjectMeta{Name: "from-v1", Namespace: namespace, Annotations: map[string]string{"note": "kept"}},
				Spec:       zhhnzwv1.CustomPodSpec{Replicas: ptr.To[int32](2)},
			}
			Expect(k8sClient.Create(ctx, v1cp)).To(Succeed())

			var v2cp zhhnzwv2.CustomPod
			Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(v1cp), &v2cp)).To(Succeed())
			Expect(v2cp.Spec).To(Equal(zhhnzwv2.CustomPodSpec{Replicas: ptr.To[int32](2), Template: zhhnzwv1.DefaultTemplate()}))
			Expect(v2cp.Annotations).To(Equal(map[string]string{"note": "kept"}))

			By("giving it another template through v2: v1 shows it in the annotation")
			v2cp.Spec.Template = nginx
			Expect(k8sClient.Update(ctx, &v2cp)).To(Succeed())
			Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(v1cp), v1cp)).To(Succeed())
			Expect(v1cp.Annotations).To(Equal(map[string]string{"note": "kept", zhhnzwv1.TemplateAnnotation: nginxAnnotation}))
			Expect(v1cp.Spec.Replicas).To(Equal(ptr.To[int32](2)))
		})

		It("should read a v2 CustomPod as v1 and back with nothing lost, through a v1 write", func() {
			v2cp := &zhhnzwv2.CustomPod{
				ObjectMeta: metav1.ObjectMeta{Name: "from-v2", Namespace: namespace,
					Labels: map[string]string{"app": "demo"}, Annotations: map[string]string{"note": "kept"}},
				Spec: zhhnzwv2.CustomPodSpec{Replicas: ptr.To[int32](3), Template: nginx},
			}
			Expect(k8sClient.Create(ctx, v2cp)).To(Succeed())
			v2cp.Status = zhhnzwv2.CustomPodStatus{Replicas: 3, ReadyReplicas: 1, PodNames: []string{"a", "b", "c"},
				Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "PodsNotReady",
					Message: "1 of 3 pods ready", LastTransitionTime: metav1.Now().Rfc3339Copy()}}}
			Expect(k8sClient.Status().Update(ctx, v2cp)).To(Succeed())
			want := v2cp.DeepCopy()

			By("reading it as v1: the template in the annotation, the same status")
			var v1cp zhhnzwv1.CustomPod
			Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(v2cp), &v1cp)).To(Succeed())
			Expect(v1cp.Annotations).To(Equal(map[string]string{"note": "kept", zhhnzwv1.TemplateAnnotation: nginxAnnotation}))
			Expect(v1cp.Spec.Replicas).To(Equal(ptr.To[int32](3)))
			Expect(zhhnzwv2.CustomPodStatus(v1cp.Status)).To(Equal(want.Status))

			By("writing it through v1, as a client that knows nothing of templates: v2 keeps the template")
			v1cp.Labels["touched-by"] = "v1-client"
			Expect(k8sClient.Update(ctx, &v1cp)).To(Succeed())
			var got zhhnzwv2.CustomPod
			Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(v2cp), &got)).To(Succeed())
			Expect(got.Spec).To(Equal(want.Spec))
			Expect(got.Status).To(Equal(want.Status))
			Expect(got.Annotations).To(Equal(want.Annotations))
			Expect(got.Labels).To(Equal(map[string]string{"app": "demo", "touched-by": "v1-client"}))
		})

		It("should refuse a v2 CustomPod whose template has no image, naming the field", func() {
			cp := &zhhnzwv2.CustomPod{
				ObjectMeta: metav1.ObjectMeta{Name: "no-image", Namespace: namespace},
				Spec:       zhhnzwv2.CustomPodSpec{Template: zhhnzwv2.CustomPodTemplate{Command: []string{"sleep", "60"}}},
			}
			// The Go type cannot leave image out (no omitempty): it sends "",
			// which minLength refuses; a client that leaves it out meets
			// "Required value" (internal/controller's validation tests).
			Expect(k8sClient.Create(ctx, cp)).To(MatchError(ContainSubstring(
				"spec.template.image: Invalid value: \"\": spec.template.image in body should be at least 1 chars long")))
		})

		It("should refuse a v1 CustomPod whose template annotation is no template, with the webhook's message", func() {
			cp := &zhhnzwv1.CustomPod{ObjectMeta: metav1.ObjectMeta{Name: "bad-annotation", Namespace: namespace,
				Annotations: map[string]string{zhhnzwv1.TemplateAnnotation: `{"imag":"nginx"}`}}}
			Expect(k8sClient.Create(ctx, cp)).To(MatchError(ContainSubstring(
				`annotation zhhnzw.mock.com/v2-template: not a template: unknown field "imag"`)))
		})
	})
})
