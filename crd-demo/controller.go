package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	metav1apply "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	samplecrdv1 "example.com/k8s-demo/crd-demo/pkg/apis/samplecrd/v1"
	"example.com/k8s-demo/crd-demo/pkg/backend"
	samplecrdv1apply "example.com/k8s-demo/crd-demo/pkg/client/applyconfiguration/samplecrd/v1"
	clientset "example.com/k8s-demo/crd-demo/pkg/client/clientset/versioned"
	samplecrdscheme "example.com/k8s-demo/crd-demo/pkg/client/clientset/versioned/scheme"
	informers "example.com/k8s-demo/crd-demo/pkg/client/informers/externalversions/samplecrd/v1"
	listers "example.com/k8s-demo/crd-demo/pkg/client/listers/samplecrd/v1"
)

const controllerAgentName = "network-controller"

// fieldManager names the controller in the managedFields of every object it
// writes: `kubectl get network -o yaml --show-managed-fields` shows which
// fields are its own, and server-side apply lets it change only those.
const fieldManager = controllerAgentName

// finalizerName keeps a deleted Network in the API server until the controller
// has deleted its backend network. See syncHandler for why.
const finalizerName = "samplecrd.k8s.io/backend-network"

// Reasons, for events and for the Ready condition.
const (
	// ReasonSynced: the backend network matches the spec.
	ReasonSynced = "Synced"
	// ReasonCreated, ReasonUpdated, ReasonDeleted: the controller changed the backend network.
	ReasonCreated = "Created"
	ReasonUpdated = "Updated"
	ReasonDeleted = "Deleted"
	// ReasonBackendError: the backend failed or refused; the controller retries.
	ReasonBackendError = "BackendError"
	// ReasonBackendNetworkConflict: the backend network of the Network's name
	// is not this Network's; the controller never changes or deletes it.
	ReasonBackendNetworkConflict = "BackendNetworkConflict"
)

func init() {
	// Add our types to the scheme the event recorder uses, so that it can
	// turn a *Network into the object reference an Event points at.
	utilruntime.Must(samplecrdscheme.AddToScheme(scheme.Scheme))
}

// Controller is the controller implementation for Network resources.
type Controller struct {
	// networkclientset is a clientset for our own API group.
	networkclientset clientset.Interface

	// networksLister reads Networks from the informer's cache, not from the
	// API server; networksSynced says whether that cache is filled yet.
	networksLister listers.NetworkLister
	networksSynced cache.InformerSynced

	// backend holds the actual networks: the stand-in for OpenStack Neutron.
	backend backend.Client

	// workqueue is a rate limited work queue. It decouples the informer, which
	// tells us what changed, from the workers, which act on it: a key is
	// queued once however many events arrive for it before a worker takes it,
	// no two workers ever hold the same key, and a key that failed comes back
	// after a growing delay.
	workqueue workqueue.TypedRateLimitingInterface[cache.ObjectName]
	// recorder records Events on Networks, for `kubectl describe network`.
	recorder record.EventRecorder
	// clock stamps the conditions' lastTransitionTime; tests replace it.
	clock clock.PassiveClock
	// recheckInterval is how long after a successful sync the controller looks
	// at the backend again. 0 turns that off.
	recheckInterval time.Duration
}

