package main

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
)

// newWorkqueue returns the controller's work queue. A failed key comes back
// after 5ms, 10ms, 20ms, ... but never more than a minute apart, so that the
// demo recovers soon after the backend does. Keys are retried forever:
// giving up would leave a deleted Network stuck on its finalizer.
func newWorkqueue() workqueue.TypedRateLimitingInterface[cache.ObjectName] {
	ratelimiter := workqueue.NewTypedItemExponentialFailureRateLimiter[cache.ObjectName](5*time.Millisecond, time.Minute)
	return workqueue.NewTypedRateLimitingQueueWithConfig(ratelimiter,
		workqueue.TypedRateLimitingQueueConfig[cache.ObjectName]{Name: "Networks"})
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
