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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "example.com/k8s-demo/operator-demo/api/apps/v1alpha1"
)

// createPods creates n pods and returns pods with the new ones added. One
// event names the pods it created, as CustomPod's controller records them.
func (r *PodSetReconciler) createPods(ctx context.Context, ps *appsv1alpha1.PodSet, pods []corev1.Pod, n int) ([]corev1.Pod, error) {
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

// deletePods deletes n pods, the newest first (ties broken by name), and
// returns the pods that are left. One event names the pods it deleted.
func (r *PodSetReconciler) deletePods(ctx context.Context, ps *appsv1alpha1.PodSet, pods []corev1.Pod, n int) ([]corev1.Pod, error) {
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