// NewController returns a new Network controller.
func NewController(
	ctx context.Context,
	kubeclientset kubernetes.Interface,
	networkclientset clientset.Interface,
	networkInformer informers.NetworkInformer,
	networkBackend backend.Client,
	recheckInterval time.Duration) *Controller {
	logger := klog.FromContext(ctx)

	logger.V(4).Info("Creating event broadcaster")
	eventBroadcaster := record.NewBroadcaster(record.WithContext(ctx))
	eventBroadcaster.StartStructuredLogging(0)
	eventBroadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kubeclientset.CoreV1().Events("")})
	recorder := eventBroadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: controllerAgentName})

	// Retry a failed key after 5ms, 10ms, 20ms, ... but never more than a
	// minute apart, so that the demo recovers soon after the backend does.
	// Keys are retried forever: giving up would leave a deleted Network
	// stuck on its finalizer.
	ratelimiter := workqueue.NewTypedItemExponentialFailureRateLimiter[cache.ObjectName](5*time.Millisecond, time.Minute)

	controller := &Controller{
		networkclientset: networkclientset,
		networksLister:   networkInformer.Lister(),
		networksSynced:   networkInformer.Informer().HasSynced,
		backend:          networkBackend,
		workqueue: workqueue.NewTypedRateLimitingQueueWithConfig(
			ratelimiter,
			workqueue.TypedRateLimitingQueueConfig[cache.ObjectName]{Name: "Networks"},
		),
		recorder:        recorder,
		clock:           clock.RealClock{},
		recheckInterval: recheckInterval,
	}

	logger.Info("Setting up event handlers")
	// Each handler has a goroutine of its own behind an unbounded buffer;
	// kept quick, it only puts the Network's key (namespace/name) on the queue.
	_, err := networkInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj interface{}) {
			logger.V(4).Info("Event handler received Add", "network", klog.KObj(obj.(*samplecrdv1.Network)))
			controller.enqueueNetwork(logger, obj)
		},
		UpdateFunc: func(old, new interface{}) {
			oldNetwork := old.(*samplecrdv1.Network)
			newNetwork := new.(*samplecrdv1.Network)
			if oldNetwork.ResourceVersion == newNetwork.ResourceVersion {
				// Periodic resync sends an update event for every Network
				// in the cache, changed or not. Two versions of the same
				// Network always have different ResourceVersions, so
				// equal ones mean nothing changed.
				logger.V(5).Info("Event handler ignored resync", "network", klog.KObj(newNetwork))
				return
			}
			logger.V(4).Info("Event handler received Update", "network", klog.KObj(newNetwork), "resourceVersion", newNetwork.ResourceVersion)
			controller.enqueueNetwork(logger, new)
		},
		DeleteFunc: func(obj interface{}) {
			controller.enqueueNetworkForDelete(logger, obj)
		},
	})
	utilruntime.Must(err) // only fails once the informer is stopped

	return controller
}

// Run waits for the informer caches to sync, then starts workers goroutines
// that process the work queue, until ctx is cancelled. It returns once the
// workers have finished the item in hand.
func (c *Controller) Run(ctx context.Context, workers int) error {
	defer utilruntime.HandleCrashWithContext(ctx)
	logger := klog.FromContext(ctx)

	logger.Info("Starting Network controller")

	// Wait for the caches to be synced before starting workers: until the
	// informer has listed every Network, a lister miss proves nothing.
	logger.Info("Waiting for informer caches to sync")
	if ok := cache.WaitForCacheSync(ctx.Done(), c.networksSynced); !ok {
		c.workqueue.ShutDown()
		return fmt.Errorf("failed to wait for caches to sync")
	}

	logger.Info("Starting workers", "count", workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() { wait.UntilWithContext(ctx, c.runWorker, time.Second) })
	}
	logger.Info("Started workers")

	<-ctx.Done()
	logger.Info("Shutting down workers")
	c.workqueue.ShutDown() // makes Get return shutdown=true to idle workers
	wg.Wait()
	return nil
}

// runWorker is a long-running function that will continually call the
// processNextWorkItem function in order to read and process a message on the
// workqueue.
func (c *Controller) runWorker(ctx context.Context) {
	for c.processNextWorkItem(ctx) {
	}
}

// processNextWorkItem will read a single work item off the workqueue and
// attempt to process it, by calling the syncHandler.
func (c *Controller) processNextWorkItem(ctx context.Context) bool {
	objRef, shutdown := c.workqueue.Get()
	if shutdown {
		return false
	}
	logger := klog.FromContext(ctx)
	logger.V(4).Info("Dequeued", "key", objRef)

	// Done tells the queue we have finished with this key: until then, the
	// queue holds back new events for it instead of handing it to another
	// worker, and queues it again once we are done.
	defer c.workqueue.Done(objRef)

	start := c.clock.Now()
	logger.V(4).Info("Sync started", "key", objRef)
	err := c.syncHandler(ctx, objRef)
	logger.V(4).Info("Sync finished", "key", objRef, "duration", c.clock.Since(start), "err", err)
	if err == nil {
		// Forget resets the key's backoff, so the next failure starts again at 5ms.
		c.workqueue.Forget(objRef)
		return true
	}
	// Put the key back with a delay that doubles with every failure in a row.
	utilruntime.HandleErrorWithContext(ctx, err, "Error syncing; requeuing for later retry", "key", objRef, "requeues", c.workqueue.NumRequeues(objRef))
	c.workqueue.AddRateLimited(objRef)
	return true
}

