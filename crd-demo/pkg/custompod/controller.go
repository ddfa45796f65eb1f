// Package custompod is the CustomPod controller written with client-go alone:
// the same job as the articles' operator-sdk and kubebuilder Reconcile, with
// the informers, work queue and owner tracking those frameworks hide in plain
// sight.
package custompod

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"

	zhhnzwv2 "example.com/k8s-demo/crd-demo/pkg/apis/zhhnzw/v2"
	clientset "example.com/k8s-demo/crd-demo/pkg/client/clientset/versioned"
	customscheme "example.com/k8s-demo/crd-demo/pkg/client/clientset/versioned/scheme"
	informers "example.com/k8s-demo/crd-demo/pkg/client/informers/externalversions/zhhnzw/v2"
	listers "example.com/k8s-demo/crd-demo/pkg/client/listers/zhhnzw/v2"
)

const controllerAgentName = "custompod-controller"

// fieldManager names this controller in the managedFields of what it writes
// (`kubectl get -o yaml --show-managed-fields`), rather than the binary's name
// the API server would take from the user agent.
const fieldManager = controllerAgentName

// The labels on every pod the controller creates.
const (
	// LabelManagedBy says which implementation made the pod.
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedBy      = "crd-demo"
	// LabelCustomPod names the CustomPod that owns the pod. Pod informers
	// filter on it: the controller caches no other pods.
	LabelCustomPod = "zhhnzw.mock.com/custompod"
)

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

// Reasons, for events and for the Ready condition. The event reasons are the
// ones a ReplicaSet uses, so `kubectl get events` reads the same.
const (
	ReasonSuccessfulCreate = "SuccessfulCreate"
	ReasonSuccessfulDelete = "SuccessfulDelete"
	ReasonFailedCreate     = "FailedCreate"
	ReasonFailedDelete     = "FailedDelete"
	// ReasonPodsReady: spec.replicas pods exist and are ready (Ready=True).
	ReasonPodsReady = "PodsReady"
	// ReasonPodsNotReady: fewer pods are ready than spec.replicas asks, while
	// they start (Ready=False).
	ReasonPodsNotReady = "PodsNotReady"
	// ReasonScaleFailed: creating or deleting a pod failed (Ready=False).
	ReasonScaleFailed = "ScaleFailed"
)

func init() {
	// Add our types to the scheme the event recorder uses, so that Events
	// can point at CustomPods.
	utilruntime.Must(customscheme.AddToScheme(scheme.Scheme))
}

// Controller is the controller implementation for CustomPod resources.
type Controller struct {
	kubeclientset   kubernetes.Interface
	customclientset clientset.Interface

	customPodsLister listers.CustomPodLister
	customPodsSynced cache.InformerSynced
	podsIndexer      cache.Indexer
	podsSynced       cache.InformerSynced

	// workqueue is controller-runtime's priority queue, which is client-go's
	// TypedRateLimitingInterface with priorities added (see podEventPriority).
	workqueue priorityqueue.PriorityQueue[cache.ObjectName]
	// batchPeriod is podEventBatchPeriod; tests shorten it.
	batchPeriod time.Duration
	recorder    record.EventRecorder
	clock       clock.PassiveClock
}

