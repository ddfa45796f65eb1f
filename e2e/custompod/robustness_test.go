package custompod

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"

	"example.com/k8s-demo/e2e/harness"
	"example.com/k8s-demo/e2e/impls"
	"example.com/k8s-demo/e2e/tier"
)

// The robustness suite for the three CustomPod controllers (the kills are in
// kill_test.go). Each test runs the controller from a build, as the
// ServiceAccount its generated RBAC is bound to.

func TestMain(m *testing.M) { harness.Main(m) }

// Out of the cluster, the tests of this package run side by side: each has a
// namespace of its own and most of their time is spent waiting on the cluster.
// In it they do not, since the three Deployments are shared.
func parallel(t *testing.T) {
	if !harness.InCluster() {
		t.Parallel()
	}
}

// outOfClusterOnly marks a test that runs the controllers beside the cluster
// whatever the cluster, and lets it run side by side with the others. On kwok
// (make test) it runs; in-cluster on kind it would repeat that run exactly, so
// it is skipped there, saying so, unless E2E_FULL=1.
func outOfClusterOnly(t *testing.T) {
	t.Helper()
	if harness.InCluster() && !harness.Full() {
		t.Skip("runs the controllers out of the cluster, as it does on kwok in make test; E2E_FULL=1 runs it on in-cluster runs too")
	}
	t.Parallel()
}

// installing makes the tests, side by side, install one at a time (see
// Implementation.Install). It is this package's only lock.
var installing sync.Mutex

// install is impl.Install, one test at a time.
func install(h *harness.H, impl Implementation) string {
	h.Helper()
	installing.Lock()
	defer installing.Unlock()
	return impl.Install(h)
}

// TestCustomPodSurvivesAPIServerOutage kills the API server under the three
// running controllers for longer than the renew deadline of the control
// plane's own leader Leases, and starts it again: each controller, never restarted, must notice,
// reconnect on its own and go on working. It runs on a kwok cluster of its
// own, whatever the suite's cluster (make tools builds kwok everywhere):
// kwok's fake kubelet (v0.8) does not reliably resume marking pods Running
// after an outage, so the shared cluster is left alone, and what is checked is
// the controller's part: the pods it creates and its status. The three
// controllers ride out one outage together, each in a subtest of its own.
func TestCustomPodSurvivesAPIServerOutage(t *testing.T) {
	tier.Extended(t)
	outOfClusterOnly(t)
	// The subtests wait for each other, so they must all run at once: with
	// fewer parallel slots (go test's default is GOMAXPROCS) they would wait
	// for ever.
	if p, _ := strconv.Atoi(flag.Lookup("test.parallel").Value.String()); p < len(Implementations) {
		t.Fatalf("-parallel %d: this test runs its %d subtests at once and needs -parallel %d or more (make e2e passes -parallel 4)", p, len(Implementations), len(Implementations))
	}
	env := harness.PrivateKwok(t, "k8s-demo-outage")
	cp, err := env.ControlPlane()
	if err != nil {
		t.Fatal(err)
	}
	// The outage starts once every subtest has its controller working (or
	// has failed), and the subtests go on once it is over.
	var ready sync.WaitGroup
	ready.Add(len(Implementations))
	over := make(chan struct{})
	var outageErr error
	go func() {
		ready.Wait()
		defer close(over)
		ctx := context.Background()
		if outageErr = cp.StopControlPlane(ctx); outageErr != nil {
			return
		}
		// Longer than the renew deadline of the leader Leases (10 s): the
		// controllers must ride out an outage that makes the
		// controller-manager and the scheduler give up.
		time.Sleep(11 * time.Second)
		outageErr = cp.StartControlPlane(ctx)
	}()
	for _, impl := range Implementations {
		t.Run(impl.Name, func(t *testing.T) {
			t.Parallel()
			var once sync.Once
			arrived := func() { once.Do(ready.Done) }
			defer arrived()
			h := harness.NewWith(t, env)
			sample := impl.SampleName
			h.Track("custompod/" + sample)
			ctrl := StartBinary(h, impl.Impl, "controller", h.KubeconfigAs("controller", install(h, impl)), impls.Settings{})
			h.KubectlIn(h.Path(impl.Dir), "apply", "-f", impl.Sample)
			waitForStatus(h, sample, SampleReplicas)

			arrived()
			<-over
			if outageErr != nil {
				t.Fatalf("the outage: %v", outageErr)
			}
			h.Kubectl("scale", "custompod/"+sample, "--replicas=3")
			waitForStatus(h, sample, 3)
			if !ctrl.Running() {
				t.Fatalf("the controller exited during the outage: %v\n%s", ctrl.ExitErr(), ctrl.Tail(30))
			}
			// The API server was killed, so every connection the controller
			// had was cut: working now means it reconnected on its own.
			if i := strings.Index(strings.ToLower(ctrl.Log()), "failed to watch"); i >= 0 {
				t.Logf("the controller saw the outage: %s", firstLine(ctrl.Log()[i:]))
			}
		})
	}
}

