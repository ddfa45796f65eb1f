package custompod

import (
	"context"
	"errors"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	zhhnzwv2 "example.com/k8s-demo/crd-demo/pkg/apis/zhhnzw/v2"
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
// them the controller's most frequent write (docs/bench.md).
func (c *Controller) createPods(ctx context.Context, cp *zhhnzwv2.CustomPod, active []*corev1.Pod, names []string) ([]*corev1.Pod, error) {
	var err error
	var made []string // the pods this call created, named in one event
	for batch := 1; len(names) > 0 && err == nil; batch *= 2 {
		n := min(batch, len(names))
		created := make([]*corev1.Pod, n)
		isNew := make([]bool, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i, name := range names[:n] {
			wg.Go(func() { created[i], isNew[i], errs[i] = c.createPod(ctx, cp, name) })
		}
		wg.Wait()
		for i, pod := range created {
			if pod != nil {
				active = append(active, pod)
			}
			if isNew[i] {
				made = append(made, pod.Name)
			}
		}
		err = errors.Join(errs...)
		names = names[n:]
	}
	if len(made) > 0 {
		c.recorder.Eventf(cp, nil, corev1.EventTypeNormal, ReasonSuccessfulCreate, "Create", "%s", podsNote("Created", made))
	}
	return active, err
}

// createPod creates cp's pod called name. It returns the pod, or nil for a
// pod of that name that is cp's but terminating or finished; isNew says
// whether this call made it.
func (c *Controller) createPod(ctx context.Context, cp *zhhnzwv2.CustomPod, name string) (pod *corev1.Pod, isNew bool, err error) {
	logger := klog.FromContext(ctx)
	pods := c.kubeclientset.CoreV1().Pods(cp.Namespace)
	pod, err = pods.Create(ctx, newPod(cp, name), metav1.CreateOptions{FieldManager: fieldManager})
	if apierrors.IsAlreadyExists(err) {
		// The cache has not seen the pod yet, or the name is taken by a pod
		// the informer does not hold. The API server knows which.
		if pod, err = pods.Get(ctx, name, metav1.GetOptions{}); err != nil {
			return nil, false, fmt.Errorf("reading pod %s: %w", name, err)
		}
		if !metav1.IsControlledBy(pod, cp) {
			err := fmt.Errorf("creating pod %s: the name is taken by a pod this CustomPod does not control", name)
			c.recorder.Eventf(cp, nil, corev1.EventTypeWarning, ReasonFailedCreate, "Create", "Error creating pod: %v", err)
			return nil, false, err
		}
		logger.V(2).Info("Pod already exists: the cache is behind", "pod", klog.KObj(pod))
		if pod.DeletionTimestamp != nil || isPodFinished(pod) {
			return nil, false, nil
		}
		return pod, false, nil
	}
	if err != nil {
		c.recorder.Eventf(cp, nil, corev1.EventTypeWarning, ReasonFailedCreate, "Create", "Error creating pod: %v", err)
		return nil, false, fmt.Errorf("creating pod: %w", err)
	}
	logger.Info("Created pod", "pod", klog.KObj(pod))
	return pod, true, nil
}

// deletePods deletes the pods, in order, and names those it deleted in one
// event. It stops at the first failure. A pod deleted twice (the cache had
// not seen the first delete) is NotFound, which is fine.
func (c *Controller) deletePods(ctx context.Context, cp *zhhnzwv2.CustomPod, pods []*corev1.Pod) error {
	logger := klog.FromContext(ctx)
	var failed error
	var deleted []string
	for _, pod := range pods {
		err := c.kubeclientset.CoreV1().Pods(cp.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) {
			// Deleted already, by this controller from a stale cache or by
			// someone else: gone, as wanted, so no "Deleted pod" log line,
			// and not named in the event.
			logger.V(2).Info("Pod already gone", "pod", klog.KObj(pod))
		} else if err != nil {
			c.recorder.Eventf(cp, nil, corev1.EventTypeWarning, ReasonFailedDelete, "Delete", "Error deleting pod %s: %v", pod.Name, err)
			failed = fmt.Errorf("deleting pod %s: %w", pod.Name, err)
			break
		} else {
			logger.Info("Deleted pod", "pod", klog.KObj(pod))
			deleted = append(deleted, pod.Name)
		}
	}
	if len(deleted) > 0 {
		c.recorder.Eventf(cp, nil, corev1.EventTypeNormal, ReasonSuccessfulDelete, "Delete", "%s", podsNote("Deleted", deleted))
	}
	return failed
}
