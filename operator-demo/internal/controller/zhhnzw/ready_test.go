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

package zhhnzw

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	zhhnzwv1 "example.com/k8s-demo/operator-demo/api/zhhnzw/v1"
)

// kubectl wait --for=condition=Ready, and whoever else waits on a CustomPod,
// read its Ready condition. envtest runs no kubelet, so this spec plays the
// kubelet's part: it marks the pods ready itself.
var _ = Describe("CustomPod's Ready condition", func() {
	It("is False until every pod is ready, then True", func(ctx SpecContext) {
		// 1. A manager with the reconciler in it, and a CustomPod of 2
		// replicas in a namespace of its own.
		startManager(ctx, cfg)
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "ready-"}}
		Expect(k8sClient.Create(ctx, ns)).To(Succeed())
		cp := &zhhnzwv1.CustomPod{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns.Name},
			Spec:       zhhnzwv1.CustomPodSpec{Replicas: ptr.To[int32](2)},
		}
		Expect(k8sClient.Create(ctx, cp)).To(Succeed())

		// expectReady waits until the Ready condition has this status,
		// reason and message, for the CustomPod's latest generation.
		expectReady := func(status metav1.ConditionStatus, reason, message string) {
			GinkgoHelper()
			Eventually(func(g Gomega) {
				g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(cp), cp)).To(Succeed())
				ready := meta.FindStatusCondition(cp.Status.Conditions, "Ready")
				g.Expect(ready).NotTo(BeNil(), "status.conditions has no Ready")
				g.Expect(ready.Status).To(Equal(status))
				g.Expect(ready.Reason).To(Equal(reason))
				g.Expect(ready.Message).To(Equal(message))
				g.Expect(ready.ObservedGeneration).To(Equal(cp.Generation))
			}).WithTimeout(10 * time.Second).Should(Succeed())
		}

		// 2. Its pods are made, and not ready: no kubelet runs them.
		expectReady(metav1.ConditionFalse, "PodsNotReady", "0 of 2 pods ready")

		// 3. The kubelet's part: each pod reports Ready.
		for _, name := range []string{"web-0", "web-1"} {
			var pod corev1.Pod
			Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: name}, &pod)).To(Succeed())
			pod.Status.Conditions = append(pod.Status.Conditions,
				corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue})
			Expect(k8sClient.Status().Update(ctx, &pod)).To(Succeed())
		}
		expectReady(metav1.ConditionTrue, "PodsReady", "2 of 2 pods ready")
	})
})
