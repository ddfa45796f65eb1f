package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"

	samplecrdv1 "example.com/k8s-demo/crd-demo/pkg/apis/samplecrd/v1"
	"example.com/k8s-demo/crd-demo/pkg/backend"
	"example.com/k8s-demo/crd-demo/pkg/client/clientset/versioned/fake"
	informers "example.com/k8s-demo/crd-demo/pkg/client/informers/externalversions"
)

// The unit tests follow kubernetes/sample-controller: a fake clientset stands
// in for the API server, the informer's cache is filled by hand, syncHandler
// runs once, and the test compares the client actions it made with the ones
// expected, object by object. The backend is the in-memory Store.

var (
	alwaysReady = func() bool { return true }
	now         = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	errDown     = errors.New("backend is down")
)

type fixture struct {
	t *testing.T

	client     *fake.Clientset
	kubeclient *k8sfake.Clientset
	backend    backend.Client
	recorder   *record.FakeRecorder

	// Objects to put in the informer's cache, and in the fake clientset.
	networks []*samplecrdv1.Network
	// Actions expected to happen on the client.
	actions []core.Action
	// Events expected, as "Type Reason message-prefix".
	events []string
}

func newFixture(t *testing.T) *fixture {
	return &fixture{t: t, backend: backend.NewMemoryStore()}
}

func (f *fixture) newController(ctx context.Context) *Controller {
	var objects []runtime.Object
	for _, n := range f.networks {
		objects = append(objects, n)
	}
	// NewSimpleClientset, not NewClientset: the latter tracks managed fields
	// and needs an OpenAPI schema of the types, which CRDs do not have here
	// (kubernetes/kubernetes#126850).
	f.client = fake.NewSimpleClientset(objects...)
	f.kubeclient = k8sfake.NewClientset()
	f.recorder = record.NewFakeRecorder(10)

	i := informers.NewSharedInformerFactory(f.client, 0)
	c := NewController(ctx, f.kubeclient, f.client, i.Samplecrd().V1().Networks(), f.backend, time.Hour)
	c.networksSynced = alwaysReady
	c.recorder = f.recorder
	c.clock = testingclock.NewFakePassiveClock(now)

	for _, n := range f.networks {
		if err := i.Samplecrd().V1().Networks().Informer().GetIndexer().Add(n); err != nil {
			f.t.Fatal(err)
		}
	}
	return c
}

// run calls syncHandler for network and checks the error, the actions and the events.
func (f *fixture) run(ctx context.Context, network *samplecrdv1.Network, wantErr bool) {
	f.t.Helper()
	c := f.newController(ctx)
	err := c.syncHandler(ctx, cache.MetaObjectToName(network))
	if wantErr && err == nil {
		f.t.Error("expected error syncing network, got nil")
	} else if !wantErr && err != nil {
		f.t.Errorf("error syncing network: %v", err)
	}
	f.checkActions()
	f.checkEvents()
}

func (f *fixture) checkActions() {
	f.t.Helper()
	actions := filterInformerActions(f.client.Actions())
	for i, action := range actions {
		if i >= len(f.actions) {
			f.t.Errorf("%d unexpected actions: %+v", len(actions)-len(f.actions), actions[i:])
			break
		}
		checkAction(f.t, f.actions[i], action)
	}
	if len(f.actions) > len(actions) {
		f.t.Errorf("%d additional expected actions: %+v", len(f.actions)-len(actions), f.actions[len(actions):])
	}
	if k := filterInformerActions(f.kubeclient.Actions()); len(k) > 0 {
		f.t.Errorf("unexpected actions on the kube client: %+v", k)
	}
}

func (f *fixture) checkEvents() {
	f.t.Helper()
	close(f.recorder.Events)
	var got []string
	for e := range f.recorder.Events {
		got = append(got, e)
	}
	if len(got) != len(f.events) {
		f.t.Fatalf("events = %q, want %d events starting %q", got, len(f.events), f.events)
	}
	for i := range got {
		if !strings.HasPrefix(got[i], f.events[i]) {
			f.t.Errorf("event %d = %q, want it to start with %q", i, got[i], f.events[i])
		}
	}
}

