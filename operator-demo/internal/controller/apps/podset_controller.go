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
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

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

	// podOwnerKey indexes the cached pods by the name of the PodSet that
	// controls them, so that a PodSet's pods are found without scanning the
	// namespace's (the kubebuilder book's CronJob indexes its Jobs the same
	// way).
	podOwnerKey = ".metadata.controller"
)

// PodSetReconciler reconciles a PodSet object. It is the article's PodSet
// controller: a PodSet is a CustomPod with a required size and the pod names
// in status.nodes. It answers the stale cache as ReplicaSet's controller
// does, with expectations, where the CustomPod controller
// (internal/controller/zhhnzw) gives each pod a name of its own, which a
// second create cannot take:
//
//   - the pods are read from the cache, which costs no request;
//   - before it creates or deletes pods, the controller notes what the
//     cache should then show (expectations.go), and it changes nothing more
//     for that PodSet until the cache's events have shown it all;
//   - those events, each pod's create, deletion and delete, are what
//     requeue the PodSet (podEvents), so it waits for no timer.
//
// make bench measures both answers (docs/bench.md, step 3).
type PodSetReconciler struct {
	client.Client
	Scheme *runtime.Scheme

	// Recorder emits an event for every pod created or deleted. Optional.
	Recorder events.EventRecorder

	// Clock times out expectations (ExpectationsTimeout). Optional: the
	// real clock.
	Clock clock.PassiveClock

	expectOnce sync.Once
	expected   *expectations
}

// expectations is created on first use, so that a PodSetReconciler{} built
// by hand, as the tests do, works too.
func (r *PodSetReconciler) expectations() *expectations {
	r.expectOnce.Do(func() {
		c := r.Clock
		if c == nil {
			c = clock.RealClock{}
		}
		r.expected = newExpectations(c)
	})
	return r.expected
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
		if apierrors.IsNotFound(err) {
			// The garbage collector removes the pods through their owner
			// references; nothing is expected of them any more.
			r.expectations().forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !ps.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}

	// Until the cache shows the pods this controller last created and
	// deleted, its list would count them wrong. Their events requeue the
	// PodSet as they come; RequeueAfter only matters if one never comes.
	if ok, wait := r.expectations().satisfied(req.NamespacedName); !ok {
		logf.FromContext(ctx).V(1).Info("Waiting for the cache to show this controller's pod creates and deletes")
		return ctrl.Result{RequeueAfter: wait}, nil
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
// spec.size: not being deleted and not finished. It reads the cache, through
// the podOwnerKey index; the expectations say it is new enough.
func (r *PodSetReconciler) activePods(ctx context.Context, ps *appsv1alpha1.PodSet) ([]corev1.Pod, error) {
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

// scaleUp creates n pods and returns pods with the new ones added. One event
// names the pods it created, as CustomPod's controller records them.
func (r *PodSetReconciler) scaleUp(ctx context.Context, ps *appsv1alpha1.PodSet, pods []corev1.Pod, n int) ([]corev1.Pod, error) {
	log := logf.FromContext(ctx)
	key := client.ObjectKeyFromObject(ps)
	var made []string
	defer func() {
		if len(made) > 0 {
			r.event(ps, nil, corev1.EventTypeNormal, ReasonSuccessfulCreate, "Create", "%s", podsNote("Created", made))
		}
	}()
	// Expected before the first create: its event may come before it returns.
	r.expectations().expectCreates(key, n)
	for i := range n {
		pod, err := r.newPod(ps)
		if err == nil {
			err = r.Create(ctx, pod, client.FieldOwner(ControllerName))
		}
		if err != nil {
			// No event will come for this create and those not made.
			for range n - i {
				r.expectations().createObserved(key)
			}
			r.event(ps, nil, corev1.EventTypeWarning, ReasonFailedCreate, "Create", "Error creating pod: %v", err)
			return pods, fmt.Errorf("creating pod: %w", err)
		}
		log.Info("Created pod", "pod", pod.Name)
		made = append(made, pod.Name)
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
	key := client.ObjectKeyFromObject(ps)
	names := make([]string, n)
	for i := range n {
		names[i] = pods[i].Name
	}
	r.expectations().expectDeletes(key, names)
	var gone []string
	defer func() {
		if len(gone) > 0 {
			r.event(ps, nil, corev1.EventTypeNormal, ReasonSuccessfulDelete, "Delete", "%s", podsNote("Deleted", gone))
		}
	}()
	for deleted := range n {
		pod := &pods[deleted]
		err := r.Delete(ctx, pod, client.Preconditions{UID: &pod.UID})
		if err != nil {
			// Gone already, or not deleted: either way this controller's
			// delete has no event to wait for.
			r.expectations().deleteObserved(key, pod.Name)
		}
		if apierrors.IsNotFound(err) {
			// Someone else deleted it: gone, as wanted, but not by this
			// controller, so no "Deleted pod" log line, and not named in the
			// event.
			log.V(1).Info("Pod already gone", "pod", pod.Name)
			continue
		}
		if err != nil {
			for _, p := range pods[deleted:n] {
				r.expectations().deleteObserved(key, p.Name)
			}
			r.event(ps, pod, corev1.EventTypeWarning, ReasonFailedDelete, "Delete", "Error deleting pod %s: %v", pod.Name, err)
			return pods[deleted:], fmt.Errorf("deleting pod %s: %w", pod.Name, err)
		}
		log.Info("Deleted pod", "pod", pod.Name)
		gone = append(gone, pod.Name)
	}
	return pods[n:], nil
}

// podsNote is an event's note for what a reconcile did to pods: "Created pod:
// web-x7k2p", "Created 3 pods: web-x7k2p, ...". It names at most five: an
// events.k8s.io note is at most 1 KB.
func podsNote(done string, names []string) string {
	if len(names) == 1 {
		return done + " pod: " + names[0]
	}
	shown := strings.Join(names[:min(len(names), 5)], ", ")
	if len(names) > 5 {
		shown += fmt.Sprintf(" and %d more", len(names)-5)
	}
	return fmt.Sprintf("%s %d pods: %s", done, len(names), shown)
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