// waitForStatus waits until the CustomPod has exactly n live pods (Running
// or not) and its status lists them and is Ready.
func waitForStatus(h *harness.H, name string, n int) {
	h.Helper()
	h.WaitFor(fmt.Sprintf("custompod/%s to have %d pods and a Ready status that lists them", name, n), 2*time.Minute,
		func(ctx context.Context) (bool, string, error) {
			cp, err := Get(ctx, h, name)
			if err != nil {
				return false, "", err
			}
			var names []string
			for _, p := range OwnedPods(h, name) {
				if p.DeletionTimestamp == nil {
					names = append(names, p.Name)
				}
			}
			slices.Sort(names)
			seen := fmt.Sprintf("pods %v; status.replicas=%d podNames=%v Ready=%s", names, cp.Status.Replicas, cp.Status.PodNames, cp.Ready())
			return len(names) == n && int(cp.Status.Replicas) == n && slices.Equal(cp.Status.PodNames, names) && cp.Ready() == "True", seen, nil
		})
}

// TestCustomPodConcurrentEdits has many clients edit one CustomPod at once,
// each with its own label and a new replica count, while the controller
// writes the status: every edit must land (conflicts retried, nothing lost)
// and the controller must converge on the last spec.
func TestCustomPodConcurrentEdits(t *testing.T) {
	tier.Extended(t)
	outOfClusterOnly(t)
	editors, rounds := 10, 5
	if harness.Full() {
		editors, rounds = 50, 10
	}
	for _, impl := range Implementations {
		t.Run(impl.Name, func(t *testing.T) {
			t.Parallel()
			h := harness.New(t)
			sample := impl.SampleName
			h.Track("custompod/" + sample)
			StartBinary(h, impl.Impl, "controller", h.KubeconfigAs("controller", install(h, impl)), impls.Settings{})
			h.KubectlIn(h.Path(impl.Dir), "apply", "-f", impl.Sample)
			WaitForPods(h, sample, SampleReplicas)

			dyn, err := dynamic.NewForConfig(h.Env.Config)
			if err != nil {
				t.Fatal(err)
			}
			cps := dyn.Resource(impls.CustomPods).Namespace(h.Namespace)
			var conflicts atomic.Int64
			var wg sync.WaitGroup
			errs := make(chan error, editors)
			for e := range editors {
				wg.Go(func() {
					rnd := rand.New(rand.NewPCG(uint64(e), uint64(time.Now().UnixNano())))
					for r := range rounds {
						// Read, change, write back with the resourceVersion
						// read: a conflict means someone wrote in between.
						err := retry.RetryOnConflict(editBackoff, func() error {
							u, err := cps.Get(h.Ctx, sample, metav1.GetOptions{})
							if err != nil {
								return err
							}
							labels := u.GetLabels()
							if labels == nil {
								labels = map[string]string{}
							}
							labels[fmt.Sprintf("editor-%d", e)] = fmt.Sprint(r)
							u.SetLabels(labels)
							_ = unstructured.SetNestedField(u.Object, int64(rnd.IntN(6)), "spec", "replicas")
							_, err = cps.Update(h.Ctx, u, metav1.UpdateOptions{})
							if apierrors.IsConflict(err) {
								conflicts.Add(1)
							}
							return err
						})
						if err != nil {
							errs <- fmt.Errorf("editor %d, round %d: %w", e, r, err)
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			t.Logf("%d editors × %d rounds: %d conflicts, each retried", editors, rounds, conflicts.Load())
			if conflicts.Load() == 0 {
				t.Errorf("no edit conflicted with another: the edits were not concurrent, so this test proved nothing")
			}

			// The last word: 3 replicas. Every editor's last label must be there.
			h.Kubectl("scale", "custompod/"+sample, "--replicas=3")
			WaitForPods(h, sample, 3)
			u, err := cps.Get(h.Ctx, sample, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for e := range editors {
				if got, want := u.GetLabels()[fmt.Sprintf("editor-%d", e)], fmt.Sprint(rounds-1); got != want {
					t.Errorf("label editor-%d = %q, want %q: an edit was lost", e, got, want)
				}
			}
		})
	}
}

// editBackoff retries a conflicting edit for as long as it takes: with many
// editors on one object, client-go's DefaultRetry (5 tries) runs out.
// (No Cap: reaching it would end the retries.)
var editBackoff = wait.Backoff{Steps: 30, Duration: 5 * time.Millisecond, Factor: 1.3, Jitter: 1}

// leaderElectionRBAC binds what leader election needs, in the test's
// namespace only, as the module's manifests would in the manager's.
func leaderElectionRBAC(h *harness.H, impl Implementation, sa string) {
	h.Helper()
	role := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "crd-demo-leader-election"}
	if impl.Impl == &impls.ClientGo {
		h.KubectlIn(h.Path(impl.Dir), "apply", "-f", "config/rbac/leader-election.yaml")
	} else {
		h.KubectlIn(h.Path(impl.Dir), "apply", "-n", h.Namespace, "-f", "config/rbac/leader_election_role.yaml")
		role = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "leader-election-role"}
	}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "leader-election", Namespace: h.Namespace},
		RoleRef:    role,
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: h.Namespace}},
	}
	if _, err := h.Env.Client.RbacV1().RoleBindings(h.Namespace).Create(h.Ctx, rb, metav1.CreateOptions{}); err != nil {
		h.Fatal(err)
	}
}

