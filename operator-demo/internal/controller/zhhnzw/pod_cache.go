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
	corev1 "k8s.io/api/core/v1"
)

// StripPod is the pod cache's transform. Of a cached pod, the manager's
// controllers read its metadata (name, labels, owner, deletion), its phase
// and its Ready condition, and nothing else: the cache keeps those and drops
// the rest, the spec, the other conditions and the containers' statuses,
// which are most of a pod's memory. Nothing writes a cached pod back: pods
// are created from their owner's template and deleted by name.
func StripPod(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	pod.ManagedFields = nil
	var ready []corev1.PodCondition
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			ready = append(ready, c)
		}
	}
	pod.Spec = corev1.PodSpec{}
	pod.Status = corev1.PodStatus{Phase: pod.Status.Phase, Conditions: ready}
	return pod, nil
}
