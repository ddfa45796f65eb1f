package custompod

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"example.com/k8s-demo/e2e/harness"
	"example.com/k8s-demo/e2e/impls"
	"example.com/k8s-demo/e2e/tier"
)

// TestCustomPodSurvivesKills kills each controller with SIGKILL (no clean-up
// runs, as in a crash or an OOM kill) at random moments of scale-ups and
// scale-downs, restarts it, and checks that it converges to exactly
// spec.replicas with a true status.
func TestCustomPodSurvivesKills(t *testing.T) {
	tier.Extended(t)
	parallel(t)
	for _, impl := range Implementations {
		t.Run(impl.Name, func(t *testing.T) {
			parallel(t)
			h := harness.New(t)
			sample := impl.SampleName
			h.Track("custompod/" + sample)
			var ctrl harness.Controller
			if harness.InCluster() {
				// Killed in its pod (SIGKILL through the CRI), restarted in a new one.
				ctrl = impl.Deploy(h)
			} else {
				ctrl = StartBinary(h, impl.Impl, "controller", h.KubeconfigAs("controller", install(h, impl)), impls.Settings{})
			}
			h.KubectlIn(h.Path(impl.Dir), "apply", "-f", impl.Sample)
			WaitForPods(h, sample, SampleReplicas)

			seed := time.Now().UnixNano()
			t.Logf("random seed %d", seed)
			rnd := rand.New(rand.NewPCG(uint64(seed), 0))
			scales := []int{5, 1, 4, 0}
			if harness.Full() {
				for range 15 {
					scales = append(scales, rnd.IntN(8))
				}
			}
			for round, replicas := range append(scales, 3) {
				h.Kubectl("scale", "custompod/"+sample, fmt.Sprintf("--replicas=%d", replicas))
				// Somewhere in the middle of the controller's work.
				time.Sleep(time.Duration(rnd.IntN(400)) * time.Millisecond)
				if err := ctrl.Kill(); err != nil {
					t.Fatal(err)
				}
				if err := ctrl.Restart(); err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
			}
			WaitForPods(h, sample, 3)
			// At rest it stays at exactly 3: nothing left over from the kills.
			time.Sleep(2 * time.Second)
			live := 0
			for _, p := range OwnedPods(h, sample) {
				if p.DeletionTimestamp == nil {
					live++
				}
			}
			if live != 3 {
				t.Errorf("after the kills it settled, then drifted to %d pods, want 3", live)
			}
		})
	}
}
