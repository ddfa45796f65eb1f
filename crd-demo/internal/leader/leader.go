// Package leader lets several replicas of a controller run while only one of
// them works: the one holding a Lease (coordination.k8s.io/v1) in the
// cluster. The others wait, and take the Lease over when its holder stops
// renewing it: a crash costs at most one lease duration of downtime.
//
// This is client-go's tools/leaderelection, which controller-runtime's
// manager also uses behind its --leader-elect flag.
package leader

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
)

// Options are the leader election flags.
type Options struct {
	Enabled   bool
	Namespace string
	ID        string
	// The defaults are controller-runtime's: a Lease lasts 15 s, its holder
	// renews it every RetryPeriod and gives up after RenewDeadline.
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration
}

// AddFlags registers the --leader-elect flags, with id the Lease's default name.
func (o *Options) AddFlags(fs *flag.FlagSet, id string) {
	fs.BoolVar(&o.Enabled, "leader-elect", false, "Run as one of several replicas: work only while holding the leader Lease.")
	fs.StringVar(&o.Namespace, "leader-election-namespace", "", "The namespace of the leader Lease. Default: the pod's own namespace (required outside a cluster).")
	fs.StringVar(&o.ID, "leader-election-id", id, "The name of the leader Lease.")
	fs.DurationVar(&o.LeaseDuration, "leader-elect-lease-duration", 15*time.Second, "How long a Lease holds without renewal: the longest a crashed leader keeps the others waiting.")
	fs.DurationVar(&o.RenewDeadline, "leader-elect-renew-deadline", 10*time.Second, "How long the leader retries renewing before it stops working.")
	fs.DurationVar(&o.RetryPeriod, "leader-elect-retry-period", 2*time.Second, "How often the replicas try to acquire or renew the Lease.")
}

// inClusterNamespace is where a pod's service account names its namespace.
const inClusterNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// Check reports flags that cannot work, and fills in the namespace in a pod.
func (o *Options) Check() error {
	if !o.Enabled {
		return nil
	}
	if o.Namespace == "" {
		b, err := os.ReadFile(inClusterNamespace)
		if err != nil {
			return errors.New("--leader-elect needs --leader-election-namespace when not running in a pod")
		}
		o.Namespace = strings.TrimSpace(string(b))
	}
	if o.ID == "" {
		return errors.New("--leader-election-id must not be empty")
	}
	if o.LeaseDuration <= o.RenewDeadline || o.RenewDeadline <= o.RetryPeriod || o.RetryPeriod <= 0 {
		return fmt.Errorf("want --leader-elect-lease-duration > --leader-elect-renew-deadline > --leader-elect-retry-period > 0, got %s, %s, %s",
			o.LeaseDuration, o.RenewDeadline, o.RetryPeriod)
	}
	return nil
}

// Run calls run directly when leader election is off. Otherwise it waits for
// the Lease, calls run with a context that ends when ctx does or the Lease is
// lost, and returns an error if it was lost while ctx was still running, so
// that the process exits and its restart joins the election again rather
// than working on without the Lease.
//
// On a clean stop (ctx ends) the Lease is handed over only once run has
// returned: the elector runs on a context of its own, ended after run. Were
// it ended with ctx, it would release the Lease at once, and another replica
// could start syncing while this one's last sync is still writing.
func Run(ctx context.Context, cfg *rest.Config, o Options, run func(context.Context) error) error {
	if !o.Enabled {
		return run(ctx)
	}
	logger := klog.FromContext(ctx)
	host, _ := os.Hostname()
	identity := host + "_" + uuid.NewString()
	lock, err := resourcelock.NewFromKubeconfig(resourcelock.LeasesResourceLock, o.Namespace, o.ID,
		resourcelock.ResourceLockConfig{Identity: identity}, cfg, o.RenewDeadline)
	if err != nil {
		return fmt.Errorf("leader election lock: %w", err)
	}

	// The elector's context: not ended by ctx, but once run has returned, or,
	// if ctx ends before this replica leads, at once.
	electorCtx, stopElector := context.WithCancel(context.WithoutCancel(ctx))
	defer stopElector()
	var mu sync.Mutex
	leading := false
	defer context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if !leading {
			stopElector()
		}
	})()

	// OnStartedLeading runs in a goroutine of its own: result carries run's
	// error back, once started says it began.
	var started atomic.Bool
	result := make(chan error, 1)
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:          lock,
		LeaseDuration: o.LeaseDuration,
		RenewDeadline: o.RenewDeadline,
		RetryPeriod:   o.RetryPeriod,
		// Hand the Lease over at once on a clean shutdown, rather than make
		// the next replica wait for it to expire.
		ReleaseOnCancel: true,
		Name:            o.ID,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(leadCtx context.Context) {
				mu.Lock()
				leading = true
				mu.Unlock()
				started.Store(true)
				logger.Info("Acquired the leader Lease: starting", "lease", o.Namespace+"/"+o.ID, "identity", identity)
				// The work stops when the process stops or the Lease is lost.
				runCtx, cancel := context.WithCancel(leadCtx)
				defer cancel()
				defer context.AfterFunc(ctx, cancel)()
				result <- run(runCtx)
				// Its last writes are done: now the Lease may go.
				stopElector()
			},
			OnStoppedLeading: func() {
				logger.Info("No longer the leader", "lease", o.Namespace+"/"+o.ID, "identity", identity)
			},
			OnNewLeader: func(holder string) {
				if holder != identity {
					logger.Info("Waiting: another replica holds the leader Lease", "lease", o.Namespace+"/"+o.ID, "leader", holder)
				}
			},
		},
	})
	if err != nil {
		return fmt.Errorf("leader election: %w", err)
	}
	logger.Info("Waiting for the leader Lease", "lease", o.Namespace+"/"+o.ID, "identity", identity)
	// Run returns once run has returned after ctx ended, or when the Lease,
	// once held, is lost.
	elector.Run(electorCtx)
	if started.Load() {
		if err := <-result; err != nil {
			return err
		}
	}
	if ctx.Err() == nil {
		return fmt.Errorf("lost the leader Lease %s/%s", o.Namespace, o.ID)
	}
	return nil
}
