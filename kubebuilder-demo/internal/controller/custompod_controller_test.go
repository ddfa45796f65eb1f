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

package controller

import (
	"context"
	"fmt"
	"sort"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	zhhnzwv1 "example.com/k8s-demo/kubebuilder-demo/api/v1"
	zhhnzwv2 "example.com/k8s-demo/kubebuilder-demo/api/v2"
	zhhnzwv2ac "example.com/k8s-demo/kubebuilder-demo/api/v2/applyconfiguration/api/v2"
)

var _ = Describe("CustomPod Controller", func() {
	SetDefaultEventuallyTimeout(10 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)

	Context("When reconciling a resource", func() {
		const resourceName = "test-resource"

		var typeNamespacedName types.NamespacedName

		BeforeEach(func() {
			// envtest has no namespace controller, so each test gets a fresh
			// namespace instead of cleaning up an old one.
			typeNamespacedName = types.NamespacedName{Name: resourceName, Namespace: newNamespace(ctx)}

			By("creating the custom resource for the Kind CustomPod")
			resource := &zhhnzwv2.CustomPod{
				ObjectMeta: metav1.ObjectMeta{
					Name:      typeNamespacedName.Name,
					Namespace: typeNamespacedName.Namespace,
				},
				Spec: zhhnzwv2.CustomPodSpec{Replicas: ptr.To[int32](1), Template: busybox},
			}
			Expect(k8sClient.Create(ctx, resource)).To(Succeed())
			expectPodCount(typeNamespacedName, 1)
		})

		AfterEach(func() {
			By("Cleanup the specific resource instance CustomPod")
			resource := &zhhnzwv2.CustomPod{}
			resource.Name, resource.Namespace = typeNamespacedName.Name, typeNamespacedName.Namespace
			Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, resource))).To(Succeed())
		})

		It("should create a pod from the template, owned by the CustomPod", func() {
			cp := getCustomPod(typeNamespacedName)
			pod := activePods(typeNamespacedName)[0]

			Expect(pod.Name).To(Equal(resourceName + "-0"))
			Expect(pod.Labels).To(HaveKeyWithValue(CustomPodLabel, resourceName))
			Expect(pod.Spec.Containers).To(HaveLen(1))
			Expect(pod.Spec.Containers[0].Name).To(Equal("busybox"))
			Expect(pod.Spec.Containers[0].Image).To(Equal("busybox:1.36"))
			Expect(pod.Spec.Containers[0].ImagePullPolicy).To(Equal(corev1.PullIfNotPresent))
			Expect(pod.Spec.Containers[0].Command).To(Equal([]string{"sleep", "3600"}))
			Expect(metav1.IsControlledBy(&pod, &cp)).To(BeTrue())

			By("naming the controller in managedFields, for the pod and for the status it writes")
			Expect(managers(&pod)).To(ContainElement(ControllerName + " "))
			Eventually(func() []string { cp := getCustomPod(typeNamespacedName); return managers(&cp) }).
				Should(ContainElement(ControllerName + " status"))
		})

		It("should count ready pods in readyReplicas, and be Ready once all are", func() {
			By("counting new pods, none ready: envtest has no kubelet")
			setReplicas(typeNamespacedName, 2)
			expectPodCount(typeNamespacedName, 2)
			expectReadiness(typeNamespacedName, 2, 0, metav1.ConditionFalse, ReasonPodsNotReady, "0 of 2 pods ready")

			By("marking the pods Ready one by one, as the kubelet would")
			pods := activePods(typeNamespacedName)
			setPodReady(&pods[0], corev1.ConditionTrue)
			expectReadiness(typeNamespacedName, 2, 1, metav1.ConditionFalse, ReasonPodsNotReady, "1 of 2 pods ready")
			setPodReady(&pods[1], corev1.ConditionTrue)
			expectReadiness(typeNamespacedName, 2, 2, metav1.ConditionTrue, ReasonPodsReady, "2 of 2 pods ready")

			By("counting a pod that stops being ready out again")
			setPodReady(&pods[0], corev1.ConditionFalse)
			expectReadiness(typeNamespacedName, 2, 1, metav1.ConditionFalse, ReasonPodsNotReady, "1 of 2 pods ready")
		})

		It("should leave a status another client wrote until a pod changes: a status queues no Reconcile", func() {
			expectStatusMatchesPods(typeNamespacedName)
			// The pod's creation queued the CustomPod for a batch period later.
			time.Sleep(2 * podEventBatchPeriod)
			By("writing replicas: 7 as another field manager")
			cp := getCustomPod(typeNamespacedName)
			patch := client.MergeFrom(cp.DeepCopy())
			cp.Status.Replicas = 7
			Expect(k8sClient.Status().Patch(ctx, &cp, patch, client.FieldOwner("someone-else"))).To(Succeed())
			Consistently(func() int32 { return getCustomPod(typeNamespacedName).Status.Replicas }, 2*podEventBatchPeriod).
				Should(Equal(int32(7)), "For's GenerationChangedPredicate passes no status change")

			By("deleting its pod: the pod's event queues the CustomPod, whose status says its pods again")
			old := activePods(typeNamespacedName)[0]
			Expect(k8sClient.Delete(ctx, &old)).To(Succeed())
			expectReplaced(typeNamespacedName, old)
			expectStatusMatchesPods(typeNamespacedName)
		})

		It("should scale 1 -> 3 -> 1, name the pods by ordinal and list them in the status", func() {
			setReplicas(typeNamespacedName, 3)
			expectPodCount(typeNamespacedName, 3)
			expectStatusMatchesPods(typeNamespacedName)
			Expect(podNames(activePods(typeNamespacedName))).To(Equal([]string{resourceName + "-0", resourceName + "-1", resourceName + "-2"}))

			By("deleting the highest ordinals")
			setReplicas(typeNamespacedName, 1)
			expectPodCount(typeNamespacedName, 1)
			expectStatusMatchesPods(typeNamespacedName)
			Expect(podNames(activePods(typeNamespacedName))).To(Equal([]string{resourceName + "-0"}))

			By("not creating or deleting anything once the count is right")
			Consistently(func() int { return len(activePods(typeNamespacedName)) }, 2*time.Second).Should(Equal(1))
		})

		It("should scale through the scale subresource, as kubectl scale does", func() {
			cp := getCustomPod(typeNamespacedName)
			scale := &autoscalingv1.Scale{
				ObjectMeta: metav1.ObjectMeta{Name: cp.Name, Namespace: cp.Namespace},
				Spec:       autoscalingv1.ScaleSpec{Replicas: 2},
			}
			Expect(k8sClient.SubResource("scale").Update(ctx, &cp, client.WithSubResourceBody(scale))).To(Succeed())

			Expect(*getCustomPod(typeNamespacedName).Spec.Replicas).To(Equal(int32(2)))
			expectPodCount(typeNamespacedName, 2)
			Eventually(func(g Gomega) {
				got := &autoscalingv1.Scale{}
				g.Expect(k8sClient.SubResource("scale").Get(ctx, &cp, got)).To(Succeed())
				g.Expect(got.Status.Replicas).To(Equal(int32(2)))
			}).Should(Succeed())
		})

		It("should replace a deleted pod, under the same name", func() {
			old := activePods(typeNamespacedName)[0]
			// The pod is not bound to a node, so the API server removes it at once.
			Expect(k8sClient.Delete(ctx, &old)).To(Succeed())
			expectReplaced(typeNamespacedName, old)
			expectStatusMatchesPods(typeNamespacedName)
		})

		It("should delete a finished pod and replace it", func() {
			old := activePods(typeNamespacedName)[0]
			old.Status.Phase = corev1.PodFailed
			Expect(k8sClient.Status().Update(ctx, &old)).To(Succeed())
			expectReplaced(typeNamespacedName, old)
			expectStatusMatchesPods(typeNamespacedName)
		})

		It("should report a pod name taken by a pod it does not control, and recover once it is free", func() {
			By("creating a pod called " + resourceName + "-1 that no CustomPod controls")
			squatter := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: resourceName + "-1", Namespace: typeNamespacedName.Namespace},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox:1.36"}}},
			}
			Expect(k8sClient.Create(ctx, squatter)).To(Succeed())

			setReplicas(typeNamespacedName, 2)
			expectCondition(typeNamespacedName, metav1.ConditionFalse, ReasonScaleFailed)
			cond := meta.FindStatusCondition(getCustomPod(typeNamespacedName).Status.Conditions, ConditionReady)
			Expect(cond.Message).To(Equal("creating pod " + resourceName + "-1: the name is taken by a pod this CustomPod does not control"))

			By("deleting that pod: the retried create succeeds")
			Expect(k8sClient.Delete(ctx, squatter)).To(Succeed())
			expectPodCount(typeNamespacedName, 2)
			expectStatusMatchesPods(typeNamespacedName)
		})

		It("should not count a pod that is being deleted, and replace it once it is gone", func() {
			old := activePods(typeNamespacedName)[0]
			By("holding the pod in Terminating with a finalizer")
			const hold = "test.zhhnzw.mock.com/hold"
			patch := client.MergeFrom(old.DeepCopy())
			old.Finalizers = append(old.Finalizers, hold)
			Expect(k8sClient.Patch(ctx, &old, patch)).To(Succeed())
			Expect(k8sClient.Delete(ctx, &old)).To(Succeed())
			DeferCleanup(func() {
				var pod corev1.Pod
				if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(&old), &pod); err == nil {
					patch := client.MergeFrom(pod.DeepCopy())
					pod.Finalizers = nil
					Expect(k8sClient.Patch(ctx, &pod, patch)).To(Succeed())
				}
			})

			expectReadiness(typeNamespacedName, 0, 0, metav1.ConditionFalse, ReasonPodsNotReady, "0 of 1 pods ready")

			By("waiting for the name: no second pod while the first is terminating")
			Consistently(func() int { return len(podNames(allPods(typeNamespacedName))) }, time.Second).Should(Equal(1))

			By("letting the pod go: its replacement takes the name")
			var pod corev1.Pod
			Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(&old), &pod)).To(Succeed())
			patch = client.MergeFrom(pod.DeepCopy())
			pod.Finalizers = nil
			Expect(k8sClient.Patch(ctx, &pod, patch)).To(Succeed())
			expectReplaced(typeNamespacedName, old)
			expectStatusMatchesPods(typeNamespacedName)
		})

		It("should report Ready=False while pods cannot be created, then recover", func() {
			for _, pod := range activePods(typeNamespacedName) {
				setPodReady(&pod, corev1.ConditionTrue)
			}
			expectCondition(typeNamespacedName, metav1.ConditionTrue, ReasonPodsReady)

			By("refusing new pods in the namespace with a ValidatingAdmissionPolicy")
			binding := blockPods(typeNamespacedName.Namespace)

			setReplicas(typeNamespacedName, 2)
			expectCondition(typeNamespacedName, metav1.ConditionFalse, ReasonScaleFailed)
			cond := meta.FindStatusCondition(getCustomPod(typeNamespacedName).Status.Conditions, ConditionReady)
			Expect(cond.Message).To(And(ContainSubstring("creating pod"), ContainSubstring("pods are blocked by the test")))
			Expect(activePods(typeNamespacedName)).To(HaveLen(1))

			By("removing the policy binding: the failed create is retried")
			Expect(k8sClient.Delete(ctx, binding)).To(Succeed())
			expectPodCount(typeNamespacedName, 2)
			expectCondition(typeNamespacedName, metav1.ConditionFalse, ReasonPodsNotReady)
			expectStatusMatchesPods(typeNamespacedName)
			for _, pod := range activePods(typeNamespacedName) {
				setPodReady(&pod, corev1.ConditionTrue)
			}
			expectCondition(typeNamespacedName, metav1.ConditionTrue, ReasonPodsReady)
		})

		It("should leave the pods to the garbage collector when the CustomPod is deleted", func() {
			setReplicas(typeNamespacedName, 2)
			expectPodCount(typeNamespacedName, 2)
			cp := getCustomPod(typeNamespacedName)

			By("checking that every pod names the CustomPod as its controlling owner")
			pods := activePods(typeNamespacedName)
			for _, pod := range pods {
				Expect(pod.OwnerReferences).To(ConsistOf(metav1.OwnerReference{
					APIVersion:         zhhnzwv2.GroupVersion.String(),
					Kind:               "CustomPod",
					Name:               cp.Name,
					UID:                cp.UID,
					Controller:         ptr.To(true),
					BlockOwnerDeletion: ptr.To(true),
				}))
			}

			By("deleting the CustomPod")
			Expect(k8sClient.Delete(ctx, &cp)).To(Succeed())
			Eventually(func() bool {
				return errors.IsNotFound(k8sClient.Get(ctx, typeNamespacedName, &zhhnzwv2.CustomPod{}))
			}).Should(BeTrue())

			// envtest runs no garbage collector, so the pods stay; in a cluster
			// the owner references above make it delete them. The controller
			// itself must not touch them any more.
			Consistently(func() []string { return podNames(activePods(typeNamespacedName)) }, 2*time.Second).
				Should(Equal(podNames(pods)))
		})
	})

	Context("When the CustomPod has a template of its own", func() {
		It("should run the template's image and command, and a changed template in new pods only", func() {
			key := types.NamespacedName{Name: "clock", Namespace: newNamespace(ctx)}
			clock := zhhnzwv2.CustomPodTemplate{Image: "busybox:1.37", Command: []string{"sh", "-c", "while true; do date; sleep 10; done"}}
			Expect(k8sClient.Create(ctx, &zhhnzwv2.CustomPod{
				ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace},
				Spec:       zhhnzwv2.CustomPodSpec{Replicas: ptr.To[int32](1), Template: clock},
			})).To(Succeed())
			expectPodCount(key, 1)
			first := activePods(key)[0]
			Expect(first.Spec.Containers[0].Image).To(Equal(clock.Image))
			Expect(first.Spec.Containers[0].Command).To(Equal(clock.Command))

			By("changing the image: the running pod stays, as a ReplicaSet's would; the next one runs the new image")
			cp := getCustomPod(key)
			patch := client.MergeFrom(cp.DeepCopy())
			cp.Spec.Template = zhhnzwv2.CustomPodTemplate{Image: "nginx:1.27"}
			cp.Spec.Replicas = ptr.To[int32](2)
			Expect(k8sClient.Patch(ctx, &cp, patch)).To(Succeed())
			expectPodCount(key, 2)
			for _, pod := range activePods(key) {
				if pod.Name == first.Name {
					Expect(pod.Spec.Containers[0].Image).To(Equal(clock.Image))
					continue
				}
				Expect(pod.Spec.Containers[0].Image).To(Equal("nginx:1.27"))
				Expect(pod.Spec.Containers[0].Command).To(BeEmpty(), "no command: the image's own entrypoint")
			}
		})
	})

	Context("When a v1 client writes the CustomPod", func() {
		It("should run v1's busybox, read through the conversion webhook", func() {
			key := types.NamespacedName{Name: "from-v1", Namespace: newNamespace(ctx)}
			Expect(k8sClient.Create(ctx, &zhhnzwv1.CustomPod{
				ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace},
				Spec:       zhhnzwv1.CustomPodSpec{Replicas: ptr.To[int32](2)},
			})).To(Succeed())
			expectPodCount(key, 2)
			for _, pod := range activePods(key) {
				Expect(pod.Spec.Containers[0].Image).To(Equal(zhhnzwv1.PodImage))
				Expect(pod.Spec.Containers[0].Command).To(Equal([]string{"sleep", "3600"}))
			}

			By("the v1 client reads the status the controller wrote through v2")
			Eventually(func(g Gomega) {
				var cp zhhnzwv1.CustomPod
				g.Expect(k8sClient.Get(ctx, key, &cp)).To(Succeed())
				g.Expect(cp.Status.Replicas).To(Equal(int32(2)))
				g.Expect(cp.Status.PodNames).To(Equal(podNames(activePods(key))))
				g.Expect(meta.FindStatusCondition(cp.Status.Conditions, ConditionReady)).NotTo(BeNil())
			}).Should(Succeed())
		})
	})

	Context("In a namespace that enforces the restricted Pod Security Standard", func() {
		It("should have its pods admitted", func() {
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
				GenerateName: "custompod-restricted-",
				Labels:       map[string]string{"pod-security.kubernetes.io/enforce": "restricted"},
			}}
			Expect(k8sClient.Create(ctx, ns)).To(Succeed())
			key := types.NamespacedName{Name: "restricted", Namespace: ns.Name}
			cp := &zhhnzwv2.CustomPod{
				ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace},
				Spec:       zhhnzwv2.CustomPodSpec{Replicas: ptr.To[int32](2), Template: busybox},
			}
			Expect(k8sClient.Create(ctx, cp)).To(Succeed())
			expectPodCount(key, 2)
			expectCondition(key, metav1.ConditionFalse, ReasonPodsNotReady)
		})
	})

	Context("When another field manager applies to the status too", func() {
		// auditor is a second writer of the status, as a policy engine or a
		// person with kubectl apply --server-side --subresource=status would be.
		const auditor = "test-auditor"

		It("should share the status without conflict, and conflict over a field the controller owns until forced", func() {
			key := types.NamespacedName{Name: "shared", Namespace: newNamespace(ctx)}
			Expect(k8sClient.Create(ctx, &zhhnzwv2.CustomPod{
				ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace},
				Spec:       zhhnzwv2.CustomPodSpec{Replicas: ptr.To[int32](1), Template: busybox},
			})).To(Succeed())
			expectPodCount(key, 1)
			expectReadiness(key, 1, 0, metav1.ConditionFalse, ReasonPodsNotReady, "0 of 1 pods ready")

			By("the auditor applying a condition of its own type: a field no one else owns")
			// An apply states all that its manager wants set: fields it
			// owned and leaves out are removed. So each of the auditor's
			// applies below carries its condition.
			checked := metav1.Now()
			audited := func() *zhhnzwv2ac.CustomPodApplyConfiguration {
				return zhhnzwv2ac.CustomPod(key.Name, key.Namespace).
					WithStatus(zhhnzwv2ac.CustomPodStatus().WithConditions(metav1ac.Condition().
						WithType("Audited").WithStatus(metav1.ConditionTrue).WithReason("Checked").
						WithMessage("checked by the test").WithLastTransitionTime(checked)))
			}
			Expect(k8sClient.Status().Apply(ctx, audited(), client.FieldOwner(auditor))).To(Succeed())

			By("the controller's next apply changing its own fields and leaving the auditor's condition")
			setPodReady(&activePods(key)[0], corev1.ConditionTrue)
			expectReadiness(key, 1, 1, metav1.ConditionTrue, ReasonPodsReady, "1 of 1 pods ready")
			cp := getCustomPod(key)
			Expect(meta.FindStatusCondition(cp.Status.Conditions, "Audited")).NotTo(BeNil())
			Expect(statusFields(&cp, auditor)).To(ContainSubstring(`k:{\"type\":\"Audited\"}`))
			Expect(statusFields(&cp, auditor)).NotTo(ContainSubstring("f:readyReplicas"))
			Expect(statusFields(&cp, ControllerName)).To(And(
				ContainSubstring("f:readyReplicas"), ContainSubstring(`k:{\"type\":\"Ready\"}`),
				Not(ContainSubstring(`k:{\"type\":\"Audited\"}`))))

			By("the auditor applying readyReplicas, which the controller owns, without forcing: a conflict")
			overcount := audited()
			overcount.Status.WithReadyReplicas(7)
			err := k8sClient.Status().Apply(ctx, overcount, client.FieldOwner(auditor))
			Expect(errors.IsConflict(err)).To(BeTrue(), "want a 409 Conflict, got %v", err)
			Expect(err).To(MatchError(`Apply failed with 1 conflict: conflict with "` + ControllerName +
				`" with subresource "status": .status.readyReplicas`))
			AddReportEntry("conflict", err.Error())
			Expect(getCustomPod(key).Status.ReadyReplicas).To(Equal(int32(1)))

			By("the auditor forcing: it takes readyReplicas over, and its value is written")
			Expect(k8sClient.Status().Apply(ctx, overcount, client.FieldOwner(auditor), client.ForceOwnership)).To(Succeed())
			// Apply decodes the API server's answer into the apply configuration.
			Expect(*overcount.Status.ReadyReplicas).To(Equal(int32(7)))

			By("its pod changing: the controller, which forces too, counting the pods again and taking readyReplicas back")
			// A status change queues no Reconcile (For's
			// GenerationChangedPredicate); a change to a pod does.
			pod := activePods(key)[0]
			podPatch := client.MergeFrom(pod.DeepCopy())
			pod.Labels["touched"] = "true"
			Expect(k8sClient.Patch(ctx, &pod, podPatch)).To(Succeed())
			Eventually(func(g Gomega) {
				cp := getCustomPod(key)
				g.Expect(cp.Status.ReadyReplicas).To(Equal(int32(1)))
				g.Expect(statusFields(&cp, ControllerName)).To(ContainSubstring("f:readyReplicas"))
				g.Expect(statusFields(&cp, auditor)).NotTo(ContainSubstring("f:readyReplicas"))
				g.Expect(meta.FindStatusCondition(cp.Status.Conditions, "Audited")).NotTo(BeNil())
			}).Should(Succeed())
		})
	})

	Context("When a reconcile creates and deletes pods", func() {
		It("should record one event naming the pods created, and one naming those deleted", func() {
			recorder := events.NewFakeRecorder(10)
			r := &CustomPodReconciler{Client: k8sClient, Scheme: k8sClient.Scheme(), APIReader: k8sClient, Recorder: recorder}
			// Not stored, so that the manager's own controller leaves its
			// pods alone: for it, their owner is gone.
			cp := &zhhnzwv2.CustomPod{ObjectMeta: metav1.ObjectMeta{Name: "ev", Namespace: newNamespace(ctx), UID: "ev-uid"},
				Spec: zhhnzwv2.CustomPodSpec{Template: busybox}}

			created, err := r.createPods(ctx, cp, nil, []string{"ev-0", "ev-1", "ev-2"})
			Expect(err).NotTo(HaveOccurred())
			Expect(podNames(created)).To(Equal([]string{"ev-0", "ev-1", "ev-2"}))
			Expect(r.deletePods(ctx, cp, []corev1.Pod{created[2], created[1]})).To(Succeed())

			close(recorder.Events)
			var got []string
			for e := range recorder.Events {
				got = append(got, e)
			}
			Expect(got).To(Equal([]string{
				"Normal SuccessfulCreate Created 3 pods: ev-0, ev-1, ev-2",
				"Normal SuccessfulDelete Deleted 2 pods: ev-2, ev-1",
			}))
		})
	})

	Context("When a pod to delete is already gone", func() {
		It("should neither log nor record a deletion it did not make", func() {
			recorder := events.NewFakeRecorder(10)
			r := &CustomPodReconciler{Client: k8sClient, Scheme: k8sClient.Scheme(), APIReader: k8sClient, Recorder: recorder}
			cp := &zhhnzwv2.CustomPod{ObjectMeta: metav1.ObjectMeta{Name: "gone", Namespace: newNamespace(ctx)},
				Spec: zhhnzwv2.CustomPodSpec{Template: busybox}}
			Expect(k8sClient.Create(ctx, cp)).To(Succeed())
			gone := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "gone-1", Namespace: cp.Namespace, UID: "gone-uid"}}

			Expect(r.deletePods(ctx, cp, []corev1.Pod{gone})).To(Succeed())
			Expect(recorder.Events).To(BeEmpty())
		})
	})

	Context("When the cache is behind the controller's own creates", func() {
		It("should count the pods the API server already holds, and create none twice", func() {
			key := types.NamespacedName{Name: "stale", Namespace: newNamespace(ctx)}
			Expect(k8sClient.Create(ctx, &zhhnzwv2.CustomPod{
				ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace},
				Spec:       zhhnzwv2.CustomPodSpec{Replicas: ptr.To[int32](2), Template: busybox},
			})).To(Succeed())
			expectPodCount(key, 2)
			before := activePods(key)

			By("reconciling with a cache that holds none of the pods yet")
			recorder := events.NewFakeRecorder(10)
			r := &CustomPodReconciler{Client: podlessCache{k8sClient}, Scheme: k8sClient.Scheme(), APIReader: k8sClient, Recorder: recorder}
			_, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: key})
			Expect(err).NotTo(HaveOccurred())

			Expect(recorder.Events).To(BeEmpty())
			Expect(activePods(key)).To(Equal(before))
			cp := getCustomPod(key)
			Expect(cp.Status.Replicas).To(Equal(int32(2)))
			Expect(cp.Status.PodNames).To(Equal(podNames(before)))
		})
	})

	Context("When its pods are in the cache", func() {
		It("should find them by their owner in the index, and create none again", func() {
			key := types.NamespacedName{Name: "indexed", Namespace: newNamespace(ctx)}
			Expect(k8sClient.Create(ctx, &zhhnzwv2.CustomPod{
				ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace},
				Spec:       zhhnzwv2.CustomPodSpec{Replicas: ptr.To[int32](2), Template: busybox},
			})).To(Succeed())
			expectPodCount(key, 2)
			Eventually(func(g Gomega) {
				var list corev1.PodList
				g.Expect(mgrClient.List(ctx, &list, client.InNamespace(key.Namespace),
					client.MatchingFields{podOwnerKey: key.Name})).To(Succeed())
				g.Expect(podNames(list.Items)).To(Equal([]string{"indexed-0", "indexed-1"}))
			}).Should(Succeed())

			By("reconciling through the manager's cache")
			creates := &createCounter{Client: mgrClient}
			r := &CustomPodReconciler{Client: creates, Scheme: k8sClient.Scheme(), APIReader: k8sClient}
			_, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: key})
			Expect(err).NotTo(HaveOccurred())
			Expect(creates.n).To(BeZero(), "pods created again: the index did not find them")
		})
	})

	Context("Without an APIReader", func() {
		It("should refuse to be set up, rather than count pods from the cache", func() {
			r := &CustomPodReconciler{Client: k8sClient, Scheme: k8sClient.Scheme()}
			Expect(r.SetupWithManager(nil)).To(MatchError(ContainSubstring("needs APIReader")))
		})
	})

	Context("When the CustomPod does not exist", func() {
		It("should end the reconcile without an error or a requeue", func() {
			controllerReconciler := &CustomPodReconciler{
				Client:    k8sClient,
				Scheme:    k8sClient.Scheme(),
				APIReader: k8sClient,
			}

			result, err := controllerReconciler.Reconcile(ctx, reconcile.Request{
				NamespacedName: types.NamespacedName{Name: "does-not-exist", Namespace: "default"},
			})
			Expect(err).NotTo(HaveOccurred())
			Expect(result).To(Equal(reconcile.Result{}))
		})
	})
})

