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
	"errors"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "example.com/k8s-demo/operator-demo/api/apps/v1alpha1"
)

const (
	// PodSetLabel marks the pods of a PodSet; its value is the PodSet's name.
	PodSetLabel = "apps.mock.com/podset"
	// ManagedByLabel is the recommended label naming the controller that
	// manages an object: cmd/main.go caches only the pods that carry it.
	ManagedByLabel = "app.kubernetes.io/managed-by"

	// ConditionReady is the condition type in status.conditions.
	ConditionReady = "Ready"

	// ControllerName names this controller wherever it leaves its mark: the
	// value of ManagedByLabel on its pods, the field manager of its writes
	// (`kubectl get -o yaml --show-managed-fields`; without one the API
	// server takes the binary's name from the user agent), and, in
	// cmd/main.go, the source of its events.
	ControllerName = "podset-controller"

	// PodImage is the pods' image: a tag, not :latest, which the kubelet
	// pulls on every start; IfNotPresent then runs the copy a node has.
	PodImage = "busybox:1.36"

	// Reasons, for events and for the Ready condition: the same as CustomPod's.
	ReasonSuccessfulCreate = "SuccessfulCreate"
	ReasonSuccessfulDelete = "SuccessfulDelete"
	ReasonFailedCreate     = "FailedCreate"
	ReasonFailedDelete     = "FailedDelete"
	// ReasonPodsReady: spec.size pods exist and are ready (Ready=True).
	ReasonPodsReady = "PodsReady"
	// ReasonPodsNotReady: fewer pods are ready than spec.size asks, while
	// they start (Ready=False).
	ReasonPodsNotReady = "PodsNotReady"
	// ReasonScaleFailed: creating or deleting a pod failed (Ready=False).
	ReasonScaleFailed = "ScaleFailed"
)

// PodSetReconciler reconciles a PodSet object. It is the article's PodSet
// controller, written like the CustomPod one (see internal/controller/zhhnzw):
// a PodSet is a CustomPod with a required size and the pod names in
// status.nodes.
type PodSetReconciler struct {
	client.Client
	Scheme *runtime.Scheme

	// APIReader reads straight from the API server: pods are listed through it
	// because the cache lags behind our own creates and deletes.
	// Required: SetupWithManager refuses to start without it.
	APIReader client.Reader

	// Recorder emits an event for every pod created or deleted. Optional.
	Recorder events.EventRecorder
}

// The scaffold's markers grant every verb on podsets and get;update;patch on
// their status; this controller reads its PodSets (through the cache) and
// patches their status, so it is granted that and no more.
// +kubebuilder:rbac:groups=apps.mock.com,resources=podsets,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps.mock.com,resources=podsets/status,verbs=patch
// +kubebuilder:rbac:groups=apps.mock.com,resources=podsets/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile makes the pods of a PodSet match spec.size: it creates the
// missing busybox pods, deletes the surplus (newest first) and records the
// pods in status.nodes.
//
// podsets/finalizers is granted because SetControllerReference sets
// blockOwnerDeletion, which the OwnerReferencesPermissionEnforcement admission
// plugin only allows to whoever may update the owner's finalizers.
func (r *PodSetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var ps appsv1alpha1.PodSet
	if err := r.Get(ctx, req.NamespacedName, &ps); err != nil {
		// NotFound: the garbage collector removes the pods through their
		// owner references. There is nothing to retry.
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !ps.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}

	pods, err := r.activePods(ctx, &ps)
	if err != nil {
		return ctrl.Result{}, err
	}

	var scaleErr error
	if diff := int(ps.Spec.Size) - len(pods); diff > 0 {
		pods, scaleErr = r.scaleUp(ctx, &ps, pods, diff)
	} else if diff < 0 {
		pods, scaleErr = r.scaleDown(ctx, &ps, pods, -diff)
	}

	if err := r.updateStatus(ctx, &ps, pods, scaleErr); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, scaleErr
}

