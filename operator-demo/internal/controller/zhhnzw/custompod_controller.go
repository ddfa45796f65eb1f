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
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
	// podOwnerKey indexes the cached pods by the name of the CustomPod that
	// controls them, as the kubebuilder book's CronJob indexes its Jobs: a
	// reconcile finds its pods in the index, where a label selector would
	// test every pod in the namespace's cache, each time. The key is this
	// controller's own: a manager refuses a key registered twice for one
	// kind, and operator-demo's manager also runs PodSet's controller, which
	// indexes pods too.
	podOwnerKey = ".metadata.controller.custompod"

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

	// APIReader reads straight from the API server. It is asked only when a
	// create is refused with AlreadyExists: is the pod of that name ours, not
	// yet in the cache, or someone else's?
	// Required: SetupWithManager refuses to start without it.
	APIReader client.Reader

	// Recorder emits events.k8s.io/v1 events: the pods a reconcile created or
	// deleted, and what failed.
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
// missing pods from spec.template, deletes the surplus (the highest ordinal
// first) and then records what it found in the status.
//
// custompods/finalizers is granted because SetControllerReference sets
// blockOwnerDeletion, which the OwnerReferencesPermissionEnforcement admission
// plugin only allows to whoever may update the owner's finalizers.
//
// For more details, check Reconcile and its Result here:
// - https://pkg.go.dev/sigs.k8s.io/controller-runtime@v0.25.0/pkg/reconcile
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

	// Pod i is named <CustomPod>-<i>, as a StatefulSet names its pods. The
	// pods are read from the cache, which lags behind this controller's own
	// writes; with a name, a pod created twice is refused the second time
	// (AlreadyExists) instead of made twice, and a pod deleted twice is
	// NotFound. So a stale cache costs a refused request, never a pod too many.
	pods, err := r.ownedPods(ctx, &cp)
	if err != nil {
		return ctrl.Result{}, err
	}
	active, missing, surplus := sortPods(&cp, pods, desired)

	active, scaleErr := r.createPods(ctx, &cp, active, missing)
	if scaleErr == nil {
		scaleErr = r.deletePods(ctx, &cp, surplus)
	}

	if err := r.updateStatus(ctx, &cp, desired, active, scaleErr); err != nil {
		return ctrl.Result{}, err
	}
	// A failed create or delete is retried with backoff.
	return ctrl.Result{}, scaleErr
}