// busybox is the template of the v2 CustomPods of these tests: what a v1
// CustomPod runs.
var busybox = zhhnzwv2.CustomPodTemplate{Image: "busybox:1.36", Command: []string{"sleep", "3600"}}

// newNamespace creates a namespace with a generated name and returns the name.
func newNamespace(ctx context.Context) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "custompod-test-"}}
	Expect(k8sClient.Create(ctx, ns)).To(Succeed())
	return ns.Name
}

func getCustomPod(key types.NamespacedName) zhhnzwv2.CustomPod {
	var cp zhhnzwv2.CustomPod
	ExpectWithOffset(1, k8sClient.Get(ctx, key, &cp)).To(Succeed())
	return cp
}

func setReplicas(key types.NamespacedName, n int32) {
	By(fmt.Sprintf("setting spec.replicas to %d", n))
	cp := getCustomPod(key)
	patch := client.MergeFrom(cp.DeepCopy())
	cp.Spec.Replicas = ptr.To(n)
	ExpectWithOffset(1, k8sClient.Patch(ctx, &cp, patch)).To(Succeed())
}

// activePods lists the pods of the CustomPod key that are not being deleted,
// sorted by name.
func activePods(key types.NamespacedName) []corev1.Pod {
	var pods []corev1.Pod
	for _, pod := range allPods(key) {
		if pod.DeletionTimestamp.IsZero() {
			pods = append(pods, pod)
		}
	}
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	return pods
}

