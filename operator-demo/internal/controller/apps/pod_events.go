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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "example.com/k8s-demo/operator-demo/api/apps/v1alpha1"
)

// podOwnerKey indexes the cached pods by the name of the PodSet that controls
// them, so that a PodSet's pods are found without scanning the namespace's
// (the kubebuilder book's CronJob indexes its Jobs the same way).
const podOwnerKey = ".metadata.controller"

// podSetOwnerName is the podOwnerKey index: the name of the PodSet that
// controls the pod, if one does.
func podSetOwnerName(obj client.Object) []string {
	owner := metav1.GetControllerOf(obj)
	if owner == nil || owner.APIVersion != appsv1alpha1.GroupVersion.String() || owner.Kind != "PodSet" {
		return nil
	}
	return []string{owner.Name}
}

// podEvents requeues a pod's PodSet at each of the pod's events, and tells
// the expectations what the cache now shows: a pod created, a pod being
// deleted (its deletion timestamp set), a pod gone.
func (r *PodSetReconciler) podEvents() handler.Funcs {
	owner := func(obj client.Object) (types.NamespacedName, bool) {
		names := podSetOwnerName(obj)
		if len(names) == 0 {
			return types.NamespacedName{}, false
		}
		return types.NamespacedName{Namespace: obj.GetNamespace(), Name: names[0]}, true
	}
	type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q queue) {
			if key, ok := owner(e.Object); ok {
				r.expectations().createObserved(key)
				q.Add(reconcile.Request{NamespacedName: key})
			}
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q queue) {
			if key, ok := owner(e.ObjectNew); ok {
				if e.ObjectNew.GetDeletionTimestamp() != nil {
					r.expectations().deleteObserved(key, e.ObjectNew.GetName())
				}
				q.Add(reconcile.Request{NamespacedName: key})
			}
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q queue) {
			if key, ok := owner(e.Object); ok {
				r.expectations().deleteObserved(key, e.Object.GetName())
				q.Add(reconcile.Request{NamespacedName: key})
			}
		},
	}
}