// ownedPods returns the pods cp controls, from the cache, through the
// podOwnerKey index. Pods of an earlier CustomPod of the same name (another
// UID) are not adopted.
func (r *CustomPodReconciler) ownedPods(ctx context.Context, cp *zhhnzwv2.CustomPod) ([]corev1.Pod, error) {
	var list corev1.PodList
	if err := r.List(ctx, &list,
		client.InNamespace(cp.Namespace),
		client.MatchingFields{podOwnerKey: cp.Name},
	); err != nil {
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

// sortPods sorts cp's pods into the active ones, which count towards
// spec.replicas; the names of the pods to create, ordinals 0 to desired-1
// that no pod holds; and the pods to delete, in deleteRank's order: pods
// beyond desired, pods whose name has no ordinal, and finished pods, whose
// names a replacement needs. A terminating pod holds its name until it is
// gone: its replacement is created then.
func sortPods(cp *zhhnzwv2.CustomPod, pods []corev1.Pod, desired int32) (active []corev1.Pod, missing []string, surplus []corev1.Pod) {
	held := map[string]bool{}
	for _, pod := range pods {
		held[pod.Name] = true
		i := ordinal(cp, pod.Name)
		switch {
		case !pod.DeletionTimestamp.IsZero():
		case i < 0 || i >= int(desired),
			pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed:
			surplus = append(surplus, pod)
		default:
			active = append(active, pod)
		}
	}
	for i := range int(desired) {
		if name := podName(cp, i); !held[name] {
			missing = append(missing, name)
		}
	}
	sort.Slice(surplus, func(i, j int) bool {
		return deleteRank(cp, surplus[i].Name) > deleteRank(cp, surplus[j].Name)
	})
	return active, missing, surplus
}

// podName is the name of cp's pod with ordinal i.
func podName(cp *zhhnzwv2.CustomPod, i int) string {
	return cp.Name + "-" + strconv.Itoa(i)
}

// deleteRank orders the pods to delete, the highest rank first: names without
// an ordinal (made by another version of this controller, say), then the
// highest ordinal.
func deleteRank(cp *zhhnzwv2.CustomPod, name string) int {
	if i := ordinal(cp, name); i >= 0 {
		return i
	}
	return math.MaxInt
}

// ordinal is i for a pod named podName(cp, i), and -1 for any other name.
func ordinal(cp *zhhnzwv2.CustomPod, name string) int {
	suffix, ok := strings.CutPrefix(name, cp.Name+"-")
	if !ok {
		return -1
	}
	i, err := strconv.Atoi(suffix)
	if err != nil || i < 0 || strconv.Itoa(i) != suffix {
		return -1
	}
	return i
}

// createPods creates the named pods in batches of 1, 2, 4, ..., as a
// ReplicaSet does: the pods of a batch are created at once, so that a
// CustomPod's pods cost a few round trips rather than one each, and a batch
// with a failure ends the scale-up, so that an API server refusing pods (a
// quota, an admission policy) is asked once rather than once per pod. It
// returns active with the new pods added.
//
// One event names the pods it created, not one per pod as a ReplicaSet
// records them: an event is a write like any other, and one per pod made
// them this controller's most frequent write (docs/bench.md).
func (r *CustomPodReconciler) createPods(ctx context.Context, cp *zhhnzwv2.CustomPod, active []corev1.Pod, names []string) ([]corev1.Pod, error) {
	var made []string
	defer func() {
		if len(made) > 0 {
			r.event(cp, nil, corev1.EventTypeNormal, ReasonSuccessfulCreate, "Create", "%s", podsNote("Created", made))
		}
	}()
	for batch := 1; len(names) > 0; batch *= 2 {
		n := min(batch, len(names))
		created := make([]*corev1.Pod, n)
		isNew := make([]bool, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i, name := range names[:n] {
			wg.Go(func() { created[i], isNew[i], errs[i] = r.createPod(ctx, cp, name) })
		}
		wg.Wait()
		for i, pod := range created {
			if pod != nil {
				active = append(active, *pod)
			}
			if isNew[i] {
				made = append(made, pod.Name)
			}
		}
		if err := errors.Join(errs...); err != nil {
			return active, err
		}
		names = names[n:]
	}
	return active, nil
}

// createPod creates cp's pod called name. It returns the pod, or nil for a
// pod of that name that is cp's but terminating or finished; isNew says
// whether this call made it.
func (r *CustomPodReconciler) createPod(ctx context.Context, cp *zhhnzwv2.CustomPod, name string) (pod *corev1.Pod, isNew bool, err error) {
	log := logf.FromContext(ctx)
	if pod, err = r.newPod(cp, name); err != nil {
		return nil, false, err
	}
	err = r.Create(ctx, pod, client.FieldOwner(ControllerName))
	if apierrors.IsAlreadyExists(err) {
		// The cache has not seen the pod yet, or the name is taken by a pod
		// this controller does not cache. The API server knows which.
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
			return nil, false, fmt.Errorf("reading pod %s: %w", name, err)
		}
		if !metav1.IsControlledBy(pod, cp) {
			err := fmt.Errorf("creating pod %s: the name is taken by a pod this CustomPod does not control", name)
			r.event(cp, pod, corev1.EventTypeWarning, ReasonFailedCreate, "Create", "Error creating pod: %v", err)
			return nil, false, err
		}
		log.V(1).Info("Pod already exists: the cache is behind", "pod", name)
		if !pod.DeletionTimestamp.IsZero() || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			return nil, false, nil
		}
		return pod, false, nil
	}
	if err != nil {
		r.event(cp, nil, corev1.EventTypeWarning, ReasonFailedCreate, "Create", "Error creating pod: %v", err)
		return nil, false, fmt.Errorf("creating pod: %w", err)
	}
	log.Info("Created pod", "pod", pod.Name)
	return pod, true, nil
}

// deletePods deletes the pods, in order, and names those it deleted in one
// event.
func (r *CustomPodReconciler) deletePods(ctx context.Context, cp *zhhnzwv2.CustomPod, pods []corev1.Pod) error {
	log := logf.FromContext(ctx)
	var deleted []string
	defer func() {
		if len(deleted) > 0 {
			r.event(cp, nil, corev1.EventTypeNormal, ReasonSuccessfulDelete, "Delete", "%s", podsNote("Deleted", deleted))
		}
	}()
	for i := range pods {
		pod := &pods[i]
		err := r.Delete(ctx, pod, client.Preconditions{UID: &pod.UID})
		if apierrors.IsNotFound(err) {
			// Deleted already, by this controller from a stale cache or by
			// someone else: gone, as wanted, so no "Deleted pod" log line, and
			// not named in the event.
			log.V(1).Info("Pod already gone", "pod", pod.Name)
			continue
		}
		if err != nil {
			r.event(cp, pod, corev1.EventTypeWarning, ReasonFailedDelete, "Delete", "Error deleting pod %s: %v", pod.Name, err)
			return fmt.Errorf("deleting pod %s: %w", pod.Name, err)
		}
		log.Info("Deleted pod", "pod", pod.Name)
		deleted = append(deleted, pod.Name)
	}
	return nil
}

// podsNote is an event's note for what a reconcile did to pods: "Created pod:
// sample-0", "Created 3 pods: sample-0, sample-1, sample-2". It names at most
// five: an events.k8s.io note is at most 1 KB.
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

// newPod builds the pod called name, owned by cp, running cp's spec.template. The
// controller reads v2, the stored version: a v1 CustomPod reaches it
// converted, with v1's template (busybox:1.36, sleep 3600). A template
// changed later applies to the pods made after it, as a ReplicaSet's does:
// the pods already running are not replaced.
func (r *CustomPodReconciler) newPod(cp *zhhnzwv2.CustomPod, name string) (*corev1.Pod, error) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: cp.Namespace,
			Labels:    map[string]string{CustomPodLabel: cp.Name, ManagedByLabel: ControllerName},
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
		// Without it, a pod name taken by someone else's pod could not be
		// told from a pod the cache has not seen yet.
		return errors.New("CustomPodReconciler needs APIReader (mgr.GetAPIReader()): it reads a pod from the API server when a create says the name is taken")
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &corev1.Pod{}, podOwnerKey, customPodOwnerName); err != nil {
		return fmt.Errorf("indexing pods by their CustomPod: %w", err)
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&zhhnzwv2.CustomPod{}).
		// Any change to a pod this controller owns (kubectl delete pod, a pod
		// that fails or becomes ready) requeues its CustomPod, so that it is
		// replaced as soon as its name is free. This is Owns(&corev1.Pod{}),
		// with those CustomPods served before new ones (pod_events.go).
		Watches(&corev1.Pod{}, podEvents()).
		Named("custompod").
		Complete(r)
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
