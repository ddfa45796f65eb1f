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

package apps

import (
	"context"
	"fmt"
	"sort"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "example.com/k8s-demo/operator-demo/api/apps/v1alpha1"
)

var _ = Describe("PodSet Controller", func() {
	SetDefaultEventuallyTimeout(10 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)

	Context("When reconciling a resource", func() {
		const resourceName = "test-podset"

		var key types.NamespacedName

		BeforeEach(func() {
			// envtest has no namespace controller: a fresh namespace per test.
			key = types.NamespacedName{Name: resourceName, Namespace: newNamespace(ctx)}

			By("creating a PodSet of size 2")
			Expect(k8sClient.Create(ctx, &appsv1alpha1.PodSet{
				ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace},
				Spec:       appsv1alpha1.PodSetSpec{Size: 2},
			})).To(Succeed())
			expectPodCount(key, 2)
		})

		AfterEach(func() {
			ps := &appsv1alpha1.PodSet{}
			ps.Name, ps.Namespace = key.Name, key.Namespace
			Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, ps))).To(Succeed())
		})

		It("should create busybox pods owned by the PodSet and list them in status.nodes", func() {
			ps := getPodSet(key)
			for _, pod := range activePods(key) {
				Expect(pod.Name).To(HavePrefix(resourceName + "-"))
				Expect(pod.Labels).To(HaveKeyWithValue(PodSetLabel, resourceName))
				Expect(pod.Spec.Containers).To(HaveLen(1))
				Expect(pod.Spec.Containers[0].Image).To(Equal("busybox"))
				Expect(pod.Spec.Containers[0].Command).To(Equal([]string{"sleep", "3600"}))
				Expect(pod.OwnerReferences).To(ConsistOf(metav1.OwnerReference{
					APIVersion:         appsv1alpha1.GroupVersion.String(),
					Kind:               "PodSet",
					Name:               ps.Name,
					UID:                ps.UID,
					Controller:         ptr.To(true),
					BlockOwnerDeletion: ptr.To(true),
				}))
			}
			expectStatusMatchesPods(key)
			expectCondition(key, metav1.ConditionTrue, ReasonScaled, "2 of 2 pods")
		})

		It("should scale up and down", func() {
			setSize(key, 4)
			expectPodCount(key, 4)
			expectStatusMatchesPods(key)

			setSize(key, 0)
			expectPodCount(key, 0)
			expectStatusMatchesPods(key)
			expectCondition(key, metav1.ConditionTrue, ReasonScaled, "0 of 0 pods")

			By("scaling back to 1")
			setSize(key, 1)
			expectPodCount(key, 1)
			expectStatusMatchesPods(key)
		})

		It("should delete the newest pods when scaling down", func() {
			first := podNames(activePods(key))
			// Creation timestamps have a one-second resolution: make the
			// next pods clearly newer.
			time.Sleep(1100 * time.Millisecond)
			setSize(key, 4)
			expectPodCount(key, 4)
			setSize(key, 2)
			expectPodCount(key, 2)
			Expect(podNames(activePods(key))).To(Equal(first))
		})

		It("should replace a deleted pod", func() {
			old := activePods(key)[0]
			Expect(k8sClient.Delete(ctx, &old)).To(Succeed())
			Eventually(func(g Gomega) {
				names := podNames(activePods(key))
				g.Expect(names).To(HaveLen(2))
				g.Expect(names).NotTo(ContainElement(old.Name))
			}).Should(Succeed())
			expectStatusMatchesPods(key)
		})

		It("should record an event for every pod it creates", func() {
			Eventually(func(g Gomega) {
				var list eventsv1.EventList
				g.Expect(k8sClient.List(ctx, &list, client.InNamespace(key.Namespace))).To(Succeed())
				created := 0
				for _, ev := range list.Items {
					if ev.Regarding.Name == key.Name && ev.Reason == ReasonSuccessfulCreate {
						created++
					}
				}
				g.Expect(created).To(Equal(2))
			}).Should(Succeed())
		})

		It("should stop managing the pods once the PodSet is deleted", func() {
			ps := getPodSet(key)
			pods := podNames(activePods(key))
			Expect(k8sClient.Delete(ctx, &ps)).To(Succeed())
			Eventually(func() bool {
				return errors.IsNotFound(k8sClient.Get(ctx, key, &appsv1alpha1.PodSet{}))
			}).Should(BeTrue())
			// envtest runs no garbage collector: the pods stay, untouched by
			// the controller; in a cluster their owner references remove them.
			Consistently(func() []string { return podNames(activePods(key)) }, 2*time.Second).Should(Equal(pods))
		})
	})

	Context("Without an APIReader", func() {
		It("should refuse to be set up, rather than count pods from the cache", func() {
			r := &PodSetReconciler{Client: k8sClient, Scheme: k8sClient.Scheme()}
			Expect(r.SetupWithManager(nil)).To(MatchError(ContainSubstring("needs APIReader")))
		})
	})

	Context("When the PodSet does not exist", func() {
		It("should end the reconcile without an error or a requeue", func() {
			r := &PodSetReconciler{Client: k8sClient, Scheme: k8sClient.Scheme(), APIReader: k8sClient}
			result, err := r.Reconcile(ctx, reconcile.Request{
				NamespacedName: types.NamespacedName{Name: "does-not-exist", Namespace: "default"},
			})
			Expect(err).NotTo(HaveOccurred())
			Expect(result).To(Equal(reconcile.Result{}))
		})
	})
})

