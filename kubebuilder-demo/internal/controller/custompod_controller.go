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
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	zhhnzwv2 "example.com/k8s-demo/kubebuilder-demo/api/v2"
)

// CustomPodReconciler reconciles a CustomPod object
type CustomPodReconciler struct {
	client.Client
	Scheme *runtime.Scheme

	// APIReader reads straight from the API server, when a create is refused
	// with AlreadyExists (pod_writes.go). Required.
	APIReader client.Reader
	// Recorder emits events.k8s.io/v1 events (events.go). Optional.
	Recorder events.EventRecorder
}

// The scaffold's markers grant every verb on custompods; this controller
// reads them through the cache and patches their status, so it is granted
// that and no more. custompods/finalizers: SetControllerReference sets
// blockOwnerDeletion, which the API server allows only to whoever may update
// the owner's finalizers.
// +kubebuilder:rbac:groups=zhhnzw.mock.com,resources=custompods,verbs=get;list;watch
// +kubebuilder:rbac:groups=zhhnzw.mock.com,resources=custompods/status,verbs=patch
// +kubebuilder:rbac:groups=zhhnzw.mock.com,resources=custompods/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile makes the pods of a CustomPod match spec.replicas. It is called
// with a CustomPod's name whenever the CustomPod or one of its pods changes,
// and works from what it finds, not from what changed.
//
// For more details, check Reconcile and its Result here:
// - https://pkg.go.dev/sigs.k8s.io/controller-runtime@v0.25.0/pkg/reconcile
func (r *CustomPodReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	// 1. Load the CustomPod from the cache.
	var cp zhhnzwv2.CustomPod
	if err := r.Get(ctx, req.NamespacedName, &cp); err != nil {
		// NotFound: the CustomPod is gone, and the garbage collector deletes
		// its pods through their owner references. Nothing to retry.
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !cp.DeletionTimestamp.IsZero() {
		// Being deleted: do not create pods the garbage collector must delete again.
		return ctrl.Result{}, nil
	}
	desired := int32(1) // the CRD's default, for objects the schema did not default
	if cp.Spec.Replicas != nil {
		desired = *cp.Spec.Replicas
	}

	// 2. List the pods it owns, from the cache.
	pods, err := r.ownedPods(ctx, &cp)
	if err != nil {
		return ctrl.Result{}, err
	}

	// 3. Compare them with spec.replicas. Pod i is named <CustomPod>-<i>, as
	// a StatefulSet names its pods (pod_names.go). The cache lags behind this
	// controller's own writes; with a name, a pod created twice is refused
	// the second time (AlreadyExists) instead of made twice, and a pod
	// deleted twice is NotFound. So a stale cache costs a refused request,
	// never a pod too many.
	active, missing, surplus := sortPods(&cp, pods, desired)

	// 4. Create the missing pods, then delete the surplus (pod_writes.go).
	active, scaleErr := r.createPods(ctx, &cp, active, missing)
	if scaleErr == nil {
		scaleErr = r.deletePods(ctx, &cp, surplus)
	}

	// 5. Write what it found in the status (status.go).
	if err := r.updateStatus(ctx, &cp, desired, active, scaleErr); err != nil {
		return ctrl.Result{}, err
	}
	// A failed create or delete is retried with backoff.
	return ctrl.Result{}, scaleErr
}

// podOwnerKey indexes the cached pods by the name of the CustomPod that
// controls them, as the kubebuilder book's CronJob indexes its Jobs: a
// label selector would test every pod of the namespace at each reconcile.
// The key names this controller: a manager refuses a key registered twice.
const podOwnerKey = ".metadata.controller.custompod"

// ownedPods returns the pods cp controls, from the podOwnerKey index. Pods of
// an earlier CustomPod of the same name (another UID) are not adopted.
func (r *CustomPodReconciler) ownedPods(ctx context.Context, cp *zhhnzwv2.CustomPod) ([]corev1.Pod, error) {
	var list corev1.PodList
	if err := r.List(ctx, &list, client.InNamespace(cp.Namespace), client.MatchingFields{podOwnerKey: cp.Name}); err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	var pods []corev1.Pod
	for _, pod := range list.Items {
		if metav1.IsControlledBy(&pod, cp) {
			pods = append(pods, pod)
		}
	}
	return pods, nil
}

// SetupWithManager sets up the controller with the Manager.
func (r *CustomPodReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.APIReader == nil {
		return errors.New("CustomPodReconciler needs APIReader (mgr.GetAPIReader()): it reads a pod from the API server when a create says the name is taken")
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &corev1.Pod{}, podOwnerKey, customPodOwnerName); err != nil {
		return fmt.Errorf("indexing pods by their CustomPod: %w", err)
	}
	return ctrl.NewControllerManagedBy(mgr).
		// Not on a status change: each write would queue the CustomPod at
		// once, with its pods' waiting events (docs/bench.md, "What made the controllers fast").
		For(&zhhnzwv2.CustomPod{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		// Any change to a pod a CustomPod owns (deleted, failed, ready)
		// requeues that CustomPod: Owns(&corev1.Pod{}), with those CustomPods
		// served before new ones (pod_events.go).
		Watches(&corev1.Pod{}, podEvents()).
		Named("custompod").
		Complete(r)
}
