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
	"k8s.io/client-go/tools/events"
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
				Expect(pod.Spec.Containers[0].Image).To(Equal("busybox:1.36"))
				Expect(pod.Spec.Containers[0].ImagePullPolicy).To(Equal(corev1.PullIfNotPresent))
				Expect(pod.Spec.Containers[0].Command).To(Equal([]string{"sleep", "3600"}))
				Expect(managers(&pod)).To(ContainElement(ControllerName + " "))
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
			// envtest has no kubelet: no pod is ready until the test says so.
			expectCondition(key, metav1.ConditionFalse, ReasonPodsNotReady, "0 of 2 pods ready")
			Eventually(func() []string { ps := getPodSet(key); return managers(&ps) }).Should(ContainElement(ControllerName + " status"))
		})

		It("should count ready pods in readyReplicas, and be Ready once all are", func() {
			pods := activePods(key)
			setPodReady(&pods[0], corev1.ConditionTrue)
			expectStatusMatchesPods(key)
			expectCondition(key, metav1.ConditionFalse, ReasonPodsNotReady, "1 of 2 pods ready")
			setPodReady(&pods[1], corev1.ConditionTrue)
			expectStatusMatchesPods(key)
			expectCondition(key, metav1.ConditionTrue, ReasonPodsReady, "2 of 2 pods ready")
			Expect(getPodSet(key).Status.ReadyReplicas).To(Equal(int32(2)))
		})

		It("should scale up and down", func() {
			setSize(key, 4)
			expectPodCount(key, 4)
			expectStatusMatchesPods(key)

			setSize(key, 0)
			expectPodCount(key, 0)
			expectStatusMatchesPods(key)
			expectCondition(key, metav1.ConditionTrue, ReasonPodsReady, "0 of 0 pods ready")

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

		It("should record one event naming the pods it creates", func() {
			Eventually(func(g Gomega) {
				var list eventsv1.EventList
				g.Expect(k8sClient.List(ctx, &list, client.InNamespace(key.Namespace))).To(Succeed())
				var notes []string
				for _, ev := range list.Items {
					if ev.Regarding.Name == key.Name && ev.Reason == ReasonSuccessfulCreate {
						notes = append(notes, ev.Note)
					}
				}
				g.Expect(notes).To(ConsistOf(MatchRegexp(`^Created 2 pods: %[1]s-\w{5}, %[1]s-\w{5}$`, key.Name)))
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

	Context("In a namespace that enforces the restricted Pod Security Standard", func() {
		It("should have its pods admitted", func() {
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
				GenerateName: "podset-restricted-",
				Labels:       map[string]string{"pod-security.kubernetes.io/enforce": "restricted"},
			}}
			Expect(k8sClient.Create(ctx, ns)).To(Succeed())
			key := types.NamespacedName{Name: "restricted", Namespace: ns.Name}
			Expect(k8sClient.Create(ctx, &appsv1alpha1.PodSet{
				ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace},
				Spec:       appsv1alpha1.PodSetSpec{Size: 2},
			})).To(Succeed())
			expectPodCount(key, 2)
			expectCondition(key, metav1.ConditionFalse, ReasonPodsNotReady, "0 of 2 pods ready")
		})
	})

	Context("When a pod to delete is already gone", func() {
		It("should neither log nor record a deletion it did not make", func() {
			recorder := events.NewFakeRecorder(10)
			r := &PodSetReconciler{Client: k8sClient, Scheme: k8sClient.Scheme(), Recorder: recorder}
			ps := &appsv1alpha1.PodSet{ObjectMeta: metav1.ObjectMeta{Name: "gone", Namespace: newNamespace(ctx)}}
			Expect(k8sClient.Create(ctx, ps)).To(Succeed())
			gone := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "gone-x", Namespace: ps.Namespace, UID: "gone-uid"}}

			left, err := r.deletePods(ctx, ps, []corev1.Pod{gone}, 1)
			Expect(err).NotTo(HaveOccurred())
			Expect(left).To(BeEmpty())
			Expect(recorder.Events).To(BeEmpty())
		})
	})

	Context("When the PodSet does not exist", func() {
		It("should end the reconcile without an error or a requeue", func() {
			r := &PodSetReconciler{Client: k8sClient, Scheme: k8sClient.Scheme()}
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

func expectPodCount(key types.NamespacedName, n int) {
	EventuallyWithOffset(1, func() []corev1.Pod { return activePods(key) }).Should(HaveLen(n))
}

// expectStatusMatchesPods waits for status.nodes to list the pods that exist,
// sorted, and as many as spec.size asks for; status.replicas to count them,
// and status.readyReplicas the ready ones.
func expectStatusMatchesPods(key types.NamespacedName) {
	EventuallyWithOffset(1, func(g Gomega) {
		pods := activePods(key)
		names := podNames(pods)
		ready := 0
		for i := range pods {
			if isPodReady(&pods[i]) {
				ready++
			}
		}
		ps := getPodSet(key)
		g.Expect(ps.Status.Replicas).To(Equal(int32(len(pods))))
		g.Expect(ps.Status.ReadyReplicas).To(Equal(int32(ready)))
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
