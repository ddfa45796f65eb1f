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

package network

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	networkv1 "example.com/k8s-demo/operator-demo/api/network/v1"
)

var _ = Describe("Vpc Controller", func() {
	SetDefaultEventuallyTimeout(10 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)

	var key types.NamespacedName

	BeforeEach(func() {
		// envtest has no namespace controller: a fresh namespace per test.
		key = types.NamespacedName{Name: "test-vpc", Namespace: newNamespace(ctx)}
	})

	createVpc := func(cidr string, subnets int32) {
		By(fmt.Sprintf("creating a Vpc %s into %d", cidr, subnets))
		Expect(k8sClient.Create(ctx, &networkv1.Vpc{
			ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace},
			Spec:       networkv1.VpcSpec{VpcName: "demo", CidrBlock: cidr, SubnetNum: subnets},
		})).To(Succeed())
	}

	Context("with a block that can be carved", func() {
		It("should run one gateway pod per subnet and record them in the status", func() {
			createVpc("10.0.0.0/16", 4)
			want := []string{"10.0.0.0/18", "10.0.64.0/18", "10.0.128.0/18", "10.0.192.0/18"}
			expectSubnets(key, want)
			vpc := getVpc(key)

			for _, pod := range activePods(key) {
				cidr := pod.Annotations[SubnetAnnotation]
				Expect(want).To(ContainElement(cidr))
				Expect(pod.Name).To(HavePrefix(key.Name + "-"))
				Expect(pod.Labels).To(HaveKeyWithValue(VpcLabel, key.Name))
				Expect(pod.Labels).To(HaveKeyWithValue(SubnetLabel, strings.ReplaceAll(cidr, "/", "_")))
				Expect(pod.Spec.Containers).To(HaveLen(1))
				Expect(pod.Spec.Containers[0].Image).To(Equal("busybox:1.36"))
				Expect(pod.Spec.Containers[0].ImagePullPolicy).To(Equal(corev1.PullIfNotPresent))
				Expect(pod.Spec.Containers[0].Command).To(Equal([]string{"sleep", "3600"}))
				Expect(managers(&pod)).To(ContainElement(ControllerName + " "))
				Expect(pod.Spec.Containers[0].Env).To(ConsistOf(corev1.EnvVar{Name: SubnetEnv, Value: cidr}))
				Expect(pod.OwnerReferences).To(ConsistOf(metav1.OwnerReference{
					APIVersion:         networkv1.GroupVersion.String(),
					Kind:               "Vpc",
					Name:               vpc.Name,
					UID:                vpc.UID,
					Controller:         ptr.To(true),
					BlockOwnerDeletion: ptr.To(true),
				}))
			}
			// envtest has no kubelet: no pod is ready until the test says so.
			expectCondition(key, metav1.ConditionFalse, ReasonPodsNotReady, "0 of 4 subnets have a ready gateway pod")
			expectEvent(key, corev1.EventTypeNormal, ReasonSuccessfulCreate, "for subnet 10.0.192.0/18")
			Eventually(func() []string { vpc := getVpc(key); return managers(&vpc) }).Should(ContainElement(ControllerName + " status"))

			By("marking the pods Ready, as the kubelet would")
			pods := activePods(key)
			for i := range pods[:3] {
				setPodReady(&pods[i], corev1.ConditionTrue)
			}
			expectCondition(key, metav1.ConditionFalse, ReasonPodsNotReady, "3 of 4 subnets have a ready gateway pod")
			setPodReady(&pods[3], corev1.ConditionTrue)
			expectCondition(key, metav1.ConditionTrue, ReasonProvisioned, "4 of 4 subnets have a ready gateway pod")
		})

		It("should carve IPv6 blocks too", func() {
			createVpc("fd00::/48", 2)
			expectSubnets(key, []string{"fd00::/49", "fd00:0:0:8000::/49"})
			Expect(activePods(key)[0].Labels[SubnetLabel]).To(Or(Equal("fd00--_49"), Equal("fd00-0-0-8000--_49")))
		})

		It("should replace the gateway pods whose subnet no longer exists", func() {
			createVpc("10.0.0.0/16", 2)
			expectSubnets(key, []string{"10.0.0.0/17", "10.0.128.0/17"})
			before := podNames(activePods(key))

			By("changing a field that does not move the subnets: the pods stay")
			patchSpec(key, func(s *networkv1.VpcSpec) { s.VpcName = "renamed" })
			expectCondition(key, metav1.ConditionFalse, ReasonPodsNotReady, "0 of 2 subnets have a ready gateway pod")
			Consistently(func() []string { return podNames(activePods(key)) }, time.Second).Should(Equal(before))

			By("changing subnetnum: every subnet moves")
			patchSpec(key, func(s *networkv1.VpcSpec) { s.SubnetNum = 4 })
			expectSubnets(key, []string{"10.0.0.0/18", "10.0.64.0/18", "10.0.128.0/18", "10.0.192.0/18"})
			Expect(podNames(activePods(key))).NotTo(ContainElements(before[0], before[1]))

			By("changing cidrblock")
			patchSpec(key, func(s *networkv1.VpcSpec) { s.CidrBlock, s.SubnetNum = "192.168.0.0/24", 2 })
			expectSubnets(key, []string{"192.168.0.0/25", "192.168.0.128/25"})
			expectEvent(key, corev1.EventTypeNormal, ReasonSuccessfulDelete, "of subnet 10.0.64.0/18")
		})

		It("should replace a deleted gateway pod with one for the same subnet", func() {
			createVpc("10.0.0.0/24", 2)
			expectSubnets(key, []string{"10.0.0.0/25", "10.0.0.128/25"})
			old := activePods(key)[0]
			Expect(k8sClient.Delete(ctx, &old)).To(Succeed())
			Eventually(func(g Gomega) {
				pods := activePods(key)
				g.Expect(podNames(pods)).To(HaveLen(2))
				g.Expect(podNames(pods)).NotTo(ContainElement(old.Name))
			}).Should(Succeed())
			expectSubnets(key, []string{"10.0.0.0/25", "10.0.0.128/25"})
		})

		It("should stop managing the pods once the Vpc is deleted", func() {
			createVpc("10.0.0.0/16", 2)
			expectSubnets(key, []string{"10.0.0.0/17", "10.0.128.0/17"})
			vpc := getVpc(key)
			pods := podNames(activePods(key))
			Expect(k8sClient.Delete(ctx, &vpc)).To(Succeed())
			Eventually(func() bool {
				return errors.IsNotFound(k8sClient.Get(ctx, key, &networkv1.Vpc{}))
			}).Should(BeTrue())
			// No garbage collector in envtest: the owner references above are
			// what removes the pods in a cluster.
			Consistently(func() []string { return podNames(activePods(key)) }, 2*time.Second).Should(Equal(pods))
		})
	})

	// The API server refuses a Vpc whose block cannot be carved as asked
	// (vpc_validation_test.go), but one stored before those rules existed
	// can still hold such a spec: a CRD's new rules do not touch what is
	// stored. The controller checks again. Here a fake client, which checks
	// no schema, holds the Vpc, and the test calls Reconcile itself.
	Context("with a block that cannot be carved as asked, stored before the API server refused it", func() {
		var (
			stored   = types.NamespacedName{Name: "stored", Namespace: "default"}
			fc       client.Client
			recorder *events.FakeRecorder
			r        *VpcReconciler
		)

		BeforeEach(func() {
			fc = fake.NewClientBuilder().WithScheme(k8sClient.Scheme()).WithStatusSubresource(&networkv1.Vpc{}).Build()
			recorder = events.NewFakeRecorder(20)
			r = &VpcReconciler{Client: fc, Scheme: fc.Scheme(), APIReader: fc, Recorder: recorder}
		})

		reconcileStored := func() networkv1.Vpc {
			_, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: stored})
			ExpectWithOffset(1, err).NotTo(HaveOccurred())
			var vpc networkv1.Vpc
			ExpectWithOffset(1, fc.Get(ctx, stored, &vpc)).To(Succeed())
			return vpc
		}
		setSpec := func(cidr string, subnets int32) {
			var vpc networkv1.Vpc
			if err := fc.Get(ctx, stored, &vpc); errors.IsNotFound(err) {
				vpc = networkv1.Vpc{ObjectMeta: metav1.ObjectMeta{Name: stored.Name, Namespace: stored.Namespace}}
				vpc.Spec = networkv1.VpcSpec{VpcName: "demo", CidrBlock: cidr, SubnetNum: subnets}
				ExpectWithOffset(1, fc.Create(ctx, &vpc)).To(Succeed())
				return
			}
			vpc.Spec.CidrBlock, vpc.Spec.SubnetNum = cidr, subnets
			vpc.Generation++
			ExpectWithOffset(1, fc.Update(ctx, &vpc)).To(Succeed())
		}
		storedPods := func() []corev1.Pod {
			var list corev1.PodList
			ExpectWithOffset(1, fc.List(ctx, &list, client.InNamespace(stored.Namespace),
				client.MatchingLabels{VpcLabel: stored.Name})).To(Succeed())
			sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
			return list.Items
		}
		expectReady := func(vpc networkv1.Vpc, status metav1.ConditionStatus, reason, substring string) {
			cond := meta.FindStatusCondition(vpc.Status.Conditions, ConditionReady)
			ExpectWithOffset(1, cond).NotTo(BeNil())
			ExpectWithOffset(1, cond.Status).To(Equal(status))
			ExpectWithOffset(1, cond.Reason).To(Equal(reason))
			ExpectWithOffset(1, cond.Message).To(ContainSubstring(substring))
		}

		DescribeTable("should refuse with Ready=False and a Warning event, and create no pod",
			func(cidr string, subnets int32, why string) {
				setSpec(cidr, subnets)
				vpc := reconcileStored()
				expectReady(vpc, metav1.ConditionFalse, ReasonInvalidSubnetting, why)
				Expect(recorder.Events).To(Receive(And(HavePrefix(corev1.EventTypeWarning+" "+ReasonInvalidSubnetting), ContainSubstring(why))))
				Expect(storedPods()).To(BeEmpty())
				Expect(vpc.Status.Subnets).To(BeEmpty())
				Expect(vpc.Status.SubnetNum).To(BeZero())

				By("reconciling again: no second event for the same generation")
				reconcileStored()
				Expect(recorder.Events).NotTo(Receive())
			},
			Entry("3 subnets", "10.0.0.0/16", int32(3), "into subnetnum 3 equal subnets: 3 is not a power of two"),
			Entry("a /30 into 8", "10.0.0.0/30", int32(8), "would each be a /33, longer than the 32 bits"),
			Entry("an IPv6 /127 into 4", "fd00::/127", int32(4), "would each be a /129, longer than the 128 bits"),
			Entry("IPv6 into 6", "fd00::/48", int32(6), "power of two"),
		)

		It("should leave the existing pods alone, and carry on once the spec is fixed", func() {
			setSpec("10.0.0.0/16", 2)
			vpc := reconcileStored()
			before := podNames(storedPods())
			Expect(before).To(HaveLen(2))
			Expect(vpc.Status.Subnets).To(Equal([]string{"10.0.0.0/17", "10.0.128.0/17"}))

			setSpec("10.0.0.0/16", 5)
			vpc = reconcileStored()
			expectReady(vpc, metav1.ConditionFalse, ReasonInvalidSubnetting,
				"cannot carve cidrblock 10.0.0.0/16 into subnetnum 5 equal subnets")
			Expect(podNames(storedPods())).To(Equal(before))
			Expect(vpc.Status.PodNames).To(Equal(before))

			setSpec("10.0.0.0/16", 1)
			reconcileStored()
			pods := storedPods()
			Expect(pods).To(HaveLen(1))
			Expect(pods[0].Annotations).To(HaveKeyWithValue(SubnetAnnotation, "10.0.0.0/16"))
			pods[0].Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
			Expect(fc.Status().Update(ctx, &pods[0])).To(Succeed())
			vpc = reconcileStored()
			expectReady(vpc, metav1.ConditionTrue, ReasonProvisioned, "1 of 1 subnets have a ready gateway pod")
		})
	})

	Context("In a namespace that enforces the restricted Pod Security Standard", func() {
		It("should have its gateway pods admitted", func() {
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
				GenerateName: "vpc-restricted-",
				Labels:       map[string]string{"pod-security.kubernetes.io/enforce": "restricted"},
			}}
			Expect(k8sClient.Create(ctx, ns)).To(Succeed())
			key = types.NamespacedName{Name: "restricted", Namespace: ns.Name}
			createVpc("10.0.0.0/16", 2)
			expectSubnets(key, []string{"10.0.0.0/17", "10.0.128.0/17"})
		})
	})

	Context("When a gateway pod to delete is already gone", func() {
		It("should neither log nor record a deletion it did not make", func() {
			recorder := events.NewFakeRecorder(10)
			r := &VpcReconciler{Client: k8sClient, Scheme: k8sClient.Scheme(), APIReader: k8sClient, Recorder: recorder}
			vpc := &networkv1.Vpc{ObjectMeta: metav1.ObjectMeta{Name: "gone", Namespace: key.Namespace}}
			gone := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "gone-x", Namespace: key.Namespace, UID: "gone-uid"}}

			Expect(r.deletePod(ctx, vpc, gone)).To(Succeed())
			Expect(recorder.Events).To(BeEmpty())
		})
	})

	Context("Without an APIReader", func() {
		It("should refuse to be set up, rather than count pods from the cache", func() {
			r := &VpcReconciler{Client: k8sClient, Scheme: k8sClient.Scheme()}
			Expect(r.SetupWithManager(nil)).To(MatchError(ContainSubstring("needs APIReader")))
		})
	})

	Context("When the Vpc does not exist", func() {
		It("should end the reconcile without an error or a requeue", func() {
			r := &VpcReconciler{Client: k8sClient, Scheme: k8sClient.Scheme(), APIReader: k8sClient}
			result, err := r.Reconcile(ctx, reconcile.Request{
				NamespacedName: types.NamespacedName{Name: "does-not-exist", Namespace: "default"},
			})
			Expect(err).NotTo(HaveOccurred())
			Expect(result).To(Equal(reconcile.Result{}))
		})
	})
})