// checkAction verifies that expected and actual are the same verb on the same
// resource and subresource, with the same object.
func checkAction(t *testing.T, expected, actual core.Action) {
	t.Helper()
	if !(expected.Matches(actual.GetVerb(), actual.GetResource().Resource) && actual.GetSubresource() == expected.GetSubresource()) {
		t.Errorf("expected %s %s/%s, got %s %s/%s", expected.GetVerb(), expected.GetResource().Resource, expected.GetSubresource(),
			actual.GetVerb(), actual.GetResource().Resource, actual.GetSubresource())
		return
	}
	e, ok1 := expected.(core.UpdateAction)
	a, ok2 := actual.(core.UpdateAction)
	if !ok1 || !ok2 {
		t.Errorf("expected and actual must both be updates, got %T and %T", expected, actual)
		return
	}
	if diff := cmp.Diff(e.GetObject(), a.GetObject()); diff != "" {
		t.Errorf("%s %s/%s: object differs (-want +got):\n%s", actual.GetVerb(), actual.GetResource().Resource, actual.GetSubresource(), diff)
	}
}

// filterInformerActions drops the list and watch calls the informers make:
// the tests care about the writes.
func filterInformerActions(actions []core.Action) []core.Action {
	var ret []core.Action
	for _, action := range actions {
		if action.Matches("list", "networks") || action.Matches("watch", "networks") {
			continue
		}
		ret = append(ret, action)
	}
	return ret
}

func (f *fixture) expectUpdate(n *samplecrdv1.Network) {
	f.actions = append(f.actions, core.NewUpdateAction(samplecrdv1.SchemeGroupVersion.WithResource("networks"), n.Namespace, n))
}

func (f *fixture) expectUpdateStatus(n *samplecrdv1.Network) {
	f.actions = append(f.actions, core.NewUpdateSubresourceAction(samplecrdv1.SchemeGroupVersion.WithResource("networks"), "status", n.Namespace, n))
}

func newNetwork(name, cidr, gateway string) *samplecrdv1.Network {
	return &samplecrdv1.Network{
		TypeMeta:   metav1.TypeMeta{APIVersion: samplecrdv1.SchemeGroupVersion.String(), Kind: "Network"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault, Generation: 1},
		Spec:       samplecrdv1.NetworkSpec{Cidr: cidr, Gateway: gateway},
	}
}

// withReady returns a copy of n with the status the controller writes.
func withReady(n *samplecrdv1.Network, status metav1.ConditionStatus, reason, message string) *samplecrdv1.Network {
	n = n.DeepCopy()
	n.Status.ObservedGeneration = n.Generation
	n.Status.Conditions = []metav1.Condition{{
		Type: samplecrdv1.ConditionReady, Status: status, Reason: reason, Message: message,
		ObservedGeneration: n.Generation, LastTransitionTime: metav1.NewTime(now),
	}}
	return n
}

func withFinalizer(n *samplecrdv1.Network) *samplecrdv1.Network {
	n = n.DeepCopy()
	n.Finalizers = append(n.Finalizers, finalizerName)
	return n
}

// backendNetworks returns the backend's networks without their IDs.
func (f *fixture) backendNetworks() []backend.Network {
	f.t.Helper()
	networks, err := f.backend.List(context.Background(), "")
	if err != nil {
		f.t.Fatal(err)
	}
	for i := range networks {
		networks[i].ID = ""
	}
	return networks
}

func (f *fixture) seedBackend(name, cidr, gateway string) {
	f.t.Helper()
	if _, err := f.backend.Create(context.Background(), backend.Network{Name: name, CIDR: cidr, GatewayIP: gateway}); err != nil {
		f.t.Fatal(err)
	}
}

const synced = "The backend network matches the spec"

func TestCreatesBackendNetwork(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t)
	network := newNetwork("test", "192.168.0.0/16", "192.168.0.1")
	f.networks = append(f.networks, network)

	// First the finalizer, then the backend network, then the status.
	f.expectUpdate(withFinalizer(network))
	f.expectUpdateStatus(withReady(withFinalizer(network), metav1.ConditionTrue, ReasonSynced, synced))
	f.events = []string{"Normal Created Created backend network "}
	f.run(ctx, network, false)

	want := []backend.Network{{Name: "default/test", CIDR: "192.168.0.0/16", GatewayIP: "192.168.0.1"}}
	if diff := cmp.Diff(want, f.backendNetworks()); diff != "" {
		t.Errorf("backend networks (-want +got):\n%s", diff)
	}
}