// The lease duration both controller-runtime and crd-demo's --leader-elect
// default to.
const leaseDuration = 15 * time.Second

// TestCustomPodLeaderElection runs two replicas of each controller: one holds
// the Lease and works, the other waits. Killed without a chance to hand the
// Lease over, the leader is replaced once the Lease expires, and the standby
// writes nothing before it holds the Lease.
func TestCustomPodLeaderElection(t *testing.T) {
	tier.Extended(t)
	outOfClusterOnly(t)
	for _, impl := range Implementations {
		t.Run(impl.Name, func(t *testing.T) {
			t.Parallel()
			h := harness.New(t)
			sample := impl.SampleName
			h.Track("custompod/"+sample, "lease")
			kubeconfig := h.KubeconfigAs("controller", install(h, impl))
			leaderElectionRBAC(h, impl, "controller")
			le := impls.Settings{LeaderElection: h.Namespace}
			// Started alone, replica-1 is the holder the Lease names.
			first := StartBinary(h, impl.Impl, "replica-1", kubeconfig, le)
			holder := waitForLeaseHolder(h, impl, "")
			second := StartBinary(h, impl.Impl, "replica-2", kubeconfig, le)

			h.KubectlIn(h.Path(impl.Dir), "apply", "-f", impl.Sample)
			before := WaitForPods(h, sample, SampleReplicas)
			if l := getLease(h, impl); holderOf(l) != holder {
				t.Fatalf("the Lease passed from replica-1 (%s) to %s while replica-1 was alive", holder, holderOf(l))
			}

			// Kill the leader, and at once ask for more pods: the standby
			// must not make them before it holds the Lease.
			if err := first.Kill(); err != nil {
				t.Fatal(err)
			}
			h.Kubectl("scale", "custompod/"+sample, "--replicas=3")
			newHolder := waitForLeaseHolder(h, impl, holder)
			acquired := getLease(h, impl).Spec.AcquireTime
			if acquired == nil {
				t.Fatalf("the Lease held by %s has no acquireTime", newHolder)
			}
			t.Logf("replica-2 (%s) acquired the Lease at %s", newHolder, acquired.Format(time.RFC3339Nano))
			WaitForPods(h, sample, 3)
			// The two new pods: created by replica-2 once it held the Lease
			// (creationTimestamp has whole seconds).
			for _, p := range OwnedPods(h, sample) {
				if !slices.Contains(before, p.Name) && p.CreationTimestamp.Time.Before(acquired.Truncate(time.Second)) {
					t.Errorf("pod %s was created at %s, before replica-2 held the Lease (%s)",
						p.Name, p.CreationTimestamp.Format(time.RFC3339), acquired.Format(time.RFC3339Nano))
				}
			}
			if !second.Running() {
				t.Errorf("replica-2 exited: %v\n%s", second.ExitErr(), second.Tail(20))
			}
		})
	}
}

