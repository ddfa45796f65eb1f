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

package v1

import (
	"net"
	"os"
	"path/filepath"
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	networkv1 "example.com/k8s-demo/operator-demo/api/network/v1"
)

// The specs go through the API server, as kubectl does: the request is
// admitted or refused by the webhook envtest registered from
// config/webhook/manifests.yaml, served by the manager of the suite.
var _ = Describe("Vpc Webhook", func() {
	var namespace string

	newNamespace := func(labels map[string]string) string {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "vpc-webhook-", Labels: labels}}
		Expect(k8sClient.Create(ctx, ns)).To(Succeed())
		return ns.Name
	}

	vpc := func(ns, name, cidr string) *networkv1.Vpc {
		return &networkv1.Vpc{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec:       networkv1.VpcSpec{VpcName: name, CidrBlock: cidr, SubnetNum: 1},
		}
	}

	// create creates a Vpc that must be admitted, and waits until the
	// webhook's cache has it: what the webhook compares with next.
	create := func(ns, name, cidr string) *networkv1.Vpc {
		GinkgoHelper()
		v := vpc(ns, name, cidr)
		Expect(k8sClient.Create(ctx, v)).To(Succeed())
		Eventually(func() error {
			return cached.Get(ctx, client.ObjectKeyFromObject(v), &networkv1.Vpc{})
		}).Should(Succeed())
		return v
	}

	BeforeEach(func() {
		namespace = newNamespace(nil)
	})

	Context("When creating or updating Vpc under Validating Webhook", func() {
		It("Should refuse a Vpc whose range overlaps another's, naming the field and the other Vpc", func() {
			create(namespace, "vpc-a", "10.0.0.0/16")
			err := k8sClient.Create(ctx, vpc(namespace, "vpc-b", "10.0.1.0/24"))
			Expect(err).To(HaveOccurred())
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
			Expect(err.Error()).To(Equal(`admission webhook "vvpc-v1.kb.io" denied the request: ` +
				`Vpc.network.mock.com "vpc-b" is invalid: spec.cidrblock: Invalid value: "10.0.1.0/24": ` +
				`overlaps 10.0.0.0/16, the cidrblock of Vpc "vpc-a"`))
			Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "vpc-b"}, &networkv1.Vpc{}))).
				To(BeTrue(), "the refused Vpc must not be stored")
		})

		It("Should name the first overlapping Vpc by name when several overlap", func() {
			create(namespace, "vpc-c", "10.2.0.0/16")
			create(namespace, "vpc-a", "10.1.0.0/16")
			err := k8sClient.Create(ctx, vpc(namespace, "vpc-b", "10.0.0.0/8"))
			Expect(err).To(MatchError(ContainSubstring(
				`overlaps 10.1.0.0/16, the cidrblock of Vpc "vpc-a" (and that of 1 other Vpc)`)))
		})

		It("Should admit a Vpc whose range overlaps no other", func() {
			create(namespace, "vpc-a", "10.0.0.0/16")
			create(namespace, "vpc-b", "10.1.0.0/16")
			create(namespace, "vpc-c", "192.168.0.0/24")
		})

		It("Should refuse an update that moves a Vpc into another's range", func() {
			create(namespace, "vpc-a", "10.0.0.0/16")
			b := create(namespace, "vpc-b", "10.1.0.0/16")
			b.Spec.CidrBlock = "10.0.128.0/17"
			err := k8sClient.Update(ctx, b)
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
			Expect(err).To(MatchError(ContainSubstring(
				`spec.cidrblock: Invalid value: "10.0.128.0/17": overlaps 10.0.0.0/16, the cidrblock of Vpc "vpc-a"`)))
		})

		It("Should admit an update that keeps its range, or narrows it within its own", func() {
			a := create(namespace, "vpc-a", "10.0.0.0/16")
			create(namespace, "vpc-b", "10.1.0.0/16")
			a.Spec.SubnetNum = 4
			Expect(k8sClient.Update(ctx, a)).To(Succeed())
			// Compared with the others only: its own old range is no overlap.
			a.Spec.CidrBlock = "10.0.0.0/17"
			Expect(k8sClient.Update(ctx, a)).To(Succeed())
		})

		It("Should admit an overlapping range in another namespace", func() {
			create(namespace, "vpc-a", "10.0.0.0/16")
			create(newNamespace(nil), "vpc-b", "10.0.0.0/16")
		})

		It("Should admit IPv4 and IPv6 ranges together: they never overlap", func() {
			create(namespace, "vpc-a", "10.0.0.0/8")
			create(namespace, "vpc-b", "fd00::/8")
			err := k8sClient.Create(ctx, vpc(namespace, "vpc-d", "fd00:1::/32"))
			Expect(err).To(MatchError(ContainSubstring(`overlaps fd00::/8, the cidrblock of Vpc "vpc-b"`)))
		})
	})

	Context("When the webhook cannot be reached", func() {
		It("Should refuse writes with failurePolicy Fail, and let them through with Ignore", func() {
			// A second configuration, for one namespace only, pointing at a
			// port nothing listens on: the webhook's server down.
			l, err := net.Listen("tcp", "127.0.0.1:0")
			Expect(err).NotTo(HaveOccurred())
			port := l.Addr().(*net.TCPAddr).Port
			Expect(l.Close()).To(Succeed())

			down := newNamespace(map[string]string{"vpc-webhook-test": "down"})
			fail := admissionregistrationv1.Fail
			none := admissionregistrationv1.SideEffectClassNone
			vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{
				ObjectMeta: metav1.ObjectMeta{Name: "vpc-webhook-down-" + down},
				Webhooks: []admissionregistrationv1.ValidatingWebhook{{
					Name: "vvpc-down.kb.io",
					ClientConfig: admissionregistrationv1.WebhookClientConfig{
						URL:      ptr.To("https://127.0.0.1:" + strconv.Itoa(port) + "/validate-network-mock-com-v1-vpc"),
						CABundle: testEnv.WebhookInstallOptions.LocalServingCAData,
					},
					Rules: []admissionregistrationv1.RuleWithOperations{{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
						Rule: admissionregistrationv1.Rule{APIGroups: []string{"network.mock.com"},
							APIVersions: []string{"v1"}, Resources: []string{"vpcs"}},
					}},
					NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": down}},
					FailurePolicy:           &fail,
					SideEffects:             &none,
					TimeoutSeconds:          ptr.To[int32](5),
					AdmissionReviewVersions: []string{"v1"},
				}},
			}
			Expect(k8sClient.Create(ctx, vwc)).To(Succeed())
			DeferCleanup(func() { Expect(k8sClient.Delete(ctx, vwc)).To(Succeed()) })

			By("refusing with failurePolicy Fail")
			// The API server picks up a new configuration within a moment.
			Eventually(func() error {
				return k8sClient.Create(ctx, vpc(down, "vpc-a", "10.0.0.0/16"), client.DryRunAll)
			}).Should(MatchError(And(
				ContainSubstring(`failed calling webhook "vvpc-down.kb.io"`),
				ContainSubstring("connection refused"))))
			Expect(apierrors.IsInternalError(k8sClient.Create(ctx, vpc(down, "vpc-a", "10.0.0.0/16")))).To(BeTrue())

			By("admitting with failurePolicy Ignore")
			Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(vwc), vwc)).To(Succeed())
			ignore := admissionregistrationv1.Ignore
			vwc.Webhooks[0].FailurePolicy = &ignore
			Expect(k8sClient.Update(ctx, vwc)).To(Succeed())
			Eventually(func() error {
				return k8sClient.Create(ctx, vpc(down, "vpc-a", "10.0.0.0/16"))
			}).Should(Succeed())
		})
	})

	Context("The generated configuration", func() {
		It("Should set a timeout and failurePolicy Fail on every webhook", func() {
			b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "config", "webhook", "manifests.yaml"))
			Expect(err).NotTo(HaveOccurred())
			var generated admissionregistrationv1.ValidatingWebhookConfiguration
			Expect(yaml.UnmarshalStrict(b, &generated)).To(Succeed())
			// The Vpc's and the PodBuggerTool's (internal/webhook/debug).
			Expect(generated.Webhooks).To(HaveLen(2))
			for _, w := range generated.Webhooks {
				Expect(w.TimeoutSeconds).To(Equal(ptr.To[int32](5)), "webhook %s", w.Name)
				Expect(w.FailurePolicy).To(Equal(ptr.To(admissionregistrationv1.Fail)), "webhook %s", w.Name)
			}

			// And the configuration the API server holds has it too.
			var installed admissionregistrationv1.ValidatingWebhookConfiguration
			Expect(k8sClient.Get(ctx, client.ObjectKey{Name: generated.Name}, &installed)).To(Succeed())
			Expect(installed.Webhooks).To(HaveLen(2))
			for _, w := range installed.Webhooks {
				Expect(w.TimeoutSeconds).To(Equal(ptr.To[int32](5)), "webhook %s", w.Name)
			}
		})
	})
})
