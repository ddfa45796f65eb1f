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

	zhhnzwv2 "example.com/k8s-demo/operator-demo/api/zhhnzw/v2"
)

const (
	// CustomPodLabel marks the pods of a CustomPod; its value is the CustomPod's
	// name. The client-go and operator-sdk implementations use the same label.
	CustomPodLabel = "zhhnzw.mock.com/custompod"
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
	ControllerName = "custompod-controller"

	// Reasons, for events and for the Ready condition. The event reasons are
	// the ones a ReplicaSet uses.
	ReasonSuccessfulCreate = "SuccessfulCreate"
	ReasonSuccessfulDelete = "SuccessfulDelete"
	ReasonFailedCreate     = "FailedCreate"
	ReasonFailedDelete     = "FailedDelete"
	// ReasonPodsReady: spec.replicas pods exist and are ready (Ready=True).
	ReasonPodsReady = "PodsReady"
	// ReasonPodsNotReady: fewer pods are ready than spec.replicas asks, while
	// they start (Ready=False).
	ReasonPodsNotReady = "PodsNotReady"
	// ReasonScaleFailed: creating or deleting a pod failed (Ready=False).
	ReasonScaleFailed = "ScaleFailed"
)

// CustomPodReconciler reconciles a CustomPod object
type CustomPodReconciler struct {
	client.Client
	Scheme *runtime.Scheme

	// APIReader reads straight from the API server. Pods are listed through it
	// because the cache lags behind our own writes: right after a create or a
	// delete, a reconcile that counted cached pods would create or delete one
	// pod too many.
	// Required: SetupWithManager refuses to start without it.
	APIReader client.Reader

	// Recorder emits events.k8s.io/v1 events for every pod created or deleted.
	// Optional.
	Recorder events.EventRecorder
}

// The scaffold's markers grant every verb on custompods and get;update;patch on
// their status; this controller reads its CustomPods (through the cache) and
// patches their status, so it is granted that and no more.
// +kubebuilder:rbac:groups=zhhnzw.mock.com,resources=custompods,verbs=get;list;watch
// +kubebuilder:rbac:groups=zhhnzw.mock.com,resources=custompods/status,verbs=patch
// +kubebuilder:rbac:groups=zhhnzw.mock.com,resources=custompods/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile makes the pods of a CustomPod match spec.replicas: it creates the
// missing pods from spec.template, deletes the surplus (newest first) and then records
// what it found in the status.
//
// custompods/finalizers is granted because SetControllerReference sets
// blockOwnerDeletion, which the OwnerReferencesPermissionEnforcement admission
// plugin only allows to whoever may update the owner's finalizers.
//
// For more details, check Reconcile and its Result here:
// - https://pkg.go.dev/sigs.k8s.io/controller-runtime@v0.24.1/pkg/reconcile
func (r *CustomPodReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var cp zhhnzwv2.CustomPod
	if err := r.Get(ctx, req.NamespacedName, &cp); err != nil {
		// NotFound: the CustomPod is gone and the garbage collector removes its
		// pods through their owner references. There is nothing to retry.
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

	pods, err := r.activePods(ctx, &cp)
	if err != nil {
		return ctrl.Result{}, err
	}

	var scaleErr error
	if diff := int(desired) - len(pods); diff > 0 {
		pods, scaleErr = r.scaleUp(ctx, &cp, pods, diff)
	} else if diff < 0 {
		pods, scaleErr = r.scaleDown(ctx, &cp, pods, -diff)
	}

	if err := r.updateStatus(ctx, &cp, desired, pods, scaleErr); err != nil {
		return ctrl.Result{}, err
	}
	// A failed create or delete is retried with backoff.
	return ctrl.Result{}, scaleErr
}

// activePods returns the pods this CustomPod controls that count towards
// spec.replicas: not being deleted and not finished. Pods that only carry the
// label (say, left over from an earlier CustomPod of the same name) are not
// adopted.
func (r *CustomPodReconciler) activePods(ctx context.Context, cp *zhhnzwv2.CustomPod) ([]corev1.Pod, error) {
	var list corev1.PodList
	if err := r.APIReader.List(ctx, &list,
		client.InNamespace(cp.Namespace),
		client.MatchingLabels{CustomPodLabel: cp.Name},
	); err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	pods := make([]corev1.Pod, 0, len(list.Items))
	for _, pod := range list.Items {
		if !pod.DeletionTimestamp.IsZero() || !metav1.IsControlledBy(&pod, cp) {
			continue
		}
		if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			continue
		}
		pods = append(pods, pod)
	}
	return pods, nil
}

// scaleUp creates n pods, each a new object with a generated name, and
// returns pods with the new ones added.
func (r *CustomPodReconciler) scaleUp(ctx context.Context, cp *zhhnzwv2.CustomPod, pods []corev1.Pod, n int) ([]corev1.Pod, error) {
	log := logf.FromContext(ctx)
	for range n {
		pod, err := r.newPod(cp)
		if err != nil {
			return pods, err
		}
		if err := r.Create(ctx, pod, client.FieldOwner(ControllerName)); err != nil {
			r.event(cp, nil, corev1.EventTypeWarning, ReasonFailedCreate, "Create", "Error creating pod: %v", err)
			return pods, fmt.Errorf("creating pod: %w", err)
		}
		log.Info("Created pod", "pod", pod.Name)
		r.event(cp, pod, corev1.EventTypeNormal, ReasonSuccessfulCreate, "Create", "Created pod: %s", pod.Name)
		pods = append(pods, *pod)
	}
	return pods, nil
}

