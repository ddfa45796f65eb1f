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

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "example.com/k8s-demo/operator-demo/api/apps/v1alpha1"
)

const (
	// ConditionReady is the condition type in status.conditions.
	ConditionReady = "Ready"

	// Reasons of the Ready condition: the same as CustomPod's.
	// ReasonPodsReady: spec.size pods exist and are ready (Ready=True).
	ReasonPodsReady = "PodsReady"
	// ReasonPodsNotReady: fewer pods are ready than spec.size asks, while
	// they start (Ready=False).
	ReasonPodsNotReady = "PodsNotReady"
	// ReasonScaleFailed: creating or deleting a pod failed (Ready=False).
	ReasonScaleFailed = "ScaleFailed"
)

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