// NewController returns a new CustomPod controller. podInformer should only
// hold pods labelled LabelCustomPod (see cmd/custompod-controller): the
// controller has no use for other pods, and caching every pod of a big
// cluster costs memory.
func NewController(
	ctx context.Context,
	kubeclientset kubernetes.Interface,
	customclientset clientset.Interface,
	eventclientset kubernetes.Interface,
	podInformer coreinformers.PodInformer,
	customPodInformer informers.CustomPodInformer) *Controller {
	logger := klog.FromContext(ctx)

	eventBroadcaster := record.NewBroadcaster(record.WithContext(ctx))
	eventBroadcaster.StartStructuredLogging(0)
	// Events go through a clientset of their own, as kube-scheduler's do: a
	// clientset has one rate limit (--kube-api-qps) for all its requests, and
	// an event for every pod would spend the budget of the writes that make
	// the pods.
	eventBroadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: eventclientset.CoreV1().Events("")})
	recorder := eventBroadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: controllerAgentName})

	controller := &Controller{
		kubeclientset:    kubeclientset,
		customclientset:  customclientset,
		customPodsLister: customPodInformer.Lister(),
		customPodsSynced: customPodInformer.Informer().HasSynced,
		podsIndexer:      podInformer.Informer().GetIndexer(),
		podsSynced:       podInformer.Informer().HasSynced,
		workqueue: priorityqueue.New("CustomPods", func(o *priorityqueue.Opts[cache.ObjectName]) {
			o.RateLimiter = workqueue.NewTypedItemExponentialFailureRateLimiter[cache.ObjectName](5*time.Millisecond, time.Minute)
		}),
		batchPeriod: podEventBatchPeriod,
		recorder:    recorder,
		clock:       clock.RealClock{},
	}

	// Index the cached pods by the UID of the CustomPod that controls them,
	// as ReplicaSet's controller indexes its pods: a sync finds its pods in
	// the index, where a label selector would test every cached pod of the
	// namespace, at every sync.
	utilruntime.Must(podInformer.Informer().AddIndexers(cache.Indexers{controllerUIDIndex: customPodUID}))

	logger.Info("Setting up event handlers")
	// A CustomPod changed: sync it.
	_, err := customPodInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj interface{}) {
			logger.V(4).Info("Event handler received Add", "customPod", klog.KObj(obj.(*zhhnzwv2.CustomPod)))
			controller.enqueueCustomPod(logger, obj, 0, 0)
		},
		UpdateFunc: func(old, new interface{}) {
			oldCP, newCP := old.(*zhhnzwv2.CustomPod), new.(*zhhnzwv2.CustomPod)
			if oldCP.ResourceVersion == newCP.ResourceVersion {
				return // periodic resync: nothing changed
			}
			logger.V(4).Info("Event handler received Update", "customPod", klog.KObj(newCP), "resourceVersion", newCP.ResourceVersion)
			controller.enqueueCustomPod(logger, new, 0, 0)
		},
		// Deletion needs no handler: the pods carry owner references, so the
		// garbage collector deletes them with their CustomPod.
	})
	utilruntime.Must(err)

	// A pod changed: sync the CustomPod that owns it. This is how the
	// controller learns that one of its pods died or was deleted by someone
	// else, and replaces it.
	_, err = podInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj interface{}) {
			controller.handleObject(logger, "Add", obj)
		},
		UpdateFunc: func(old, new interface{}) {
			if old.(*corev1.Pod).ResourceVersion == new.(*corev1.Pod).ResourceVersion {
				return // periodic resync: nothing changed
			}
			controller.handleObject(logger, "Update", new)
		},
		DeleteFunc: func(obj interface{}) {
			controller.handleObject(logger, "Delete", obj)
		},
	})
	utilruntime.Must(err)

	return controller
}