// getLease reads the implementation's Lease.
func getLease(h *harness.H, impl Implementation) *coordinationv1.Lease {
	h.Helper()
	l, err := h.Env.Client.CoordinationV1().Leases(h.Namespace).Get(h.Ctx, impl.Lease, metav1.GetOptions{})
	if err != nil {
		h.Fatal(err)
	}
	return l
}

// waitForLeaseHolder waits until the implementation's Lease is held by
// someone other than not, and returns the holder.
func waitForLeaseHolder(h *harness.H, impl Implementation, not string) string {
	h.Helper()
	var holder string
	h.WaitFor(fmt.Sprintf("Lease %s held by a replica other than %q", impl.Lease, not), leaseDuration+time.Minute,
		func(ctx context.Context) (bool, string, error) {
			l, err := h.Env.Client.CoordinationV1().Leases(h.Namespace).Get(ctx, impl.Lease, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return false, "no Lease", nil
			}
			if err != nil {
				return false, "", err
			}
			holder = holderOf(l)
			return holder != "" && holder != not, "holder " + holder, nil
		})
	return holder
}

func holderOf(l *coordinationv1.Lease) string {
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// TestCustomPodRBACVerbRemoved runs each controller with its generated
// ClusterRole minus one verb, create on pods: it must say so where a user
// looks (a Warning event on the CustomPod, and its log), not loop silently.
func TestCustomPodRBACVerbRemoved(t *testing.T) {
	tier.Extended(t)
	outOfClusterOnly(t)
	for _, impl := range Implementations {
		t.Run(impl.Name, func(t *testing.T) {
			t.Parallel()
			h := harness.New(t)
			sample := impl.SampleName
			h.Track("custompod/" + sample)
			role, err := h.Env.Client.RbacV1().ClusterRoles().Get(h.Ctx, install(h, impl), metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			crippled := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: h.Namespace + "-no-pod-create"}}
			removed := false
			for _, r := range role.Rules {
				r = *r.DeepCopy()
				if contains(r.APIGroups, "") && contains(r.Resources, "pods") && contains(r.Verbs, "create") {
					r.Verbs = remove(r.Verbs, "create")
					removed = true
				}
				crippled.Rules = append(crippled.Rules, r)
			}
			if !removed {
				t.Fatalf("ClusterRole %s grants no create on pods: nothing to remove", role.Name)
			}
			if _, err := h.Env.Client.RbacV1().ClusterRoles().Create(h.Ctx, crippled, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				_ = h.Env.Client.RbacV1().ClusterRoles().Delete(context.Background(), crippled.Name, metav1.DeleteOptions{})
			})
			ctrl := StartBinary(h, impl.Impl, "controller", h.KubeconfigAs("controller", crippled.Name), impls.Settings{})
			h.KubectlIn(h.Path(impl.Dir), "apply", "-f", impl.Sample)

			want := `cannot create resource "pods"`
			h.WaitFor("a Warning event on custompod/"+sample+" saying "+want, time.Minute,
				func(ctx context.Context) (bool, string, error) {
					out, err := h.KubectlErr("get", "events", "--field-selector",
						"involvedObject.name="+sample+",type=Warning", "-o", "custom-columns=REASON:.reason,MESSAGE:.message", "--no-headers")
					return err == nil && strings.Contains(out, want), strings.TrimSpace(out), nil
				})
			// Logs quote the message, escaping its quotes: look for the words.
			if log := ctrl.Log(); !strings.Contains(log, "pods is forbidden") || !strings.Contains(log, "cannot create resource") {
				t.Errorf("the controller's log does not say that creating pods is forbidden:\n%s", ctrl.Tail(20))
			}
		})
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v || x == "*" {
			return true
		}
	}
	return false
}

func remove(s []string, v string) []string {
	var out []string
	for _, x := range s {
		if x != v {
			out = append(out, x)
		}
	}
	return out
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
