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
	"context"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
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

	zhhnzwv2 "example.com/k8s-demo/operator-demo/api/zhhnzw/v2"
)

// podEventPriority puts a CustomPod whose pods changed ahead of CustomPods
// that wait for their first reconcile, which the For() handler adds at 0.
// Owns(&corev1.Pod{}) would add both at 0, and a work queue serves equal
// priorities first in, first out: when many CustomPods are created at once,
// one whose pods became ready would wait behind all of them before its status
// said so (docs/bench.md, step 15).
const podEventPriority = 1

// podEventBatchPeriod is how long a pod's event waits before its CustomPod is
// served, so that the events of its other pods join it and one Reconcile
// writes the status they add up to, not one status per pod. Kubernetes' Job
// controller batches its pods' events the same way, for a second.
const podEventBatchPeriod = time.Second

// podCreatedDelay is how long a pod's creation waits before its CustomPod is
// served. The Reconcile that created the pod counted it in the status it
// wrote: the creation is news only of a pod made elsewhere, or in a race with
// a scale-down that Reconcile did not see yet. Served after
// podEventBatchPeriod, a creation would open the batch before the pods are
// ready, and their readiness would need a batch, and a status write, of its
// own (docs/bench.md, step 17). A queue keeps the earlier of two delays: the
// pods' readiness, a second after it, takes the creation along.
const podCreatedDelay = 10 * time.Second

// podEvents is Owns(&corev1.Pod{}) with podEventPriority, after
// podEventBatchPeriod: a change to a pod a CustomPod controls that Reconcile
// reads (podChanged: ready, failed, terminating) or its deletion enqueues
// that CustomPod; its creation too, after podCreatedDelay. Events of the
// informer's initial list, and resyncs, keep handler.LowPriority, as Owns
// gives them.
func podEvents() handler.EventHandler {
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if e.IsInInitialList {
				enqueueController(q, e.Object, handler.LowPriority, 0)
				return
			}
			enqueueController(q, e.Object, podEventPriority, podCreatedDelay)
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			priority := podEventPriority
			switch {
			case e.ObjectOld.GetResourceVersion() == e.ObjectNew.GetResourceVersion():
				priority = handler.LowPriority // a resync
			case !podChanged(e.ObjectOld, e.ObjectNew):
				return // bound to a node, say: nothing Reconcile reads
			}
			enqueueController(q, e.ObjectOld, priority, podEventBatchPeriod)
			enqueueController(q, e.ObjectNew, priority, podEventBatchPeriod)
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueueController(q, e.Object, podEventPriority, podEventBatchPeriod)
		},
	}
}

// podChanged says whether an update changed what Reconcile reads of a pod:
// whether it is ready, finished or terminating, and which CustomPod controls
// it. A pod's binding to a node, and its other status, do not count.
func podChanged(oldObj, newObj client.Object) bool {
	oldPod, okOld := oldObj.(*corev1.Pod)
	newPod, okNew := newObj.(*corev1.Pod)
	if !okOld || !okNew {
		return true
	}
	return isPodReady(oldPod) != isPodReady(newPod) ||
		isPodFinished(oldPod) != isPodFinished(newPod) ||
		oldPod.DeletionTimestamp.IsZero() != newPod.DeletionTimestamp.IsZero() ||
		!slices.Equal(customPodOwnerName(oldPod), customPodOwnerName(newPod))
}

// enqueueController adds the CustomPod that controls pod, if one does, at
// priority, after a delay; handler.LowPriority at once. A queue without
// priorities gets an AddAfter.
func enqueueController(q workqueue.TypedRateLimitingInterface[reconcile.Request], pod client.Object, priority int, after time.Duration) {
	names := customPodOwnerName(pod)
	if len(names) == 0 {
		return
	}
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: pod.GetNamespace(), Name: names[0]}}
	opts := priorityqueue.AddOpts{Priority: ptr.To(priority), After: after}
	if priority == handler.LowPriority {
		opts.After = 0
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
