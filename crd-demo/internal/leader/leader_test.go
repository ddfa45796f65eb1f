package leader

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"example.com/k8s-demo/crd-demo/internal/testenv"
)

var apiServer = testenv.New("../../crd")

func TestMain(m *testing.M) {
	code := m.Run()
	apiServer.Stop()
	os.Exit(code)
}

// TestLeaseHandedOverAfterTheLastSync stops the leader while a sync of its is
// still writing: the standby replica must not start before that sync is done,
// and must then start at once (the Lease released, not left to expire).
func TestLeaseHandedOverAfterTheLastSync(t *testing.T) {
	cfg := apiServer.Config(t)
	o := Options{Enabled: true, Namespace: "default", ID: "handover-test",
		LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 200 * time.Millisecond}

	var mu sync.Mutex
	var lastSyncDone, standbyStarted time.Time

	leaderCtx, stopLeader := context.WithCancel(context.Background())
	defer stopLeader()
	leading := make(chan struct{})
	leaderErr := make(chan error, 1)
	go func() {
		leaderErr <- Run(leaderCtx, cfg, o, func(ctx context.Context) error {
			close(leading)
			<-ctx.Done()
			// The stop came in the middle of a sync, which goes on writing.
			time.Sleep(1500 * time.Millisecond)
			mu.Lock()
			lastSyncDone = time.Now()
			mu.Unlock()
			return nil
		})
	}()
	select {
	case <-leading:
	case <-time.After(30 * time.Second):
		t.Fatal("the first replica never became the leader")
	}

	standbyCtx, stopStandby := context.WithCancel(context.Background())
	defer stopStandby()
	started := make(chan struct{})
	go func() {
		_ = Run(standbyCtx, cfg, o, func(ctx context.Context) error {
			mu.Lock()
			standbyStarted = time.Now()
			mu.Unlock()
			close(started)
			<-ctx.Done()
			return nil
		})
	}()
	time.Sleep(time.Second) // the standby is waiting for the Lease now
	stopLeader()

	select {
	case <-started:
	case <-time.After(30 * time.Second):
		t.Fatal("the standby never took over")
	}
	if err := <-leaderErr; err != nil {
		t.Errorf("the leader, stopped cleanly: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if lastSyncDone.IsZero() || standbyStarted.Before(lastSyncDone) {
		t.Fatalf("the standby started at %s, while the old leader's last sync was still writing (it finished at %s): two replicas worked at once",
			standbyStarted.Format("15:04:05.000"), lastSyncDone.Format("15:04:05.000"))
	}
	if wait := standbyStarted.Sub(lastSyncDone); wait > 2*time.Second {
		t.Errorf("the standby started %s after the old leader's last sync: the Lease was left to expire (%s) rather than released", wait, o.LeaseDuration)
	}
}
