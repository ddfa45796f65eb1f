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
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	zhhnzwv2 "example.com/k8s-demo/kubebuilder-demo/api/v2"
)

// The order podEvents gives the work queue, on controller-runtime's priority
// queue as a manager makes it: no API server is needed.
var _ = Describe("podEvents", func() {
	request := func(name string) reconcile.Request {
		return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: name}}
	}
	podOf := func(name string) *corev1.Pod {
		cp := &zhhnzwv2.CustomPod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(name)}}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name + "-0", Namespace: "ns", ResourceVersion: "1"}}
		Expect(controllerutil.SetControllerReference(cp, pod, k8sClient.Scheme())).To(Succeed())
		return pod
	}

	var q priorityqueue.PriorityQueue[reconcile.Request]
	BeforeEach(func() {
		q = priorityqueue.New[reconcile.Request]("pod-events-test")
		DeferCleanup(q.ShutDown)
	})

	It("serves a CustomPod whose pods changed, once, after the batch period, before CustomPods queued earlier", func() {
		// Two new CustomPods, as the For() handler adds them, then events of
		// two pods of a third.
		q.AddWithOpts(priorityqueue.AddOpts{}, request("new-1"), request("new-2"))
		for i := range 2 {
			changed := podOf("started")
			changed.Name = fmt.Sprintf("started-%d", i)
			newer := changed.DeepCopy()
			newer.ResourceVersion = "2"
			podEvents().Update(ctx, event.UpdateEvent{ObjectOld: changed, ObjectNew: newer}, q)
		}
		Expect(q.Len()).To(Equal(2), "the pods' events wait for podEventBatchPeriod")
		Eventually(q.Len).WithTimeout(podEventBatchPeriod+time.Second).Should(Equal(3),
			"the pods' events of one CustomPod are one request")

		item, priority, _ := q.GetWithPriority()
		Expect(item).To(Equal(request("started")))
		Expect(priority).To(Equal(podEventPriority))
		item, _, _ = q.GetWithPriority()
		Expect(item).To(Equal(request("new-1")))
	})

	It("keeps the low priority of the initial list and of resyncs, as Owns does", func() {
		podEvents().Create(ctx, event.CreateEvent{Object: podOf("listed"), IsInInitialList: true}, q)
		pod := podOf("resynced")
		podEvents().Update(ctx, event.UpdateEvent{ObjectOld: pod, ObjectNew: pod.DeepCopy()}, q)
		for range 2 {
			_, priority, _ := q.GetWithPriority()
			Expect(priority).To(Equal(handler.LowPriority))
		}
	})

	It("ignores pods no CustomPod controls", func() {
		podEvents().Create(ctx, event.CreateEvent{Object: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}}}, q)
		podEvents().Delete(ctx, event.DeleteEvent{Object: podOf("gone")}, q)
		Eventually(q.Len).WithTimeout(podEventBatchPeriod + time.Second).Should(Equal(1))
		item, _ := q.Get()
		Expect(item).To(Equal(request("gone")))
	})
})