func TestUpdatesBackendNetwork(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t)
	// The user changed the gateway: generation 2, status still about generation 1.
	network := withReady(withFinalizer(newNetwork("test", "192.168.0.0/16", "192.168.0.1")), metav1.ConditionTrue, ReasonSynced, synced)
	network.Generation = 2
	network.Spec.Gateway = "192.168.255.254"
	f.networks = append(f.networks, network)
	f.seedBackend("default/test", "192.168.0.0/16", "192.168.0.1")

	f.expectUpdateStatus(withReady(network, metav1.ConditionTrue, ReasonSynced, synced))
	f.events = []string{"Normal Updated Updated backend network "}
	f.run(ctx, network, false)

	want := []backend.Network{{Name: "default/test", CIDR: "192.168.0.0/16", GatewayIP: "192.168.255.254"}}
	if diff := cmp.Diff(want, f.backendNetworks()); diff != "" {
		t.Errorf("backend networks (-want +got):\n%s", diff)
	}
}

func TestNothingToDo(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t)
	network := withReady(withFinalizer(newNetwork("test", "192.168.0.0/16", "192.168.0.1")), metav1.ConditionTrue, ReasonSynced, synced)
	f.networks = append(f.networks, network)
	f.seedBackend("default/test", "192.168.0.0/16", "192.168.0.1")

	// No actions, no events: an unchanged status is not written again.
	f.run(ctx, network, false)

	want := []backend.Network{{Name: "default/test", CIDR: "192.168.0.0/16", GatewayIP: "192.168.0.1"}}
	if diff := cmp.Diff(want, f.backendNetworks()); diff != "" {
		t.Errorf("backend networks (-want +got):\n%s", diff)
	}
}

func TestDeleteRemovesBackendNetworkThenFinalizer(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t)
	network := withReady(withFinalizer(newNetwork("test", "192.168.0.0/16", "192.168.0.1")), metav1.ConditionTrue, ReasonSynced, synced)
	network.DeletionTimestamp = &metav1.Time{Time: now}
	f.networks = append(f.networks, network)
	f.seedBackend("default/test", "192.168.0.0/16", "192.168.0.1")
	f.seedBackend("default/other", "10.0.0.0/8", "10.0.0.1")

	withoutFinalizer := network.DeepCopy()
	withoutFinalizer.Finalizers = []string{}
	f.expectUpdate(withoutFinalizer)
	f.events = []string{"Normal Deleted Deleted backend network "}
	f.run(ctx, network, false)

	want := []backend.Network{{Name: "default/other", CIDR: "10.0.0.0/8", GatewayIP: "10.0.0.1"}}
	if diff := cmp.Diff(want, f.backendNetworks()); diff != "" {
		t.Errorf("backend networks (-want +got):\n%s", diff)
	}
}

func TestDeleteWhenBackendNetworkIsAlreadyGone(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t)
	network := withFinalizer(newNetwork("test", "192.168.0.0/16", "192.168.0.1"))
	network.Finalizers = append(network.Finalizers, "example.com/someone-else")
	network.DeletionTimestamp = &metav1.Time{Time: now}
	f.networks = append(f.networks, network)

	// Only our finalizer goes; the other one stays.
	withoutFinalizer := network.DeepCopy()
	withoutFinalizer.Finalizers = []string{"example.com/someone-else"}
	f.expectUpdate(withoutFinalizer)
	f.run(ctx, network, false)
}

func TestGoneNetworkIsLeftAlone(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t)
	// Not in the cache: with the finalizer, its backend network is gone already.
	f.run(ctx, newNetwork("test", "192.168.0.0/16", "192.168.0.1"), false)
}

// faultyBackend is a backend whose writes fail, as when it is down.
type faultyBackend struct {
	*backend.Store
}

func (faultyBackend) Create(context.Context, backend.Network) (backend.Network, error) {
	return backend.Network{}, errDown
}
func (faultyBackend) Update(context.Context, backend.Network) (backend.Network, error) {
	return backend.Network{}, errDown
}
func (faultyBackend) Delete(context.Context, string) error { return errDown }

func TestBackendErrorSetsReadyFalseAndRequeues(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t)
	f.backend = faultyBackend{backend.NewMemoryStore()}
	network := withFinalizer(newNetwork("test", "192.168.0.0/16", "192.168.0.1"))
	f.networks = append(f.networks, network)

	message := "creating backend network: backend is down"
	f.expectUpdateStatus(withReady(network, metav1.ConditionFalse, ReasonBackendError, message))
	f.events = []string{"Warning BackendError " + message}

	// Through the work queue this time, to see the key come back.
	c := f.newController(ctx)
	key := cache.MetaObjectToName(network)
	c.workqueue.Add(key)
	if !c.processNextWorkItem(ctx) {
		t.Fatal("processNextWorkItem reported a shut down queue")
	}
	if got := c.workqueue.NumRequeues(key); got != 1 {
		t.Errorf("NumRequeues = %d, want 1: a failed key must be retried with backoff", got)
	}
	f.checkActions()
	f.checkEvents()
}

