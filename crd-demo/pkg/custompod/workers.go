package custompod

import (
	"context"
	"fmt"
	"sync"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
)

// newWorkqueue returns the queue of CustomPod keys to sync: controller-runtime's
// priority queue, which is client-go's TypedRateLimitingInterface with
// priorities added (see podEventPriority). A failed key is retried after 5ms,
// then twice as long at each failure, up to a minute.
func newWorkqueue() priorityqueue.PriorityQueue[cache.ObjectName] {
	return priorityqueue.New("CustomPods", func(o *priorityqueue.Opts[cache.ObjectName]) {
		o.RateLimiter = workqueue.NewTypedItemExponentialFailureRateLimiter[cache.ObjectName](5*time.Millisecond, time.Minute)
	})
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
