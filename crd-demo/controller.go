package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	samplecrdv1 "example.com/k8s-demo/crd-demo/pkg/apis/samplecrd/v1"
	"example.com/k8s-demo/crd-demo/pkg/backend"
	clientset "example.com/k8s-demo/crd-demo/pkg/client/clientset/versioned"
	informers "example.com/k8s-demo/crd-demo/pkg/client/informers/externalversions/samplecrd/v1"
	listers "example.com/k8s-demo/crd-demo/pkg/client/listers/samplecrd/v1"
)

// finalizerName keeps a deleted Network in the API server until the controller
// has deleted its backend network. See syncHandler for why.
const finalizerName = "samplecrd.k8s.io/backend-network"

// Controller is the controller implementation for Network resources.
type Controller struct {
	networkclientset clientset.Interface // the generated client of our API group
	// networksLister reads Networks from the informer's cache, not from the
	// API server; networksSynced says whether that cache is filled yet.
	networksLister listers.NetworkLister
	networksSynced cache.InformerSynced
	backend        backend.Client // the actual networks: the stand-in for Neutron
	// workqueue decouples the informer, which tells us what changed, from the
	// workers, which act on it: a key is queued once however many events
	// arrive for it, no two workers ever hold the same key, and a key that
	// failed comes back after a growing delay (workers.go).
	workqueue workqueue.TypedRateLimitingInterface[cache.ObjectName]
	recorder  events.EventRecorder // events.go
	clock     clock.PassiveClock   // stamps the conditions; tests replace it
	// recheckInterval: how long after a sync to look at the backend again (0: never).
	recheckInterval time.Duration
}

// NewController returns a new Network controller.
func NewController(ctx context.Context, kubeclientset kubernetes.Interface, networkclientset clientset.Interface,
	networkInformer informers.NetworkInformer, networkBackend backend.Client, recheckInterval time.Duration) *Controller {
	logger := klog.FromContext(ctx)
	controller := &Controller{
		networkclientset: networkclientset,
		networksLister:   networkInformer.Lister(),
		networksSynced:   networkInformer.Informer().HasSynced,
		backend:          networkBackend,
		workqueue:        newWorkqueue(),
		recorder:         newRecorder(ctx, kubeclientset),
		clock:            clock.RealClock{},
		recheckInterval:  recheckInterval,
	}

	logger.Info("Setting up event handlers")
	// The handlers only queue the Network's key (namespace/name), never the
	// object: when a worker gets to it, the cache holds the latest version.
	_, err := networkInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj interface{}) { controller.enqueueNetwork(logger, "Add", obj) },
		UpdateFunc: func(old, new interface{}) {
			// Periodic resync sends an update event for every cached Network,
			// changed or not; an unchanged one has the same ResourceVersion.
			if old.(*samplecrdv1.Network).ResourceVersion == new.(*samplecrdv1.Network).ResourceVersion {
				logger.V(5).Info("Event handler ignored resync", "network", klog.KObj(new.(*samplecrdv1.Network)))
				return
			}
			controller.enqueueNetwork(logger, "Update", new)
		},
		// A deletion the informer missed arrives as a tombstone, unwrapped below.
		DeleteFunc: func(obj interface{}) { controller.enqueueNetwork(logger, "Delete", obj) },
	})
	utilruntime.Must(err) // only fails once the informer is stopped
	return controller
}

// syncHandler compares the desired state, the Network, with the actual state,
// the backend network it made (named "namespace/name"), and brings the second
// in line with the first.
func (c *Controller) syncHandler(ctx context.Context, objectRef cache.ObjectName) error {
	logger := klog.LoggerWithValues(klog.FromContext(ctx), "network", objectRef)
	ctx = klog.NewContext(ctx, logger)

	// 1. Get the Network from the informer's cache. Gone means done: the
	// finalizer (step 3) holds a deleted Network until its backend network is.
	network, err := c.networksLister.Networks(objectRef.Namespace).Get(objectRef.Name)
	if apierrors.IsNotFound(err) {
		logger.V(4).Info("Network no longer exists; nothing to do")
		return nil
	}
	if err != nil {
		return err
	}
	backendName := objectRef.String()

	// 2. Deleted: delete the backend network, then the finalizer (finalize).
	if network.DeletionTimestamp != nil {
		return c.finalize(ctx, network, backendName)
	}

	// 3. Add the finalizer before the backend network exists. NEVER modify
	// an object from the cache: it is shared with every reader. Change a copy.
	if !slices.Contains(network.Finalizers, finalizerName) {
		networkCopy := network.DeepCopy()
		networkCopy.Finalizers = append(networkCopy.Finalizers, finalizerName)
		network, err = c.networkclientset.SamplecrdV1().Networks(network.Namespace).Update(ctx, networkCopy, metav1.UpdateOptions{FieldManager: fieldManager})
		if err != nil {
			return fmt.Errorf("adding finalizer: %w", err)
		}
		logger.V(4).Info("Added finalizer", "finalizer", finalizerName)
	}

	// 4. Create or update the backend network to match the spec (syncBackend).
	networkID, err := c.syncBackend(ctx, network, backendName)
	if err != nil {
		return c.backendFailed(ctx, network, err)
	}

	// 5. Write the status: the backend network's ID, Ready=True (updateStatus).
	if err := c.updateStatus(ctx, network, networkID, metav1.ConditionTrue, ReasonSynced, "The backend network matches the spec"); err != nil {
		return err
	}

	// 6. Look again later: the backend cannot be watched, and a resync only
	// replays the cache; a backend network changed behind our back is polled.
	if c.recheckInterval > 0 {
		c.workqueue.AddAfter(objectRef, c.recheckInterval)
	}
	return nil
}

// enqueueNetwork puts the key of a Network (or of its tombstone) on the queue.
func (c *Controller) enqueueNetwork(logger klog.Logger, event string, obj interface{}) {
	objectRef, err := cache.DeletionHandlingObjectToName(obj)
	if err != nil {
		utilruntime.HandleErrorWithLogger(logger, err, "Failed to get key of object")
		return
	}
	logger.V(4).Info("Event handler received "+event, "network", objectRef)
	c.workqueue.Add(objectRef)
	logger.V(4).Info("Enqueued", "key", objectRef)
}
