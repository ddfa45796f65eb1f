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
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	zhhnzwv2 "example.com/k8s-demo/kubebuilder-demo/api/v2"
)

// podEventPriority puts a CustomPod whose pods changed ahead of CustomPods
// that wait for their first reconcile, which the For() handler adds at 0.
// Owns(&corev1.Pod{}) would add both at 0, and a work queue serves equal
// priorities first in, first out: when many CustomPods are created at once,
// one whose pods became ready would wait behind all of them before its status
// said so (docs/bench.md, "What made the controllers fast").
const podEventPriority = 1

// podEventBatchPeriod is how long a pod's event waits before its CustomPod is
// served, so that the events of its other pods join it and one Reconcile
// writes the status they add up to, not one status per pod. Kubernetes' Job
// controller batches its pods' events the same way, for a second.
const podEventBatchPeriod = time.Second

// podEvents is Owns(&corev1.Pod{}) with podEventPriority, after
// podEventBatchPeriod: any change to a pod
// a CustomPod controls (created, ready, failed, deleted) enqueues that
// CustomPod. Events of the informer's initial list, and resyncs, keep
// handler.LowPriority, as Owns gives them.
func podEvents() handler.EventHandler {
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueueController(q, e.Object, e.IsInInitialList)
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			resync := e.ObjectOld.GetResourceVersion() == e.ObjectNew.GetResourceVersion()
			enqueueController(q, e.ObjectOld, resync)
			enqueueController(q, e.ObjectNew, resync)
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueueController(q, e.Object, false)
		},
	}
}

// enqueueController adds the CustomPod that controls pod, if one does: at
// handler.LowPriority if low, else at podEventPriority after
// podEventBatchPeriod. A queue without priorities gets an AddAfter.
func enqueueController(q workqueue.TypedRateLimitingInterface[reconcile.Request], pod client.Object, low bool) {
	names := customPodOwnerName(pod)
	if len(names) == 0 {
		return
	}
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: pod.GetNamespace(), Name: names[0]}}
	opts := priorityqueue.AddOpts{Priority: ptr.To(podEventPriority), After: podEventBatchPeriod}
	if low {
		opts = priorityqueue.AddOpts{Priority: ptr.To(handler.LowPriority)}
	}
	pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request])
	if !ok {
		q.AddAfter(req, opts.After)
		return
	}
	pq.AddWithOpts(opts, req)
}

// customPodOwnerName is the podOwnerKey index: the name of the CustomPod that
// controls the pod, in any of its API versions, if one does.
func customPodOwnerName(obj client.Object) []string {
	owner := metav1.GetControllerOf(obj)
	if owner == nil || owner.Kind != "CustomPod" {
		return nil
	}
	if gv, err := schema.ParseGroupVersion(owner.APIVersion); err != nil || gv.Group != zhhnzwv2.GroupVersion.Group {
		return nil
	}
	return []string{owner.Name}
}
