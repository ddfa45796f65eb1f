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
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "example.com/k8s-demo/operator-demo/api/apps/v1alpha1"
)

// PodSetReconciler reconciles a PodSet: article 004's CustomPod with a
// required size and the pod names in status.nodes. It reads its pods from the
// cache, which lags behind its own writes. Where CustomPod's controller names
// its pods, this one keeps expectations, as ReplicaSet's controller does
// (expectations.go), or reads through a read-your-writes client
// (read_your_writes.go), as docs/bench.md's "The stale cache" measures.
type PodSetReconciler struct {
	client.Client
	Scheme *runtime.Scheme

	// Recorder emits an event for every pod created or deleted. Optional.
	Recorder events.EventRecorder

	// Clock times out expectations (ExpectationsTimeout). Optional.
	Clock clock.PassiveClock
	// ReadYourWrites says Client is a ReadYourWritesClient: step 2 is skipped.
	ReadYourWrites bool

	expectOnce sync.Once
	expected   *expectations
}

// The scaffold grants every verb on podsets; this controller reads them and
// patches their status. podsets/finalizers: SetControllerReference sets
// blockOwnerDeletion, which the OwnerReferencesPermissionEnforcement
// admission plugin allows only to whoever may update the owner's finalizers.
// +kubebuilder:rbac:groups=apps.mock.com,resources=podsets,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps.mock.com,resources=podsets/status,verbs=patch
// +kubebuilder:rbac:groups=apps.mock.com,resources=podsets/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile makes the pods of a PodSet match spec.size and records them in
// status.nodes.
func (r *PodSetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	// 1. Load the PodSet. Once it is gone, or going, the garbage collector
	// removes its pods through their owner references.
	var ps appsv1alpha1.PodSet
	if err := r.Get(ctx, req.NamespacedName, &ps); err != nil {
		if apierrors.IsNotFound(err) {
			r.expectations().forget(req.NamespacedName) // expect nothing of its pods
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !ps.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}

	// 2. Wait until the cache shows this controller's own writes (expectations.go).
	// Until the cache shows the pods this controller last created and
	// deleted, its list would count them wrong. Their events requeue the
	// PodSet as they come; RequeueAfter only matters if one never comes.
	if ok, wait := r.expectations().satisfied(req.NamespacedName); !ok && !r.ReadYourWrites {
		logf.FromContext(ctx).V(1).Info("Waiting for the cache to show this controller's pod creates and deletes")
		return ctrl.Result{RequeueAfter: wait}, nil
	}

	// 3. List the pods it owns, from the cache.
	pods, err := r.ownedPods(ctx, &ps)
	if err != nil {
		return ctrl.Result{}, err
	}

	// 4. Create the missing pods or delete the surplus (pod_writes.go).
	var scaleErr error
	if diff := int(ps.Spec.Size) - len(pods); diff > 0 {
		pods, scaleErr = r.createPods(ctx, &ps, pods, diff)
	} else if diff < 0 {
		pods, scaleErr = r.deletePods(ctx, &ps, pods, -diff)
	}

	// 5. Write the status (status.go). A scaling error is written there
	// first, then returned, so that the PodSet is retried with backoff.
	if err := r.updateStatus(ctx, &ps, pods, scaleErr); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, scaleErr
}

// ownedPods lists ps's pods that count (not being deleted, not finished).
func (r *PodSetReconciler) ownedPods(ctx context.Context, ps *appsv1alpha1.PodSet) ([]corev1.Pod, error) {
	var list corev1.PodList
	if err := r.List(ctx, &list,
		client.InNamespace(ps.Namespace),
		client.MatchingFields{podOwnerKey: ps.Name},
	); err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	pods := make([]corev1.Pod, 0, len(list.Items))
	for _, pod := range list.Items {
		if !pod.DeletionTimestamp.IsZero() || !metav1.IsControlledBy(&pod, ps) {
			continue
		}
		if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			continue
		}
		pods = append(pods, pod)
	}
	return pods, nil
}

// SetupWithManager sets up the controller with the Manager.
func (r *PodSetReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &corev1.Pod{}, podOwnerKey, podSetOwnerName); err != nil {
		return fmt.Errorf("indexing pods by their PodSet: %w", err)
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&appsv1alpha1.PodSet{}).
		// What Owns(&corev1.Pod{}) does, requeue a pod's PodSet at each of
		// its events, and also what the events tell the expectations.
		Watches(&corev1.Pod{}, r.podEvents()).
		Named("apps-podset").
		Complete(r)
}