// scaleDown deletes n pods, the newest first as a ReplicaSet does (the oldest
// have proven they run), breaking creation-time ties by name so that the
// choice is deterministic. It returns the pods that are left.
func (r *CustomPodReconciler) scaleDown(ctx context.Context, cp *zhhnzwv2.CustomPod, pods []corev1.Pod, n int) ([]corev1.Pod, error) {
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
			r.event(cp, pod, corev1.EventTypeWarning, ReasonFailedDelete, "Delete", "Error deleting pod %s: %v", pod.Name, err)
			return pods[deleted:], fmt.Errorf("deleting pod %s: %w", pod.Name, err)
		}
		log.Info("Deleted pod", "pod", pod.Name)
		r.event(cp, pod, corev1.EventTypeNormal, ReasonSuccessfulDelete, "Delete", "Deleted pod: %s", pod.Name)
	}
	return pods[n:], nil
}

// newPod builds one pod owned by cp, running cp's spec.template. The
// controller reads v2, the stored version: a v1 CustomPod reaches it
// converted, with v1's template (busybox:1.36, sleep 3600). A template
// changed later applies to the pods made after it, as a ReplicaSet's does:
// the pods already running are not replaced.
func (r *CustomPodReconciler) newPod(cp *zhhnzwv2.CustomPod) (*corev1.Pod, error) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: cp.Name + "-",
			Namespace:    cp.Namespace,
			Labels:       map[string]string{CustomPodLabel: cp.Name, ManagedByLabel: ControllerName},
		},
		Spec: corev1.PodSpec{
			// What the "restricted" Pod Security Standard asks, so that a
			// namespace that enforces it admits the pods.
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot: ptr.To(true),
				// An image that runs as root (busybox's, nginx's) is refused
				// with runAsNonRoot unless a user is named: nobody. Whatever
				// user the template's image names, its pods run as nobody.
				RunAsUser:      ptr.To[int64](65534),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{
				// The name the pods had in v1, whatever the image, as in the
				// client-go and operator-sdk demos.
				Name:  "busybox",
				Image: cp.Spec.Template.Image,
				// Pulled once per node, even an image without a tag (that
				// is, :latest, whose default policy, Always, would pull at
				// every start).
				ImagePullPolicy: corev1.PullIfNotPresent,
				Command:         cp.Spec.Template.Command,
				SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: ptr.To(false),
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
			}},
		},
	}
	// The owner reference lets Owns() map pod events back to cp, and lets the
	// garbage collector delete the pods when cp is deleted.
	if err := controllerutil.SetControllerReference(cp, pod, r.Scheme); err != nil {
		return nil, err
	}
	return pod, nil
}

// updateStatus writes replicas, readyReplicas, podNames and the Ready
// condition, and only when they changed, so that a reconcile with nothing to
// do writes nothing.
func (r *CustomPodReconciler) updateStatus(ctx context.Context, cp *zhhnzwv2.CustomPod, desired int32,
	pods []corev1.Pod, scaleErr error) error {
	names := make([]string, 0, len(pods))
	readyPods := int32(0)
	for i := range pods {
		names = append(names, pods[i].Name)
		if isPodReady(&pods[i]) {
			readyPods++
		}
	}
	sort.Strings(names)

	status := cp.Status.DeepCopy()
	status.Replicas = int32(len(names))
	status.ReadyReplicas = readyPods
	status.PodNames = names
	ready := metav1.Condition{
		Type:               ConditionReady,
		Status:             metav1.ConditionTrue,
		Reason:             ReasonPodsReady,
		Message:            fmt.Sprintf("%d of %d pods ready", readyPods, desired),
		ObservedGeneration: cp.Generation,
	}
	switch {
	case scaleErr != nil:
		ready.Status, ready.Reason, ready.Message = metav1.ConditionFalse, ReasonScaleFailed, scaleErr.Error()
	case readyPods != desired:
		ready.Status, ready.Reason = metav1.ConditionFalse, ReasonPodsNotReady
	}
	meta.SetStatusCondition(&status.Conditions, ready)

	// Semantic equality treats a nil and an empty podNames alike.
	if equality.Semantic.DeepEqual(&cp.Status, status) {
		return nil
	}
	// A merge patch rather than an update: this controller is the only writer
	// of the status, so there is no need to fail on a stale resourceVersion.
	patch := client.MergeFrom(cp.DeepCopy())
	cp.Status = *status
	if err := r.Status().Patch(ctx, cp, patch, client.FieldOwner(ControllerName)); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("updating status: %w", err)
	}
	return nil
}

// isPodReady says whether a pod's Ready condition is True: the kubelet sets it
// once every container runs and passes its readiness probe. A ReplicaSet's
// readyReplicas counts the same.
func isPodReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func (r *CustomPodReconciler) event(cp *zhhnzwv2.CustomPod, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(cp, related, eventtype, reason, action, note, args...)
	}
}

// SetupWithManager sets up the controller with the Manager.
func (r *CustomPodReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.APIReader == nil {
		// Counting pods from the cache, which lags behind this controller's
		// own writes, would create or delete one pod too many.
		return errors.New("CustomPodReconciler needs APIReader (mgr.GetAPIReader()): it lists pods from the API server, not from the cache")
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&zhhnzwv2.CustomPod{}).
		// Any change to a pod this controller owns (kubectl delete pod, a pod
		// that fails) requeues its CustomPod, so that it is replaced at once.
		Owns(&corev1.Pod{}).
		Named("custompod").
		Complete(r)
}