func TestBackendErrorOnDeleteKeepsFinalizer(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t)
	store := backend.NewMemoryStore()
	f.backend = faultyBackend{store}
	network := withReady(withFinalizer(newNetwork("test", "192.168.0.0/16", "192.168.0.1")), metav1.ConditionTrue, ReasonSynced, synced)
	network.DeletionTimestamp = &metav1.Time{Time: now}
	f.networks = append(f.networks, network)
	if _, err := store.Create(ctx, backend.Network{Name: "default/test", CIDR: "192.168.0.0/16", GatewayIP: "192.168.0.1"}); err != nil {
		t.Fatal(err)
	}

	// No finalizer removal: the Network must outlive its backend network.
	f.events = []string{"Warning BackendError deleting backend network "}
	c := f.newController(ctx)
	if err := c.syncHandler(ctx, cache.MetaObjectToName(network)); err == nil {
		t.Error("expected error syncing network, got nil")
	}
	// The status message carries the backend's ID, unknown in advance: compare
	// everything else.
	actions := filterInformerActions(f.client.Actions())
	if len(actions) != 1 || actions[0].GetSubresource() != "status" {
		t.Fatalf("actions = %+v, want one status update", actions)
	}
	got := actions[0].(core.UpdateAction).GetObject().(*samplecrdv1.Network)
	cond := got.Status.Conditions[0]
	if cond.Status != metav1.ConditionFalse || cond.Reason != ReasonBackendError || !strings.HasSuffix(cond.Message, ": backend is down") {
		t.Errorf("Ready condition = %+v, want False/%s ending in the backend's error", cond, ReasonBackendError)
	}
	if len(got.Finalizers) != 1 {
		t.Errorf("finalizers = %v, want ours kept", got.Finalizers)
	}
	f.checkEvents()
}

// TestEventHandlers runs a real informer on the fake clientset and checks
// what the event handlers put on the queue, in particular that an update
// with an unchanged ResourceVersion (what a resync delivers) is dropped.
func TestEventHandlers(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	a := newNetwork("a", "10.0.0.0/8", "10.0.0.1")
	a.ResourceVersion = "1"
	client := fake.NewSimpleClientset(a)
	i := informers.NewSharedInformerFactory(client, 0)
	c := NewController(ctx, k8sfake.NewClientset(), client, i.Samplecrd().V1().Networks(), backend.NewMemoryStore(), 0)
	i.Start(ctx.Done())
	i.WaitForCacheSync(ctx.Done())

	// next waits for one key on the queue and takes it off.
	next := func(step string) cache.ObjectName {
		t.Helper()
		err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
			return c.workqueue.Len() > 0, nil
		})
		if err != nil {
			t.Fatalf("%s: nothing was queued", step)
		}
		key, _ := c.workqueue.Get()
		c.workqueue.Done(key)
		return key
	}
	networks := client.SamplecrdV1().Networks(metav1.NamespaceDefault)

	if key := next("initial list"); key.Name != "a" {
		t.Fatalf("initial list queued %v, want default/a", key)
	}

	// The fake clientset keeps the ResourceVersion it is given: an update
	// that leaves it alone looks like a resync.
	resync := a.DeepCopy()
	resync.Labels = map[string]string{"changed": "yes"}
	if _, err := networks.Update(ctx, resync, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A marker: events reach the handler in order, so if the update above
	// had been queued, it would come out before b.
	if _, err := networks.Create(ctx, newNetwork("b", "10.0.0.0/8", "10.0.0.1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if key := next("resync, then add b"); key.Name != "b" {
		t.Fatalf("queued %v, want default/b: an update with the same ResourceVersion must be ignored", key)
	}

	changed := resync.DeepCopy()
	changed.ResourceVersion = "2"
	if _, err := networks.Update(ctx, changed, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if key := next("update"); key.Name != "a" {
		t.Fatalf("update queued %v, want default/a", key)
	}

	if err := networks.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if key := next("delete"); key.Name != "a" {
		t.Fatalf("delete queued %v, want default/a", key)
	}
}