// Run waits for the caches to sync, then runs workers goroutines until ctx is
// cancelled. It returns once the workers have finished the item in hand.
func (c *Controller) Run(ctx context.Context, workers int) error {
	defer utilruntime.HandleCrashWithContext(ctx)
	logger := klog.FromContext(ctx)

	logger.Info("Starting CustomPod controller")
	logger.Info("Waiting for informer caches to sync")
	if ok := cache.WaitForCacheSync(ctx.Done(), c.customPodsSynced, c.podsSynced); !ok {
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
	c.workqueue.ShutDown()
	wg.Wait()
	return nil
}

func (c *Controller) runWorker(ctx context.Context) {
	for c.processNextWorkItem(ctx) {
	}
}

// processNextWorkItem takes one key off the queue and syncs it; a failed key
// goes back with a growing delay.
func (c *Controller) processNextWorkItem(ctx context.Context) bool {
	objRef, shutdown := c.workqueue.Get()
	if shutdown {
		return false
	}
	defer c.workqueue.Done(objRef)
	logger := klog.FromContext(ctx)
	logger.V(4).Info("Dequeued", "key", objRef)

	start := c.clock.Now()
	logger.V(4).Info("Sync started", "key", objRef)
	err := c.syncHandler(ctx, objRef)
	logger.V(4).Info("Sync finished", "key", objRef, "duration", c.clock.Since(start), "err", err)
	if err == nil {
		c.workqueue.Forget(objRef)
		return true
	}
	utilruntime.HandleErrorWithContext(ctx, err, "Error syncing; requeuing for later retry", "key", objRef, "requeues", c.workqueue.NumRequeues(objRef))
	c.workqueue.AddRateLimited(objRef)
	return true
}

// syncHandler makes the number of pods match spec.replicas, then writes the
// status.
func (c *Controller) syncHandler(ctx context.Context, objectRef cache.ObjectName) error {
	logger := klog.LoggerWithValues(klog.FromContext(ctx), "customPod", objectRef)
	ctx = klog.NewContext(ctx, logger)

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

	// Pod i is named <CustomPod>-<i>, as a StatefulSet names its pods. The
	// pods are read from the informer's cache, which lags behind this
	// controller's own writes: right after this sync creates a pod, the event
	// of an older pod can start the next sync before the new pod is in the
	// cache. With a name, the second create is refused (AlreadyExists)
	// instead of making a pod too many, and a second delete is NotFound. So a
	// stale cache costs a refused request, never a wrong count of pods.
	cached, err := c.podsIndexer.ByIndex(controllerUIDIndex, string(cp.UID))
	if err != nil {
		return fmt.Errorf("listing pods: %w", err)
	}
	var pods, surplus []*corev1.Pod
	held := map[string]bool{} // the names cp's pods hold, terminating ones too
	for _, obj := range cached {
		pod := obj.(*corev1.Pod)
		held[pod.Name] = true
		i := ordinal(cp, pod.Name)
		switch {
		case pod.DeletionTimestamp != nil:
			// Terminating: it does not count, and holds its name until it is
			// gone; its replacement is created then.
		case i < 0 || i >= int(desired) || isFinished(pod):
			// Beyond spec.replicas, a name without an ordinal, or finished:
			// a finished pod's name is needed for its replacement.
			surplus = append(surplus, pod)
		default:
			pods = append(pods, pod)
		}
	}

	var missing []string
	for i := range int(desired) {
		if !held[podName(cp, i)] {
			missing = append(missing, podName(cp, i))
		}
	}
	// Create the missing pods in batches of 1, 2, 4, ..., as a ReplicaSet
	// does: the pods of a batch are created at once, so that a CustomPod's
	// pods cost a few round trips rather than one each, and a batch with a
	// failure ends the scale-up, so that an API server refusing pods (a quota,
	// an admission policy) is asked once rather than once per pod.
	var scaleErr error
	var made []string // the pods this sync created, named in one event
	for batch := 1; len(missing) > 0 && scaleErr == nil; batch *= 2 {
		n := min(batch, len(missing))
		created := make([]*corev1.Pod, n)
		isNew := make([]bool, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i, name := range missing[:n] {
			wg.Go(func() { created[i], isNew[i], errs[i] = c.createPod(ctx, cp, name) })
		}
		wg.Wait()
		for i, pod := range created {
			if pod != nil {
				pods = append(pods, pod)
			}
			if isNew[i] {
				made = append(made, pod.Name)
			}
		}
		scaleErr = errors.Join(errs...)
		missing = missing[n:]
	}
	// One event for the pods a sync creates, not one per pod as a
	// ReplicaSet records them: an event is a write like any other, and one
	// per pod made them the controller's most frequent write (docs/bench.md).
	if len(made) > 0 {
		c.recorder.Event(cp, corev1.EventTypeNormal, ReasonSuccessfulCreate, podsNote("Created", made))
	}
	if scaleErr == nil && len(surplus) > 0 {
		logger.V(2).Info("Scaling down", "pods", len(pods)+len(surplus), "replicas", desired)
		// Names without an ordinal first, then the highest ordinal.
		slices.SortFunc(surplus, func(a, b *corev1.Pod) int {
			return cmp.Compare(deleteRank(cp, b.Name), deleteRank(cp, a.Name))
		})
		var deleted []string
		for _, pod := range surplus {
			err := c.kubeclientset.CoreV1().Pods(cp.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{})
			if apierrors.IsNotFound(err) {
				// Deleted already, by this controller from a stale cache or
				// by someone else: gone, as wanted, so no "Deleted pod" log
				// line, and not named in the event.
				logger.V(2).Info("Pod already gone", "pod", klog.KObj(pod))
			} else if err != nil {
				c.recorder.Eventf(cp, corev1.EventTypeWarning, ReasonFailedDelete, "Error deleting pod %s: %v", pod.Name, err)
				scaleErr = fmt.Errorf("deleting pod %s: %w", pod.Name, err)
				break
			} else {
				logger.Info("Deleted pod", "pod", klog.KObj(pod))
				deleted = append(deleted, pod.Name)
			}
		}
		if len(deleted) > 0 {
			c.recorder.Event(cp, corev1.EventTypeNormal, ReasonSuccessfulDelete, podsNote("Deleted", deleted))
		}
	}

	if err := c.updateStatus(ctx, cp, pods, desired, scaleErr); err != nil {
		return err
	}
	// A failed create or delete is retried with backoff.
	return scaleErr
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
			c.recorder.Eventf(cp, corev1.EventTypeWarning, ReasonFailedCreate, "Error creating pod: %v", err)
			return nil, false, err
		}
		logger.V(2).Info("Pod already exists: the cache is behind", "pod", klog.KObj(pod))
		if pod.DeletionTimestamp != nil || isFinished(pod) {
			return nil, false, nil
		}
		return pod, false, nil
	}
	if err != nil {
		c.recorder.Eventf(cp, corev1.EventTypeWarning, ReasonFailedCreate, "Error creating pod: %v", err)
		return nil, false, fmt.Errorf("creating pod: %w", err)
	}
	logger.Info("Created pod", "pod", klog.KObj(pod))
	return pod, true, nil
}