// syncHandler compares the desired state, the Network, with the actual state,
// the backend network it made (named "namespace/name"), and brings the second
// in line with the first.
func (c *Controller) syncHandler(ctx context.Context, objectRef cache.ObjectName) error {
	logger := klog.LoggerWithValues(klog.FromContext(ctx), "network", objectRef)
	ctx = klog.NewContext(ctx, logger)

	// Get the Network from the informer's cache.
	network, err := c.networksLister.Networks(objectRef.Namespace).Get(objectRef.Name)
	if err != nil {
		if apierrors.IsNotFound(err) {
			// Deleting the backend network here would miss every Network
			// deleted while the controller was down: no event, no key. The
			// finalizer below closes that gap: the API server keeps a
			// deleting Network until we have removed the finalizer, which we
			// do only after the backend network is deleted. So a Network
			// that is gone from the cache has nothing left to clean up.
			logger.V(4).Info("Network no longer exists; nothing to do")
			return nil
		}
		return err
	}
	backendName := objectRef.String()

	// A deleted Network with finalizers is not removed: the API server sets
	// deletionTimestamp and waits for the finalizers to go.
	if network.DeletionTimestamp != nil {
		return c.finalize(ctx, network, backendName)
	}

	// Add the finalizer before the backend network exists, so that there is
	// never a backend network whose Network can vanish unseen.
	if !slices.Contains(network.Finalizers, finalizerName) {
		// NEVER modify objects from the cache: it is shared with every other
		// reader. Change a deep copy.
		networkCopy := network.DeepCopy()
		networkCopy.Finalizers = append(networkCopy.Finalizers, finalizerName)
		network, err = c.networkclientset.SamplecrdV1().Networks(network.Namespace).Update(ctx, networkCopy, metav1.UpdateOptions{FieldManager: fieldManager})
		if err != nil {
			return fmt.Errorf("adding finalizer: %w", err)
		}
		logger.V(4).Info("Added finalizer", "finalizer", finalizerName)
	}

	networkID, err := c.syncBackend(ctx, network, backendName)
	if err != nil {
		return c.backendFailed(ctx, network, err)
	}
	if err := c.updateStatus(ctx, network, networkID, metav1.ConditionTrue, ReasonSynced, "The backend network matches the spec"); err != nil {
		return err
	}

	// Informer resync replays the cache: it cannot notice a backend network
	// changed or deleted behind our back, and the ResourceVersion check above
	// filters it out anyway. The backend cannot be watched, so poll it.
	if c.recheckInterval > 0 {
		c.workqueue.AddAfter(objectRef, c.recheckInterval)
	}
	return nil
}

// syncBackend creates the Network's backend network if it has none, updates
// it if its cidr or gateway differ from the spec, and returns its ID. A
// backend network of the same name that is not this Network's is a
// *conflictError, and is left as it is.
func (c *Controller) syncBackend(ctx context.Context, network *samplecrdv1.Network, name string) (string, error) {
	logger := klog.FromContext(ctx)

	actual, err := c.findBackendNetwork(ctx, network, name)
	switch {
	case errors.Is(err, backend.ErrNotFound):
		// The description marks the network as this Network's: the ID is
		// known only once Create returns, and if the controller stops before
		// the status records it, the next sync finds the network by name and
		// knows it by its description.
		created, err := c.backend.Create(ctx, backend.Network{
			Name: name, CIDR: network.Spec.Cidr, GatewayIP: network.Spec.Gateway, Description: string(network.UID),
		})
		if err != nil {
			return "", fmt.Errorf("creating backend network: %w", err)
		}
		logger.Info("Created backend network", "id", created.ID, "cidr", created.CIDR, "gateway", created.GatewayIP)
		c.recorder.Eventf(network, corev1.EventTypeNormal, ReasonCreated, "Created backend network %s", created.ID)
		return created.ID, nil
	case err != nil:
		return "", err
	case actual.CIDR != network.Spec.Cidr || actual.GatewayIP != network.Spec.Gateway:
		updated := actual
		updated.CIDR, updated.GatewayIP = network.Spec.Cidr, network.Spec.Gateway
		if _, err := c.backend.Update(ctx, updated); err != nil {
			return "", fmt.Errorf("updating backend network %s: %w", actual.ID, err)
		}
		logger.Info("Updated backend network", "id", actual.ID, "cidr", updated.CIDR, "gateway", updated.GatewayIP)
		c.recorder.Eventf(network, corev1.EventTypeNormal, ReasonUpdated,
			"Updated backend network %s: cidr %s → %s, gateway %s → %s",
			actual.ID, actual.CIDR, updated.CIDR, actual.GatewayIP, updated.GatewayIP)
	default:
		logger.V(4).Info("Backend network is up to date", "id", actual.ID)
	}
	return actual.ID, nil
}