func newNamespace(ctx context.Context) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "vpc-test-"}}
	Expect(k8sClient.Create(ctx, ns)).To(Succeed())
	return ns.Name
}

func getVpc(key types.NamespacedName) networkv1.Vpc {
	var vpc networkv1.Vpc
	ExpectWithOffset(1, k8sClient.Get(ctx, key, &vpc)).To(Succeed())
	return vpc
}

func patchSpec(key types.NamespacedName, edit func(*networkv1.VpcSpec)) {
	vpc := getVpc(key)
	patch := client.MergeFrom(vpc.DeepCopy())
	edit(&vpc.Spec)
	By(fmt.Sprintf("changing the spec to %+v", vpc.Spec))
	ExpectWithOffset(1, k8sClient.Patch(ctx, &vpc, patch)).To(Succeed())
}

// activePods lists the Vpc's pods that are not being deleted, by name.
func activePods(key types.NamespacedName) []corev1.Pod {
	var list corev1.PodList
	ExpectWithOffset(1, k8sClient.List(ctx, &list,
		client.InNamespace(key.Namespace), client.MatchingLabels{VpcLabel: key.Name})).To(Succeed())
	var pods []corev1.Pod
	for _, pod := range list.Items {
		if pod.DeletionTimestamp.IsZero() {
			pods = append(pods, pod)
		}
	}
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	return pods
}