func newNamespace(ctx context.Context) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "podset-test-"}}
	Expect(k8sClient.Create(ctx, ns)).To(Succeed())
	return ns.Name
}

func getPodSet(key types.NamespacedName) appsv1alpha1.PodSet {
	var ps appsv1alpha1.PodSet
	ExpectWithOffset(1, k8sClient.Get(ctx, key, &ps)).To(Succeed())
	return ps
}

func setSize(key types.NamespacedName, n int32) {
	By(fmt.Sprintf("setting spec.size to %d", n))
	ps := getPodSet(key)
	patch := client.MergeFrom(ps.DeepCopy())
	ps.Spec.Size = n
	ExpectWithOffset(1, k8sClient.Patch(ctx, &ps, patch)).To(Succeed())
}

// activePods lists the PodSet's pods that are not being deleted, by name.
func activePods(key types.NamespacedName) []corev1.Pod {
	var list corev1.PodList
	ExpectWithOffset(1, k8sClient.List(ctx, &list,
		client.InNamespace(key.Namespace), client.MatchingLabels{PodSetLabel: key.Name})).To(Succeed())
	var pods []corev1.Pod
	for _, pod := range list.Items {
		if pod.DeletionTimestamp.IsZero() {
			pods = append(pods, pod)
		}
	}
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	return pods
}

func podNames(pods []corev1.Pod) []string {
	names := make([]string, 0, len(pods))
	for _, pod := range pods {
		names = append(names, pod.Name)
	}
	return names
}

func expectPodCount(key types.NamespacedName, n int) {
	EventuallyWithOffset(1, func() []corev1.Pod { return activePods(key) }).Should(HaveLen(n))
}

// expectStatusMatchesPods waits for status.nodes to list the pods that exist,
// sorted, and as many as spec.size asks for.
func expectStatusMatchesPods(key types.NamespacedName) {
	EventuallyWithOffset(1, func(g Gomega) {
		names := podNames(activePods(key))
		ps := getPodSet(key)
		g.Expect(ps.Status.Nodes).To(HaveLen(len(names)))
		if len(names) > 0 {
			g.Expect(ps.Status.Nodes).To(Equal(names))
		}
		g.Expect(ps.Status.Nodes).To(HaveLen(int(ps.Spec.Size)))
	}).Should(Succeed())
}

func expectCondition(key types.NamespacedName, status metav1.ConditionStatus, reason, message string) {
	EventuallyWithOffset(1, func(g Gomega) {
		ps := getPodSet(key)
		cond := meta.FindStatusCondition(ps.Status.Conditions, ConditionReady)
		g.Expect(cond).NotTo(BeNil())
		g.Expect(cond.Status).To(Equal(status))
		g.Expect(cond.Reason).To(Equal(reason))
		g.Expect(cond.Message).To(Equal(message))
		g.Expect(cond.ObservedGeneration).To(Equal(ps.Generation))
	}).Should(Succeed())
}
