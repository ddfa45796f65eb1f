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

package debug

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	debugv1alpha1 "example.com/k8s-demo/operator-demo/api/debug/v1alpha1"
)

const (
	// ConditionReady is the condition type in status.conditions.
	ConditionReady = "Ready"

	// ReasonDebugging: every running pod that matches has the debugger
	// (Ready=True).
	ReasonDebugging = "Debugging"
	// ReasonInvalidSelector: the selector passed admission but is not a
	// valid label selector (a bad label value, for one) (Ready=False).
	ReasonInvalidSelector = "InvalidSelector"
	// ReasonNoTargetContainer: a matching pod has no container named
	// spec.targetContainer (Ready=False, and an event on the pod).
	ReasonNoTargetContainer = "NoTargetContainer"
	// ReasonDebuggerFailed: adding the debugger to a pod failed (Ready=False).
	ReasonDebuggerFailed = "DebuggerFailed"
	// ReasonDebuggerAdded: an event, on the pod and on the PodBuggerTool.
	ReasonDebuggerAdded = "DebuggerAdded"

	// ControllerName names this controller wherever it leaves its mark: the
	// value of ManagedByLabel on its pods, the field manager of its writes
	// (`kubectl get -o yaml --show-managed-fields`; without one the API
	// server takes the binary's name from the user agent), and, in
	// cmd/main.go, the source of its events.
	ControllerName = "podbuggertool-controller"
)

// PodBuggerToolReconciler reconciles a PodBuggerTool: article 004's
// debugging operator. Its five steps, as the article lists them:
//
//  1. watch pods' events: SetupWithManager watches pods, and
//  2. handles their creates and updates: toolsForPod queues the
//     PodBuggerTools a changed pod concerns;
//  3. compares the pod's labels with the PodBuggerTool's selector, and
//  4. if they match, acts: Reconcile lists the matching pods;
//  5. adds a container running the PodBuggerTool's image to the pod, as an
//     ephemeral container: addDebugger.
type PodBuggerToolReconciler struct {
	client.Client
	Scheme *runtime.Scheme

	// PodMetadata is a cache of the metadata of every pod (cmd/main.go makes
	// it, with TransformPodMetadata). The manager's cache holds only the pods
	// the other controllers make, and a PodBuggerTool debugs anyone's: their
	// labels are all it needs to be told which pods changed. Required.
	PodMetadata cache.Cache
	// APIReader reads the pods a selector matches, in full, from the API
	// server: the pods are in no cache. Required.
	APIReader client.Reader

	// Recorder emits an event on the pod and on the PodBuggerTool for every
	// debugger added. Optional.
	Recorder events.EventRecorder
}

// The scaffold's markers grant every verb on podbuggertools; this controller
// only reads them and writes their status, and sets no owner references
// (the pods are not its own), so it needs no more.
// +kubebuilder:rbac:groups=debug.mock.com,resources=podbuggertools,verbs=get;list;watch
// +kubebuilder:rbac:groups=debug.mock.com,resources=podbuggertools/status,verbs=patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=pods/ephemeralcontainers,verbs=update
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile gives every running pod that the PodBuggerTool's selector
// matches one debugger: an ephemeral container named DebuggerName(tool),
// running spec.image and sharing the target container's processes.
//
// The name is what makes it idempotent: it depends only on the
// PodBuggerTool's name, so a pod that has a container of that name has its
// debugger, whether this process added it or one before a restart did.
// Ephemeral containers cannot be removed or changed: a pod that stops
// matching, or a PodBuggerTool that is deleted or changes its image, leaves
// the debuggers already added as they are.
func (r *PodBuggerToolReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var tool debugv1alpha1.PodBuggerTool
	if err := r.Get(ctx, req.NamespacedName, &tool); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !tool.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}

	ready := metav1.Condition{Type: ConditionReady, Status: metav1.ConditionTrue, Reason: ReasonDebugging}
	selector, err := metav1.LabelSelectorAsSelector(&tool.Spec.Selector)
	if err == nil && !requiresLabel(&tool.Spec.Selector) {
		// Admission refuses it (a CEL rule); an object stored before the
		// rule existed would otherwise debug nearly every pod in the namespace.
		err = errors.New("the selector requires no label: it would match every pod that lacks the labels it names")
	}
	if err != nil {
		// Retrying cannot help: the next spec change queues it again.
		r.event(&tool, nil, corev1.EventTypeWarning, ReasonInvalidSelector, "Select", "Invalid selector: %v", err)
		ready.Status, ready.Reason, ready.Message = metav1.ConditionFalse, ReasonInvalidSelector, err.Error()
		return ctrl.Result{}, r.updateStatus(ctx, &tool, 0, ready)
	}

	var pods corev1.PodList
	if err := r.APIReader.List(ctx, &pods, client.InNamespace(tool.Namespace), client.MatchingLabelsSelector{Selector: selector}); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing pods: %w", err)
	}

	name := DebuggerName(tool.Name)
	var debugged int32
	var errs []error
	var noTarget []string
	for i := range pods.Items {
		pod := &pods.Items[i]
		if hasEphemeralContainer(pod, name) {
			debugged++
			continue
		}
		// Only a running pod can start a container; a pending one is
		// queued again when it starts running.
		if pod.Status.Phase != corev1.PodRunning || !pod.DeletionTimestamp.IsZero() {
			continue
		}
		target := targetContainer(&tool, pod)
		if target == "" {
			noTarget = append(noTarget, pod.Name)
			r.event(pod, &tool, corev1.EventTypeWarning, ReasonNoTargetContainer, "Debug",
				"No container %q to debug, for PodBuggerTool %s", tool.Spec.TargetContainer, tool.Name)
			continue
		}
		if err := r.addDebugger(ctx, &tool, pod, name, target); err != nil {
			errs = append(errs, fmt.Errorf("pod %s: %w", pod.Name, err))
			continue
		}
		debugged++
	}

	switch {
	case len(errs) > 0:
		ready.Status, ready.Reason, ready.Message = metav1.ConditionFalse, ReasonDebuggerFailed, errors.Join(errs...).Error()
	case len(noTarget) > 0:
		ready.Status, ready.Reason = metav1.ConditionFalse, ReasonNoTargetContainer
		ready.Message = fmt.Sprintf("no container %q in pods %s", tool.Spec.TargetContainer, strings.Join(noTarget, ", "))
	default:
		ready.Message = fmt.Sprintf("%d pods debugged", debugged)
	}
	if err := r.updateStatus(ctx, &tool, debugged, ready); err != nil {
		return ctrl.Result{}, err
	}
	// A failed pod is retried with the work queue's back-off; a conflict
	// (the pod changed since it was read) is retried the same way, and the
	// next read shows whether the debugger is there.
	return ctrl.Result{}, errors.Join(errs...)
}