// activePods returns the pods this PodSet controls that count towards
// spec.size: not being deleted and not finished.
func (r *PodSetReconciler) activePods(ctx context.Context, ps *appsv1alpha1.PodSet) ([]corev1.Pod, error) {
	var list corev1.PodList
	if err := r.APIReader.List(ctx, &list,
		client.InNamespace(ps.Namespace),
		client.MatchingLabels{PodSetLabel: ps.Name},
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

// scaleUp creates n pods and returns pods with the new ones added.
func (r *PodSetReconciler) scaleUp(ctx context.Context, ps *appsv1alpha1.PodSet, pods []corev1.Pod, n int) ([]corev1.Pod, error) {
	log := logf.FromContext(ctx)
	for range n {
		pod, err := r.newPod(ps)
		if err != nil {
			return pods, err
		}
		if err := r.Create(ctx, pod, client.FieldOwner(ControllerName)); err != nil {
			r.event(ps, nil, corev1.EventTypeWarning, ReasonFailedCreate, "Create", "Error creating pod: %v", err)
			return pods, fmt.Errorf("creating pod: %w", err)
		}
		log.Info("Created pod", "pod", pod.Name)
		r.event(ps, pod, corev1.EventTypeNormal, ReasonSuccessfulCreate, "Create", "Created pod: %s", pod.Name)
		pods = append(pods, *pod)
	}
	return pods, nil
}

// scaleDown deletes n pods, the newest first (ties broken by name), and
// returns the pods that are left.
func (r *PodSetReconciler) scaleDown(ctx context.Context, ps *appsv1alpha1.PodSet, pods []corev1.Pod, n int) ([]corev1.Pod, error) {
	log := logf.FromContext(ctx)
	sort.Slice(pods, func(i, j int) bool {
		ti, tj := pods[i].CreationTimestamp, pods[j].CreationTimestamp
		if !ti.Equal(&tj) {
			return tj.Before(&ti)
		}
		return pods[i].Name > pods[j].Name
	})
	for deleted := range n {
		pod := &pods[deleted]
		err := r.Delete(ctx, pod, client.Preconditions{UID: &pod.UID})
		if apierrors.IsNotFound(err) {
			// Someone else deleted it: gone, as wanted, but not by this
			// controller, so no "Deleted pod" log line or event.
			log.V(1).Info("Pod already gone", "pod", pod.Name)
			continue
		}
		if err != nil {
			r.event(ps, pod, corev1.EventTypeWarning, ReasonFailedDelete, "Delete", "Error deleting pod %s: %v", pod.Name, err)
			return pods[deleted:], fmt.Errorf("deleting pod %s: %w", pod.Name, err)
		}
		log.Info("Deleted pod", "pod", pod.Name)
		r.event(ps, pod, corev1.EventTypeNormal, ReasonSuccessfulDelete, "Delete", "Deleted pod: %s", pod.Name)
	}
	return pods[n:], nil
}

// newPod builds one busybox pod, the article's sleeper, owned by ps.
func (r *PodSetReconciler) newPod(ps *appsv1alpha1.PodSet) (*corev1.Pod, error) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: ps.Name + "-",
			Namespace:    ps.Namespace,
			Labels:       map[string]string{PodSetLabel: ps.Name, ManagedByLabel: ControllerName},
		},
		Spec: corev1.PodSpec{
			// The "restricted" Pod Security Standard, as CustomPod's pods.
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot: ptr.To(true),
				// busybox's image runs as root, and the kubelet refuses to
				// start it with runAsNonRoot unless a user is named: nobody.
				RunAsUser:      ptr.To[int64](65534),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{
				Name:            "busybox",
				Image:           PodImage,
				ImagePullPolicy: corev1.PullIfNotPresent,
				Command:         []string{"sleep", "3600"},
				SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: ptr.To(false),
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
			}},
		},
	}
	if err := controllerutil.SetControllerReference(ps, pod, r.Scheme); err != nil {
		return nil, err
	}
	return pod, nil
}

// updateStatus writes replicas, readyReplicas, nodes and the Ready
// condition, only when they changed.
func (r *PodSetReconciler) updateStatus(ctx context.Context, ps *appsv1alpha1.PodSet, pods []corev1.Pod, scaleErr error) error {
	names := make([]string, 0, len(pods))
	readyPods := int32(0)
	for i := range pods {
		names = append(names, pods[i].Name)
		if isPodReady(&pods[i]) {
			readyPods++
		}
	}
	sort.Strings(names)

	status := ps.Status.DeepCopy()
	status.Replicas = int32(len(names))
	status.ReadyReplicas = readyPods
	status.Nodes = names
	ready := metav1.Condition{
		Type:               ConditionReady,
		Status:             metav1.ConditionTrue,
		Reason:             ReasonPodsReady,
		Message:            fmt.Sprintf("%d of %d pods ready", readyPods, ps.Spec.Size),
		ObservedGeneration: ps.Generation,
	}
	switch {
	case scaleErr != nil:
		ready.Status, ready.Reason, ready.Message = metav1.ConditionFalse, ReasonScaleFailed, scaleErr.Error()
	case readyPods != ps.Spec.Size:
		ready.Status, ready.Reason = metav1.ConditionFalse, ReasonPodsNotReady
	}
	meta.SetStatusCondition(&status.Conditions, ready)

	if equality.Semantic.DeepEqual(&ps.Status, status) {
		return nil
	}
	patch := client.MergeFrom(ps.DeepCopy())
	ps.Status = *status
	if err := r.Status().Patch(ctx, ps, patch, client.FieldOwner(ControllerName)); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("updating status: %w", err)
	}
	return nil
}

// isPodReady says whether a pod's Ready condition is True, as a ReplicaSet's
// readyReplicas counts.
func isPodReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func (r *PodSetReconciler) event(ps *appsv1alpha1.PodSet, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(ps, related, eventtype, reason, action, note, args...)
	}
}

// SetupWithManager sets up the controller with the Manager.
func (r *PodSetReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.APIReader == nil {
		// Counting pods from the cache, which lags behind this controller's
		// own writes, would create or delete one pod too many.
		return errors.New("PodSetReconciler needs APIReader (mgr.GetAPIReader()): it lists pods from the API server, not from the cache")
	}
	return ctrl.NewControllerManagedBy(mgr).
		// Owns() requeues the PodSet when one of its pods changes or is
		// deleted, so that a lost pod is replaced at once.
		For(&appsv1alpha1.PodSet{}).
		Owns(&corev1.Pod{}).
		Named("apps-podset").
		Complete(r)
}