// podlessCache is a client whose pod lists come back empty, as from a cache
// that has not yet seen the pods.
// createCounter counts the creates that go through it.
type createCounter struct {
	client.Client
	n int
}

func (c *createCounter) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	c.n++
	return c.Client.Create(ctx, obj, opts...)
}

type podlessCache struct{ client.Client }

func (c podlessCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if _, ok := list.(*corev1.PodList); ok {
		return nil
	}
	return c.Client.List(ctx, list, opts...)
}

// allPods lists the pods of the CustomPod key, terminating ones too.
func allPods(key types.NamespacedName) []corev1.Pod {
	var list corev1.PodList
	ExpectWithOffset(1, k8sClient.List(ctx, &list,
		client.InNamespace(key.Namespace),
		client.MatchingLabels{CustomPodLabel: key.Name},
	)).To(Succeed())
	return list.Items
}

// expectReplaced waits for a new pod under old's name: same name, new UID.
func expectReplaced(key types.NamespacedName, old corev1.Pod) {
	EventuallyWithOffset(1, func(g Gomega) {
		var pod corev1.Pod
		g.Expect(k8sClient.Get(ctx, types.NamespacedName{Name: old.Name, Namespace: key.Namespace}, &pod)).To(Succeed())
		g.Expect(pod.UID).NotTo(Equal(old.UID))
		g.Expect(pod.DeletionTimestamp).To(BeNil())
		g.Expect(pod.Status.Phase).NotTo(Equal(corev1.PodFailed))
	}).Should(Succeed())
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

// statusFields returns the fields manager owns in obj's status by apply: the
// fieldsV1 of its Apply entry for the status subresource in managedFields, or
// "" if it has none.
func statusFields(obj client.Object, manager string) string {
	for _, m := range obj.GetManagedFields() {
		if m.Manager == manager && m.Operation == metav1.ManagedFieldsOperationApply &&
			m.Subresource == "status" && m.FieldsV1 != nil {
			return m.FieldsV1.GetRawString()
		}
	}
	return ""
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

// expectStatusMatchesPods waits for status.replicas, status.readyReplicas and
// status.podNames to describe the pods that exist.
func expectStatusMatchesPods(key types.NamespacedName) {
	EventuallyWithOffset(1, func(g Gomega) {
		pods := activePods(key)
		ready := 0
		for i := range pods {
			if isPodReady(&pods[i]) {
				ready++
			}
		}
		cp := getCustomPod(key)
		g.Expect(cp.Status.Replicas).To(Equal(int32(len(pods))))
		g.Expect(cp.Status.ReadyReplicas).To(Equal(int32(ready)))
		g.Expect(cp.Status.PodNames).To(Equal(podNames(pods)))
		g.Expect(cp.Status.Replicas).To(Equal(*cp.Spec.Replicas))
	}).Should(Succeed())
}

// expectReadiness waits for the status to count replicas pods, ready of them
// ready, with the Ready condition's status, reason and message.
func expectReadiness(key types.NamespacedName, replicas, ready int32, status metav1.ConditionStatus, reason, message string) {
	EventuallyWithOffset(1, func(g Gomega) {
		cp := getCustomPod(key)
		g.Expect(cp.Status.Replicas).To(Equal(replicas))
		g.Expect(cp.Status.ReadyReplicas).To(Equal(ready))
		cond := meta.FindStatusCondition(cp.Status.Conditions, ConditionReady)
		g.Expect(cond).NotTo(BeNil())
		g.Expect([]string{string(cond.Status), cond.Reason, cond.Message}).To(Equal([]string{string(status), reason, message}))
	}).Should(Succeed())
}

func expectCondition(key types.NamespacedName, status metav1.ConditionStatus, reason string) {
	EventuallyWithOffset(1, func(g Gomega) {
		cp := getCustomPod(key)
		cond := meta.FindStatusCondition(cp.Status.Conditions, ConditionReady)
		g.Expect(cond).NotTo(BeNil())
		g.Expect(cond.Status).To(Equal(status))
		g.Expect(cond.Reason).To(Equal(reason))
		g.Expect(cond.ObservedGeneration).To(Equal(cp.Generation))
	}).Should(Succeed())
}

// blockPods makes the API server refuse every new pod in namespace, with a
// ValidatingAdmissionPolicy (no webhook server needed), and returns the policy
// binding to delete to lift the block. It returns once the block is in force.
func blockPods(namespace string) *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "deny-pods-"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
						Rule: admissionregistrationv1.Rule{
							APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"},
						},
					},
				}},
			},
			Validations: []admissionregistrationv1.Validation{{Expression: "false", Message: "pods are blocked by the test"}},
		},
	}
	ExpectWithOffset(1, k8sClient.Create(ctx, policy)).To(Succeed())
	DeferCleanup(func() {
		Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, policy))).To(Succeed())
	})
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "deny-pods-"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        policy.Name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources: &admissionregistrationv1.MatchResources{
				NamespaceSelector: &metav1.LabelSelector{
					MatchLabels: map[string]string{corev1.LabelMetadataName: namespace},
				},
			},
		},
	}
	ExpectWithOffset(1, k8sClient.Create(ctx, binding)).To(Succeed())

	// The API server loads policies asynchronously: probe with a dry run.
	probe := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "probe-", Namespace: namespace},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "probe", Image: "busybox"}}},
	}
	EventuallyWithOffset(1, func() error {
		return k8sClient.Create(ctx, probe.DeepCopy(), client.DryRunAll)
	}).Should(MatchError(ContainSubstring("pods are blocked by the test")))
	return binding
}
