// Package custompod is the CustomPod controller written with client-go alone:
// the same job as the articles' operator-sdk and kubebuilder Reconcile, with
// the informers, work queue and owner tracking those frameworks hide in plain
// sight.
package custompod

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"

	zhhnzwv2 "example.com/k8s-demo/crd-demo/pkg/apis/zhhnzw/v2"
	clientset "example.com/k8s-demo/crd-demo/pkg/client/clientset/versioned"
	informers "example.com/k8s-demo/crd-demo/pkg/client/informers/externalversions/zhhnzw/v2"
	listers "example.com/k8s-demo/crd-demo/pkg/client/listers/zhhnzw/v2"
)

// Controller is the controller implementation for CustomPod resources.
type Controller struct {
	kubeclientset    kubernetes.Interface
	customclientset  clientset.Interface
	customPodsLister listers.CustomPodLister
	customPodsSynced cache.InformerSynced
	podsIndexer      cache.Indexer
	podsSynced       cache.InformerSynced

	workqueue priorityqueue.PriorityQueue[cache.ObjectName] // see newWorkqueue
	// batchPeriod is podEventBatchPeriod; tests shorten it.
	batchPeriod time.Duration
	recorder    events.EventRecorder
	clock       clock.PassiveClock
}

// NewController returns a new CustomPod controller. podInformer should only
// hold pods labelled LabelCustomPod (see cmd/custompod-controller): caching
// every pod of a big cluster costs memory, for pods the controller ignores.
func NewController(ctx context.Context,
	kubeclientset kubernetes.Interface, customclientset clientset.Interface, eventclientset kubernetes.Interface,
	podInformer coreinformers.PodInformer, customPodInformer informers.CustomPodInformer) *Controller {
	logger := klog.FromContext(ctx)
	controller := &Controller{
		kubeclientset:    kubeclientset,
		customclientset:  customclientset,
		customPodsLister: customPodInformer.Lister(),
		customPodsSynced: customPodInformer.Informer().HasSynced,
		podsIndexer:      podInformer.Informer().GetIndexer(),
		podsSynced:       podInformer.Informer().HasSynced,
		workqueue:        newWorkqueue(),
		batchPeriod:      podEventBatchPeriod,
		recorder:         newRecorder(ctx, eventclientset),
		clock:            clock.RealClock{},
	}

	// Index the cached pods by their CustomPod's UID, as ReplicaSet's
	// controller does: a sync reads its pods there, not from every cached pod.
	utilruntime.Must(podInformer.Informer().AddIndexers(cache.Indexers{controllerUIDIndex: customPodUID}))

	logger.Info("Setting up event handlers")
	// A CustomPod created, or its spec changed (not its status: docs/bench.md,
	// "What made the controllers fast"): sync it. Deleted: the GC takes its pods.
	_, err := customPodInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj interface{}) {
			logger.V(4).Info("Event handler received Add", "customPod", klog.KObj(obj.(*zhhnzwv2.CustomPod)))
			controller.enqueueCustomPod(logger, obj, 0, 0)
		},
		UpdateFunc: func(old, new interface{}) {
			oldCP, newCP := old.(*zhhnzwv2.CustomPod), new.(*zhhnzwv2.CustomPod)
			if oldCP.Generation == newCP.Generation {
				return // its status, its metadata, or a periodic resync
			}
			logger.V(4).Info("Event handler received Update", "customPod", klog.KObj(newCP), "generation", newCP.Generation)
			controller.enqueueCustomPod(logger, new, 0, 0)
		},
	})
	utilruntime.Must(err)

	// A pod changed: sync the CustomPod that owns it (handleObject). This is
	// how the controller learns that a pod died or was deleted, and replaces it.
	_, err = podInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj interface{}) { controller.handleObject(logger, "Add", obj) },
		UpdateFunc: func(old, new interface{}) {
			if old.(*corev1.Pod).ResourceVersion == new.(*corev1.Pod).ResourceVersion {
				return // periodic resync: nothing changed
			}
			controller.handleObject(logger, "Update", new)
		},
		DeleteFunc: func(obj interface{}) { controller.handleObject(logger, "Delete", obj) },
	})
	utilruntime.Must(err)
	return controller
}

// syncHandler makes a CustomPod's pods match spec.replicas, then writes the
// status.
func (c *Controller) syncHandler(ctx context.Context, objectRef cache.ObjectName) error {
	logger := klog.LoggerWithValues(klog.FromContext(ctx), "customPod", objectRef)
	ctx = klog.NewContext(ctx, logger)

	// 1. Load the CustomPod from the informer's cache.
	cp, err := c.customPodsLister.CustomPods(objectRef.Namespace).Get(objectRef.Name)
	if err != nil {
		if apierrors.IsNotFound(err) {
			logger.V(4).Info("CustomPod no longer exists; the garbage collector deletes its pods")
			return nil
		}
		return err
	}
	if cp.DeletionTimestamp != nil {
		return nil // being deleted: do not create pods the garbage collector must delete again
	}
	desired := int32(1) // the CRD's default, for objects the schema did not default
	if cp.Spec.Replicas != nil {
		desired = *cp.Spec.Replicas
	}

	// 2. List the pods it owns, from the pod informer's index.
	pods, err := c.ownedPods(cp)
	if err != nil {
		return err
	}

	// 3. Compare them with spec.replicas: sortPods. Pod i is named
	// <CustomPod>-<i> because the cache lags behind this controller's writes:
	// a pod created twice is refused the second time (AlreadyExists), not made
	// twice. A stale cache costs a refused request, never a pod too many.
	active, missing, surplus := sortPods(cp, pods, desired)

	// 4. Create the missing pods and delete the surplus: createPods, deletePods.
	active, scaleErr := c.createPods(ctx, cp, active, missing)
	if scaleErr == nil && len(surplus) > 0 {
		logger.V(2).Info("Scaling down", "pods", len(active)+len(surplus), "replicas", desired)
		scaleErr = c.deletePods(ctx, cp, surplus)
	}

	// 5. Write the status: updateStatus. A failed scale is retried with backoff.
	if err := c.updateStatus(ctx, cp, desired, active, scaleErr); err != nil {
		return err
	}
	return scaleErr
}