// setPodReady sets the pod's Ready condition, as the kubelet does.
func setPodReady(pod *corev1.Pod, status corev1.ConditionStatus) {
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status, LastTransitionTime: metav1.Now()}}
	ExpectWithOffset(1, k8sClient.Status().Update(ctx, pod)).To(Succeed())
}

// managers lists obj's managedFields entries as "manager subresource".
func managers(obj client.Object) []string {
	out := make([]string, 0, len(obj.GetManagedFields()))
	for _, m := range obj.GetManagedFields() {
		out = append(out, m.Manager+" "+m.Subresource)
	}
	return out
}

func podNames(pods []corev1.Pod) []string {
	names := make([]string, 0, len(pods))
	for _, pod := range pods {
		names = append(names, pod.Name)
	}
	return names
}

// expectSubnets waits for exactly one gateway pod per subnet in want, and for
// the status to list those subnets (in address order) and those pods (sorted).
func expectSubnets(key types.NamespacedName, want []string) {
	EventuallyWithOffset(1, func(g Gomega) {
		pods := activePods(key)
		got := make([]string, 0, len(pods))
		for _, pod := range pods {
			got = append(got, pod.Annotations[SubnetAnnotation])
		}
		g.Expect(got).To(ConsistOf(want))
		vpc := getVpc(key)
		g.Expect(vpc.Status.Subnets).To(Equal(want))
		g.Expect(vpc.Status.SubnetNum).To(Equal(int32(len(want))))
		g.Expect(vpc.Status.PodNames).To(Equal(podNames(pods)))
	}).Should(Succeed())
}

