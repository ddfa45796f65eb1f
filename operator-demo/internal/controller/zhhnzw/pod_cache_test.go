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
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestStripPod: a stripped pod still says everything the controller reads
// (sortPods, isPodReady, isPodFinished, the owner) and holds nothing else.
func TestStripPod(t *testing.T) {
	now := metav1.Now()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "cp-0", Namespace: "ns", Labels: map[string]string{ManagedByLabel: ControllerName},
			OwnerReferences:   []metav1.OwnerReference{{Kind: "CustomPod", Name: "cp", UID: "uid"}},
			DeletionTimestamp: &now,
			ManagedFields:     []metav1.ManagedFieldsEntry{{Manager: ControllerName}},
		},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "main", Image: "busybox:1.36"}}},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, PodIP: "10.0.0.1",
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue},
			},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "main", Ready: true}},
		},
	}
	out, err := StripPod(pod)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.Pod)
	if got.Name != "cp-0" || got.Labels[ManagedByLabel] != ControllerName || len(got.OwnerReferences) != 1 || got.DeletionTimestamp == nil {
		t.Errorf("metadata lost: %+v", got.ObjectMeta)
	}
	if got.ManagedFields != nil {
		t.Errorf("managedFields kept: %v", got.ManagedFields)
	}
	if !isPodReady(got) || isPodFinished(got) || got.Status.Phase != corev1.PodRunning {
		t.Errorf("phase or Ready condition lost: %+v", got.Status)
	}
	if len(got.Spec.Containers) != 0 || got.Spec.NodeName != "" || got.Status.PodIP != "" ||
		len(got.Status.ContainerStatuses) != 0 || len(got.Status.Conditions) != 1 {
		t.Errorf("kept what no controller reads: spec %+v, status %+v", got.Spec, got.Status)
	}
	// Anything else (a tombstone, say) passes through unchanged.
	if out, _ := StripPod("not a pod"); out != "not a pod" {
		t.Errorf("StripPod(string) = %v", out)
	}
}