// findBackendNetwork returns the Network's backend network: the one whose ID
// the status records, or else the one named name, since a controller stopped
// between Create and the status write has made one and not recorded it. It
// returns an error wrapping backend.ErrNotFound if there is none, and a
// *conflictError if the network found is not this Network's.
//
// Names do not prove ownership: anyone may have made a network of that name
// before the Network existed, or a Network of the same name deleted earlier
// may have left one behind. Only the description written at Create does.
func (c *Controller) findBackendNetwork(ctx context.Context, network *samplecrdv1.Network, name string) (backend.Network, error) {
	if id := network.Status.NetworkID; id != "" {
		actual, err := c.backend.Get(ctx, id)
		switch {
		case err == nil:
			return actual, checkOwner(network, actual)
		case !errors.Is(err, backend.ErrNotFound):
			return backend.Network{}, fmt.Errorf("getting backend network %s: %w", id, err)
		}
		// Deleted behind the controller's back: look for it by name, as for
		// a Network that has none recorded; if there is none, make it again.
		klog.FromContext(ctx).Info("Backend network in the status is gone", "id", id)
	}
	actual, err := backend.FindByName(ctx, c.backend, name)
	if errors.Is(err, backend.ErrNotFound) {
		return backend.Network{}, err
	}
	if err != nil {
		return backend.Network{}, fmt.Errorf("looking up backend network: %w", err)
	}
	return actual, checkOwner(network, actual)
}

// checkOwner returns a *conflictError if actual's description is not the
// Network's UID.
func checkOwner(network *samplecrdv1.Network, actual backend.Network) error {
	if actual.Description != string(network.UID) {
		return &conflictError{backendNetwork: actual, uid: network.UID}
	}
	return nil
}

// conflictError is a backend network that the controller found where the
// Network's would be, and that is not the Network's.
type conflictError struct {
	backendNetwork backend.Network
	uid            types.UID
}

func (e *conflictError) Error() string {
	owner := "no owner"
	if e.backendNetwork.Description != "" {
		owner = fmt.Sprintf("owner %q", e.backendNetwork.Description)
	}
	return fmt.Sprintf("backend network %s named %q has %s, not this Network (UID %s); it is left as it is",
		e.backendNetwork.ID, e.backendNetwork.Name, owner, e.uid)
}

// finalize deletes the backend network of a deleted Network, then removes
// the finalizer, which lets the API server remove the Network. A backend
// network that is not the Network's is left, and the Network goes all the same.
func (c *Controller) finalize(ctx context.Context, network *samplecrdv1.Network, name string) error {
	logger := klog.FromContext(ctx)
	if !slices.Contains(network.Finalizers, finalizerName) {
		return nil // done already; other finalizers hold the Network
	}

	actual, err := c.findBackendNetwork(ctx, network, name)
	var conflict *conflictError
	switch {
	case errors.Is(err, backend.ErrNotFound):
		logger.V(4).Info("Backend network already gone")
	case errors.As(err, &conflict):
		logger.Info("Not deleting a backend network that is not this Network's", "id", actual.ID, "owner", actual.Description)
		c.recorder.Event(network, corev1.EventTypeWarning, ReasonBackendNetworkConflict, err.Error())
	case err != nil:
		return c.backendFailed(ctx, network, err)
	default:
		if err := c.backend.Delete(ctx, actual.ID); err != nil && !errors.Is(err, backend.ErrNotFound) {
			return c.backendFailed(ctx, network, fmt.Errorf("deleting backend network %s: %w", actual.ID, err))
		}
		logger.Info("Deleted backend network", "id", actual.ID)
		c.recorder.Eventf(network, corev1.EventTypeNormal, ReasonDeleted, "Deleted backend network %s", actual.ID)
	}

	networkCopy := network.DeepCopy()
	networkCopy.Finalizers = slices.DeleteFunc(networkCopy.Finalizers, func(f string) bool { return f == finalizerName })
	if _, err := c.networkclientset.SamplecrdV1().Networks(network.Namespace).Update(ctx, networkCopy, metav1.UpdateOptions{FieldManager: fieldManager}); err != nil {
		return fmt.Errorf("removing finalizer: %w", err)
	}
	logger.V(4).Info("Removed finalizer", "finalizer", finalizerName)
	return nil
}