func expectCondition(key types.NamespacedName, status metav1.ConditionStatus, reason, message string) {
	EventuallyWithOffset(1, func(g Gomega) {
		cond := readyCondition(g, key)
		g.Expect(cond.Status).To(Equal(status))
		g.Expect(cond.Reason).To(Equal(reason))
		g.Expect(cond.Message).To(Equal(message))
	}).Should(Succeed())
}

// readyCondition returns the Ready condition, once it describes the latest spec.
func readyCondition(g Gomega, key types.NamespacedName) *metav1.Condition {
	vpc := getVpc(key)
	cond := meta.FindStatusCondition(vpc.Status.Conditions, ConditionReady)
	g.Expect(cond).NotTo(BeNil())
	g.Expect(cond.ObservedGeneration).To(Equal(vpc.Generation))
	return cond
}

// expectEvent waits for an events.k8s.io event about the Vpc.
func expectEvent(key types.NamespacedName, eventType, reason, noteSubstring string) {
	EventuallyWithOffset(1, func(g Gomega) {
		var list eventsv1.EventList
		g.Expect(k8sClient.List(ctx, &list, client.InNamespace(key.Namespace))).To(Succeed())
		var notes []string
		for _, ev := range list.Items {
			if ev.Regarding.Kind == "Vpc" && ev.Regarding.Name == key.Name && ev.Type == eventType && ev.Reason == reason {
				notes = append(notes, ev.Note)
			}
		}
		g.Expect(notes).To(ContainElement(ContainSubstring(noteSubstring)))
	}).Should(Succeed())
}
