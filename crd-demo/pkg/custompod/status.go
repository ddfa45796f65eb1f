package custompod

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	zhhnzwv2 "example.com/k8s-demo/crd-demo/pkg/apis/zhhnzw/v2"
)

// Reasons of the Ready condition.
const (
	// ReasonPodsReady: spec.replicas pods exist and are ready (Ready=True).
	ReasonPodsReady = "PodsReady"
	// ReasonPodsNotReady: fewer pods are ready than spec.replicas asks, while
	// they start (Ready=False).
	ReasonPodsNotReady = "PodsNotReady"
	// ReasonScaleFailed: creating or deleting a pod failed (Ready=False).
	ReasonScaleFailed = "ScaleFailed"
)

// updateStatus writes replicas, readyReplicas, podNames and the Ready
// condition, but only if they changed.
func (c *Controller) updateStatus(ctx context.Context, cp *zhhnzwv2.CustomPod, desired int32, pods []*corev1.Pod, scaleErr error) error {
	var names []string // nil when empty, like the status the API server returns
	ready := int32(0)
	for _, pod := range pods {
		names = append(names, pod.Name)
		if isPodReady(pod) {
			ready++
		}
	}
	slices.Sort(names)

	newStatus := cp.Status.DeepCopy()
	newStatus.Replicas = int32(len(names))
	newStatus.ReadyReplicas = ready
	newStatus.PodNames = names
	cond := metav1.Condition{
		Type:               zhhnzwv2.ConditionReady,
		Status:             metav1.ConditionTrue,
		Reason:             ReasonPodsReady,
		Message:            fmt.Sprintf("%d of %d pods ready", ready, desired),
		ObservedGeneration: cp.Generation,
		LastTransitionTime: metav1.NewTime(c.clock.Now()),
	}
	switch {
	case scaleErr != nil:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, ReasonScaleFailed, scaleErr.Error()
	case ready != desired:
		cond.Status, cond.Reason = metav1.ConditionFalse, ReasonPodsNotReady
	}
	meta.SetStatusCondition(&newStatus.Conditions, cond)
	if equality.Semantic.DeepEqual(cp.Status, *newStatus) {
		return nil
	}

	cpCopy := cp.DeepCopy()
	cpCopy.Status = *newStatus
	if _, err := c.customclientset.ZhhnzwV2().CustomPods(cp.Namespace).UpdateStatus(ctx, cpCopy, metav1.UpdateOptions{FieldManager: fieldManager}); err != nil {
		return fmt.Errorf("updating status: %w", err)
	}
	klog.FromContext(ctx).V(4).Info("Updated status", "replicas", newStatus.Replicas, "readyReplicas", newStatus.ReadyReplicas)
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

// isPodFinished says whether a pod's containers have all stopped for good.
func isPodFinished(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}