// backendFailed reports a backend error or a conflict on the Network, as a
// Warning event and as Ready=False, and returns it so that the key is retried
// with backoff: the backend cannot be watched, so a retry is how the
// controller sees the backend come back, or the conflicting network go.
func (c *Controller) backendFailed(ctx context.Context, network *samplecrdv1.Network, err error) error {
	reason, networkID := ReasonBackendError, network.Status.NetworkID
	var conflict *conflictError
	if errors.As(err, &conflict) {
		// The recorded ID, if any, names no network of this Network's.
		reason, networkID = ReasonBackendNetworkConflict, ""
	}
	c.recorder.Event(network, corev1.EventTypeWarning, reason, err.Error())
	if statusErr := c.updateStatus(ctx, network, networkID, metav1.ConditionFalse, reason, err.Error()); statusErr != nil {
		klog.FromContext(ctx).Error(statusErr, "Could not report the backend error in the status")
	}
	return err
}

// updateStatus sets the Ready condition, networkID and observedGeneration,
// and writes the status only if that changed it: a write per sync would wake
// every watcher of Networks, this controller included, for nothing.
func (c *Controller) updateStatus(ctx context.Context, network *samplecrdv1.Network, networkID string, status metav1.ConditionStatus, reason, message string) error {
	newStatus := network.Status.DeepCopy()
	newStatus.ObservedGeneration = network.Generation
	newStatus.NetworkID = networkID
	// SetStatusCondition keeps lastTransitionTime when the status stays the same.
	meta.SetStatusCondition(&newStatus.Conditions, metav1.Condition{
		Type:               samplecrdv1.ConditionReady,
		Status:             status,
		Reason:             reason,
		Message:            message,
		ObservedGeneration: network.Generation,
		LastTransitionTime: metav1.NewTime(c.clock.Now()),
	})
	if equality.Semantic.DeepEqual(network.Status, *newStatus) {
		return nil
	}

	// Server-side apply sends only the fields this controller sets, and the
	// API server records them as fieldManager's: a field left out that it
	// set before is removed (networkID, after a conflict), and fields others
	// set, such as another condition type, are kept. UpdateStatus would send
	// the whole status as the cache last saw it. Force: the status is this
	// controller's to write, even over a field someone else changed by hand.
	// The UID makes the apply fail if the Network was replaced by a namesake.
	ready := meta.FindStatusCondition(newStatus.Conditions, samplecrdv1.ConditionReady)
	statusApply := samplecrdv1apply.NetworkStatus().
		WithObservedGeneration(newStatus.ObservedGeneration).
		WithConditions(metav1apply.Condition().
			WithType(ready.Type).
			WithStatus(ready.Status).
			WithReason(ready.Reason).
			WithMessage(ready.Message).
			WithObservedGeneration(ready.ObservedGeneration).
			WithLastTransitionTime(ready.LastTransitionTime))
	if networkID != "" {
		statusApply.WithNetworkID(networkID)
	}
	apply := samplecrdv1apply.Network(network.Name, network.Namespace).WithUID(network.UID).WithStatus(statusApply)
	_, err := c.networkclientset.SamplecrdV1().Networks(network.Namespace).ApplyStatus(ctx, apply,
		metav1.ApplyOptions{FieldManager: fieldManager, Force: true})
	if err != nil {
		return fmt.Errorf("applying status: %w", err)
	}
	klog.FromContext(ctx).V(4).Info("Applied status", "ready", status, "reason", reason, "networkID", networkID)
	return nil
}

// enqueueNetwork takes a Network resource and puts its key on the work queue.
// Only the key is queued, never the object: by the time a worker gets to it,
// the cache holds the latest version.
func (c *Controller) enqueueNetwork(logger klog.Logger, obj interface{}) {
	objectRef, err := cache.ObjectToName(obj)
	if err != nil {
		utilruntime.HandleErrorWithLogger(logger, err, "Failed to get key of object")
		return
	}
	c.workqueue.Add(objectRef)
	logger.V(4).Info("Enqueued", "key", objectRef)
}

// enqueueNetworkForDelete queues the key of a deleted Network. If the
// informer missed the deletion (its watch broke and a relist no longer
// found the object), obj is a DeletedFinalStateUnknown "tombstone" holding
// the last known state; DeletionHandlingObjectToName unwraps it.
func (c *Controller) enqueueNetworkForDelete(logger klog.Logger, obj interface{}) {
	objectRef, err := cache.DeletionHandlingObjectToName(obj)
	if err != nil {
		utilruntime.HandleErrorWithLogger(logger, err, "Failed to get key of object")
		return
	}
	logger.V(4).Info("Event handler received Delete", "network", objectRef)
	c.workqueue.Add(objectRef)
	logger.V(4).Info("Enqueued", "key", objectRef)
}