// addDebugger adds the ephemeral container through the pods/ephemeralcontainers
// subresource, the API `kubectl debug` uses. The update carries the pod's
// resourceVersion: if the pod changed since it was read (a debugger added
// by another run, say), the API server refuses it with a conflict instead
// of adding a second one.
func (r *PodBuggerToolReconciler) addDebugger(ctx context.Context, tool *debugv1alpha1.PodBuggerTool, pod *corev1.Pod, name, target string) error {
	updated := pod.DeepCopy()
	updated.Spec.EphemeralContainers = append(updated.Spec.EphemeralContainers, corev1.EphemeralContainer{
		EphemeralContainerCommon: corev1.EphemeralContainerCommon{
			Name:  name,
			Image: tool.Spec.Image,
			// As `kubectl debug -it`: a shell (busybox's default command)
			// waits on its terminal instead of exiting at once, so that
			// `kubectl attach` or `kubectl exec` can use it.
			Stdin:           true,
			TTY:             true,
			SecurityContext: RestrictedSecurityContext(),
		},
		TargetContainerName: target,
	})
	if err := r.SubResource("ephemeralcontainers").Update(ctx, updated, client.FieldOwner(ControllerName)); err != nil {
		r.event(pod, tool, corev1.EventTypeWarning, ReasonDebuggerFailed, "Debug", "Adding debugger %s failed: %v", name, err)
		return fmt.Errorf("adding ephemeral container %s: %w", name, err)
	}
	logf.FromContext(ctx).Info("Added debugger", "pod", pod.Name, "container", name, "image", tool.Spec.Image, "target", target)
	r.event(pod, tool, corev1.EventTypeNormal, ReasonDebuggerAdded, "Debug",
		"Added ephemeral container %s (%s), sharing container %s's processes, for PodBuggerTool %s", name, tool.Spec.Image, target, tool.Name)
	r.event(tool, pod, corev1.EventTypeNormal, ReasonDebuggerAdded, "Debug", "Added debugger %s to pod %s", name, pod.Name)
	return nil
}

// RestrictedSecurityContext is the debugger's securityContext: what
// `kubectl debug --profile=restricted` gives its container (kubectl's
// pkg/cmd/debug/profiles.go), what the "restricted" Pod Security Standard
// requires of every container, ephemeral ones included. So a debugger is
// admitted in a namespace that enforces it, and never runs as root nor
// gains a capability: an image whose user is root does not start, unless
// the pod names another user (runAsUser), as with kubectl's profile.
func RestrictedSecurityContext() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		RunAsNonRoot:             ptr.To(true),
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// requiresLabel says whether a selector matches only pods that carry a
// label it names: a matchLabels entry, or an In or Exists expression. NotIn
// and DoesNotExist match every pod without the label, as an empty selector
// matches every pod. The CRD's CEL rule on spec.selector is the same test.
func requiresLabel(s *metav1.LabelSelector) bool {
	if len(s.MatchLabels) > 0 {
		return true
	}
	for _, e := range s.MatchExpressions {
		if e.Operator == metav1.LabelSelectorOpIn || e.Operator == metav1.LabelSelectorOpExists {
			return true
		}
	}
	return false
}