// podsNote is an event's note for what a sync did to its pods: "Created pod:
// test-0", "Created 3 pods: test-0, test-1, test-2". It names at most five,
// as an event's note is short (1 KB for events.k8s.io).
func podsNote(done string, names []string) string {
	if len(names) == 1 {
		return done + " pod: " + names[0]
	}
	shown := strings.Join(names[:min(len(names), 5)], ", ")
	if len(names) > 5 {
		shown += fmt.Sprintf(" and %d more", len(names)-5)
	}
	return fmt.Sprintf("%s %d pods: %s", done, len(names), shown)
}

// podName is the name of cp's pod with ordinal i.
func podName(cp *zhhnzwv2.CustomPod, i int) string {
	return cp.Name + "-" + strconv.Itoa(i)
}

// deleteRank orders the pods to delete: the highest rank first.
func deleteRank(cp *zhhnzwv2.CustomPod, name string) int {
	if i := ordinal(cp, name); i >= 0 {
		return i
	}
	return math.MaxInt
}

// ordinal is i for a pod named podName(cp, i), and -1 for any other name.
func ordinal(cp *zhhnzwv2.CustomPod, name string) int {
	suffix, ok := strings.CutPrefix(name, cp.Name+"-")
	if !ok {
		return -1
	}
	i, err := strconv.Atoi(suffix)
	if err != nil || i < 0 || strconv.Itoa(i) != suffix {
		return -1
	}
	return i
}

