package custompod

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"

	zhhnzwv2 "example.com/k8s-demo/crd-demo/pkg/apis/zhhnzw/v2"
)

// podEventPriority puts a CustomPod whose pods changed ahead of CustomPods
// waiting for their first sync, which are queued at 0. A queue serves equal
// priorities first in, first out, as client-go's work queue serves every key:
// when many CustomPods are created at once, one whose pods became ready would
// wait behind all of them before its status said so (docs/bench.md, "What
// made the controllers fast").
const podEventPriority = 1

// podEventBatchPeriod is how long a pod's event waits before its CustomPod is
// served, so that the events of its other pods join it and one sync writes
// the status they add up to, not one status per pod. Kubernetes' Job
// controller batches its pods' events the same way, for a second.
const podEventBatchPeriod = time.Second

// enqueueCustomPod puts a CustomPod's key on the work queue, at priority,
// after a delay.
func (c *Controller) enqueueCustomPod(logger klog.Logger, obj interface{}, priority int, after time.Duration) {
	objectRef, err := cache.ObjectToName(obj)
	if err != nil {
		utilruntime.HandleErrorWithLogger(logger, err, "Failed to get key of object")
		return
	}
	c.workqueue.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(priority), After: after}, objectRef)
	logger.V(4).Info("Enqueued", "key", objectRef, "priority", priority, "after", after)
}

// handleObject takes any object and, if a CustomPod is its controller (the
// owner reference with controller=true), queues that CustomPod. An object
// without one, or owned by something else, is ignored.
func (c *Controller) handleObject(logger klog.Logger, event string, obj interface{}) {
	object, ok := obj.(metav1.Object)
	if !ok {
		// A tombstone: the informer missed the deletion and only knows the
		// last state it saw.
		tombstone, ok := obj.(cache.DeletedFinalStateUnknown)
		if !ok {
			utilruntime.HandleErrorWithLogger(logger, nil, "Error decoding object, invalid type", "type", fmt.Sprintf("%T", obj))
			return
		}
		object, ok = tombstone.Obj.(metav1.Object)
		if !ok {
			utilruntime.HandleErrorWithLogger(logger, nil, "Error decoding object tombstone, invalid type", "type", fmt.Sprintf("%T", tombstone.Obj))
			return
		}
	}
	logger.V(4).Info("Event handler received "+event, "pod", klog.KObj(object))

	ownerRef := metav1.GetControllerOf(object)
	if ownerRef == nil {
		return
	}
	if schema.FromAPIVersionAndKind(ownerRef.APIVersion, ownerRef.Kind).GroupKind() != zhhnzwv2.Kind("CustomPod") {
		return
	}
	cp, err := c.customPodsLister.CustomPods(object.GetNamespace()).Get(ownerRef.Name)
	if err != nil || cp.UID != ownerRef.UID {
		// The owner is gone (or was replaced by a namesake): the garbage
		// collector takes care of the pod.
		logger.V(4).Info("Ignoring orphaned object", "pod", klog.KObj(object), "owner", ownerRef.Name)
		return
	}
	c.enqueueCustomPod(logger, cp, podEventPriority, c.batchPeriod)
}

// controllerUIDIndex indexes the cached pods by their controller's UID (see
// customPodUID).
const controllerUIDIndex = "controllerUID"

// customPodUID is the controllerUIDIndex: the UID of the CustomPod that
// controls the pod, if one does. A UID, not a name: the pods of an earlier
// CustomPod of the same name are not this one's.
func customPodUID(obj any) ([]string, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, nil
	}
	ref := metav1.GetControllerOf(pod)
	if ref == nil || schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind).GroupKind() != zhhnzwv2.Kind("CustomPod") {
		return nil, nil
	}
	return []string{string(ref.UID)}, nil
}

// ownedPods returns the cached pods cp controls, from the controllerUIDIndex.
func (c *Controller) ownedPods(cp *zhhnzwv2.CustomPod) ([]*corev1.Pod, error) {
	cached, err := c.podsIndexer.ByIndex(controllerUIDIndex, string(cp.UID))
	if err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	pods := make([]*corev1.Pod, len(cached))
	for i, obj := range cached {
		pods[i] = obj.(*corev1.Pod)
	}
	return pods, nil
}
