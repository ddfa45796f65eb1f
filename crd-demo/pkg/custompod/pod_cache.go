package custompod

import (
	corev1 "k8s.io/api/core/v1"
)

// StripPod is the pod informer's transform. Of a cached pod, the controller
// reads its metadata (name, labels, owner, deletion), its phase and its Ready
// condition, and nothing else: the cache keeps those and drops the rest, the
// spec, the other conditions and the containers' statuses, which are most of
// a pod's memory. Nothing writes a cached pod back: pods are created from
// the CustomPod's template and deleted by name.
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
