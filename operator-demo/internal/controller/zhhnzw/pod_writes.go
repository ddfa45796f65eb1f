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
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	zhhnzwv2 "example.com/k8s-demo/operator-demo/api/zhhnzw/v2"
)

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
		if !pod.DeletionTimestamp.IsZero() || isPodFinished(pod) {
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
