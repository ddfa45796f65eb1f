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
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	zhhnzwv2 "example.com/k8s-demo/operator-demo/api/zhhnzw/v2"
	zhhnzwv2ac "example.com/k8s-demo/operator-demo/api/zhhnzw/v2/applyconfiguration/zhhnzw/v2"
)

const (
	// ConditionReady is the condition type in status.conditions.
	ConditionReady = "Ready"

	// ReasonPodsReady: spec.replicas pods exist and are ready (Ready=True).
	ReasonPodsReady = "PodsReady"
	// ReasonPodsNotReady: fewer pods are ready than spec.replicas asks, while
	// they start (Ready=False).
	ReasonPodsNotReady = "PodsNotReady"
	// ReasonScaleFailed: creating or deleting a pod failed (Ready=False).
	ReasonScaleFailed = "ScaleFailed"
)

// updateStatus writes replicas, readyReplicas, podNames and the Ready
// condition, and only when they changed, so that a reconcile with nothing to
// do writes nothing. It writes them by server-side apply, as their field
// manager: the apply names only these fields, so whatever another manager
// owns in the status (a condition of another type) is left as it is.
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
	// SetStatusCondition keeps lastTransitionTime while the status stays.
	meta.SetStatusCondition(&status.Conditions, ready)

	// Semantic equality treats a nil and an empty podNames alike. An apply
	// that changes nothing is still a request: skip it.
	if equality.Semantic.DeepEqual(&cp.Status, status) {
		return nil
	}
	ready = *meta.FindStatusCondition(status.Conditions, ConditionReady)
	ac := zhhnzwv2ac.CustomPod(cp.Name, cp.Namespace).
		WithStatus(zhhnzwv2ac.CustomPodStatus().
			WithReplicas(status.Replicas).
			WithReadyReplicas(status.ReadyReplicas).
			WithPodNames(names...).
			WithConditions(metav1ac.Condition().
				WithType(ready.Type).
				WithStatus(ready.Status).
				WithReason(ready.Reason).
				WithMessage(ready.Message).
				WithObservedGeneration(ready.ObservedGeneration).
				WithLastTransitionTime(ready.LastTransitionTime)))
	// ForceOwnership: these fields are this controller's to say, from the
	// pods it counts. Should another manager have set one of them (kubectl
	// edit --subresource=status, or this controller's own merge patches
	// before it applied), the apply takes the field over rather than fail
	// with a conflict that every retry would hit again.
	err := r.Status().Apply(ctx, ac, client.FieldOwner(ControllerName), client.ForceOwnership)
	if client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("applying status: %w", err)
	}
	cp.Status = *status
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