// updateStatus writes replicas, readyReplicas, podNames and the Ready
// condition, but only if they changed.
func (c *Controller) updateStatus(ctx context.Context, cp *zhhnzwv2.CustomPod, pods []*corev1.Pod, desired int32, scaleErr error) error {
	var names []string // nil when empty, like the status the API server returns
	ready := int32(0)
	for _, pod := range pods {
		names = append(names, pod.Name)
		if isReady(pod) {
			ready++
		}
	}
	slices.Sort(names)

	newStatus := cp.Status.DeepCopy()
	newStatus.Replicas = int32(len(names))
	newStatus.ReadyReplicas = ready
	newStatus.PodNames = names
	cond := metav1.Condition{
		Type:               zhhnzwv2.ConditionReady,
		Status:             metav1.ConditionTrue,
		Reason:             ReasonPodsReady,
		Message:            fmt.Sprintf("%d of %d pods ready", ready, desired),
		ObservedGeneration: cp.Generation,
		LastTransitionTime: metav1.NewTime(c.clock.Now()),
	}
	switch {
	case scaleErr != nil:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, ReasonScaleFailed, scaleErr.Error()
	case ready != desired:
		cond.Status, cond.Reason = metav1.ConditionFalse, ReasonPodsNotReady
	}
	meta.SetStatusCondition(&newStatus.Conditions, cond)
	if equality.Semantic.DeepEqual(cp.Status, *newStatus) {
		return nil
	}

	cpCopy := cp.DeepCopy()
	cpCopy.Status = *newStatus
	if _, err := c.customclientset.ZhhnzwV2().CustomPods(cp.Namespace).UpdateStatus(ctx, cpCopy, metav1.UpdateOptions{FieldManager: fieldManager}); err != nil {
		return fmt.Errorf("updating status: %w", err)
	}
	klog.FromContext(ctx).V(4).Info("Updated status", "replicas", newStatus.Replicas, "readyReplicas", newStatus.ReadyReplicas)
	return nil
}

// isFinished says whether a pod's containers have all stopped for good.
func isFinished(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// isReady says whether a pod's Ready condition is True: the kubelet sets it
// once every container runs and passes its readiness probe. A ReplicaSet's
// readyReplicas counts the same.
func isReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// newPod returns a pod for cp, running its spec.template. The owner reference
// with controller=true makes cp the pod's one managing owner: the garbage
// collector deletes the pod with cp, and handleObject finds cp from the pod.
// A template changed later applies to the pods made after it, as a
// ReplicaSet's does: the pods already running are not replaced (that is a
// Deployment's job).
func newPod(cp *zhhnzwv2.CustomPod, name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: cp.Namespace,
			Labels: map[string]string{
				LabelManagedBy: ManagedBy,
				LabelCustomPod: cp.Name,
			},
			OwnerReferences: []metav1.OwnerReference{
				*metav1.NewControllerRef(cp, zhhnzwv2.SchemeGroupVersion.WithKind("CustomPod")),
			},
		},
		Spec: corev1.PodSpec{
			// What the "restricted" Pod Security Standard asks, so that a
			// namespace that enforces it admits the pods.
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot: ptr.To(true),
				// An image that runs as root (busybox's, nginx's) is refused
				// with runAsNonRoot unless a user is named: nobody. Whatever
				// user the template's image names, its pods run as nobody.
				RunAsUser:      ptr.To[int64](65534),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{
				// The name the pods had in v1, and have in the kubebuilder
				// and operator-sdk demos, whatever the image.
				Name:  "busybox",
				Image: cp.Spec.Template.Image,
				// Pulled once per node, even an image without a tag (that is,
				// :latest, whose default policy, Always, would pull at every
				// start).
				ImagePullPolicy: corev1.PullIfNotPresent,
				Command:         cp.Spec.Template.Command,
				SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: ptr.To(false),
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
			}},
		},
	}
}

// podEventPriority puts a CustomPod whose pods changed ahead of CustomPods
// waiting for their first sync, which are queued at 0. A queue serves equal
// priorities first in, first out, as client-go's work queue serves every key:
// when many CustomPods are created at once, one whose pods became ready would
// wait behind all of them before its status said so (docs/bench.md, step 15).
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