// DebuggerName is the name of a PodBuggerTool's ephemeral container: a
// container name (a DNS label) made from the PodBuggerTool's name alone. A
// name that does not fit, or has dots, gets a hash of the whole name, so
// that two PodBuggerTools of one namespace never share a container name.
func DebuggerName(tool string) string {
	name := "debugger-" + strings.ReplaceAll(tool, ".", "-")
	if len(name) <= validation.DNS1123LabelMaxLength && !strings.Contains(tool, ".") {
		return name
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(tool))
	suffix := fmt.Sprintf("-%08x", h.Sum32())
	return name[:min(len(name), validation.DNS1123LabelMaxLength-len(suffix))] + suffix
}

// targetContainer is the container whose processes the debugger shares:
// spec.targetContainer, if the pod has it, or else the pod's first
// container; "" if spec.targetContainer names none of the pod's.
func targetContainer(tool *debugv1alpha1.PodBuggerTool, pod *corev1.Pod) string {
	for _, c := range pod.Spec.Containers {
		if tool.Spec.TargetContainer == "" || c.Name == tool.Spec.TargetContainer {
			return c.Name
		}
	}
	return ""
}

func hasEphemeralContainer(pod *corev1.Pod, name string) bool {
	for _, c := range pod.Spec.EphemeralContainers {
		if c.Name == name {
			return true
		}
	}
	return false
}

// updateStatus writes observedGeneration, debuggedPods and the Ready
// condition, only when they changed.
func (r *PodBuggerToolReconciler) updateStatus(ctx context.Context, tool *debugv1alpha1.PodBuggerTool, debugged int32, ready metav1.Condition) error {
	status := tool.Status.DeepCopy()
	status.ObservedGeneration = tool.Generation
	status.DebuggedPods = debugged
	ready.ObservedGeneration = tool.Generation
	meta.SetStatusCondition(&status.Conditions, ready)
	if equality.Semantic.DeepEqual(&tool.Status, status) {
		return nil
	}
	patch := client.MergeFrom(tool.DeepCopy())
	tool.Status = *status
	if err := r.Status().Patch(ctx, tool, patch, client.FieldOwner(ControllerName)); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("updating status: %w", err)
	}
	return nil
}

func (r *PodBuggerToolReconciler) event(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(regarding, related, eventtype, reason, action, note, args...)
	}
}

// toolsForPod maps a pod to the PodBuggerTools of its namespace whose
// selector matches its labels. controller-runtime calls it with both the old
// and the new pod of an update, so a pod that stops matching queues the
// PodBuggerTool too (its count of debugged pods changes).
func (r *PodBuggerToolReconciler) toolsForPod(ctx context.Context, pod *metav1.PartialObjectMetadata) []reconcile.Request {
	var tools debugv1alpha1.PodBuggerToolList
	if err := r.List(ctx, &tools, client.InNamespace(pod.GetNamespace())); err != nil {
		logf.FromContext(ctx).Error(err, "Listing PodBuggerTools for a pod", "pod", pod.GetName())
		return nil
	}
	var reqs []reconcile.Request
	for _, tool := range tools.Items {
		selector, err := metav1.LabelSelectorAsSelector(&tool.Spec.Selector)
		if err != nil || !requiresLabel(&tool.Spec.Selector) || !selector.Matches(labels.Set(pod.GetLabels())) {
			continue
		}
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: tool.Namespace, Name: tool.Name}})
	}
	return reqs
}

// TransformPodMetadata is the transform of PodMetadata's cache: toolsForPod
// reads a pod's namespace, name and labels, so the cache drops its
// managedFields and annotations (kubectl's last-applied-configuration alone
// can weigh kilobytes), for every pod in the cluster. It writes only fields that are set: the informer may hand
// it an object it has already transformed, which others may be reading.
func TransformPodMetadata(in any) (any, error) {
	if obj, err := meta.Accessor(in); err == nil {
		if obj.GetManagedFields() != nil {
			obj.SetManagedFields(nil)
		}
		if obj.GetAnnotations() != nil {
			obj.SetAnnotations(nil)
		}
	}
	return in, nil
}

// SetupWithManager sets up the controller with the Manager: PodBuggerTools,
// and pods, which it does not own, mapped to the PodBuggerTools that match
// them (article 004: "watch pods' events"). The pods come from PodMetadata,
// which it adds to the manager, to start and stop with it.
func (r *PodBuggerToolReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.PodMetadata == nil || r.APIReader == nil {
		return errors.New("PodBuggerToolReconciler needs PodMetadata, to watch pods, and APIReader, to read them")
	}
	if err := mgr.Add(r.PodMetadata); err != nil {
		return err
	}
	pod := &metav1.PartialObjectMetadata{}
	pod.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Pod"))
	return ctrl.NewControllerManagedBy(mgr).
		For(&debugv1alpha1.PodBuggerTool{}).
		WatchesRawSource(source.Kind(r.PodMetadata, pod, handler.TypedEnqueueRequestsFromMapFunc(r.toolsForPod))).
		Named("debug-podbuggertool").
		Complete(r)
}
