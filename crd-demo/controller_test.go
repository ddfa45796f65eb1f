package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	metav1apply "k8s.io/client-go/applyconfigurations/meta/v1"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"

	samplecrdv1 "example.com/k8s-demo/crd-demo/pkg/apis/samplecrd/v1"
	"example.com/k8s-demo/crd-demo/pkg/backend"
	samplecrdv1apply "example.com/k8s-demo/crd-demo/pkg/client/applyconfiguration/samplecrd/v1"
	"example.com/k8s-demo/crd-demo/pkg/client/clientset/versioned/fake"
	informers "example.com/k8s-demo/crd-demo/pkg/client/informers/externalversions"
)

// The unit tests follow kubernetes/sample-controller: a fake clientset stands
// in for the API server, the informer's cache is filled by hand, syncHandler
// runs once, and the test compares the client actions it made with the ones
// expected, object by object. The backend is the in-memory Store, behind a
// recorder of the writes that reach it, which the tests compare the same way.

var (
	alwaysReady = func() bool { return true }
	now         = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	errDown     = errors.New("backend is down")
)

type fixture struct {
	t *testing.T

	client     *fake.Clientset
	kubeclient *k8sfake.Clientset
	store      *backend.Store
	backend    *recordingBackend
	recorder   *events.FakeRecorder

	// Objects to put in the informer's cache, and in the fake clientset.
	networks []*samplecrdv1.Network
	// Actions expected to happen on the client.
	actions []core.Action
	// Writes expected to reach the backend, as "create NAME", "update ID", "delete ID".
	writes []string
	// Events expected, as "Type Reason message-prefix".
	events []string
}

func newFixture(t *testing.T) *fixture {
	store := backend.NewMemoryStore()
	return &fixture{t: t, store: store, backend: &recordingBackend{Store: store}}
}

// recordingBackend passes every call to a Store and records the writes; with
// fail set, a write is recorded and fails with it, as when the backend is down.
type recordingBackend struct {
	*backend.Store
	fail   error
	writes []string
}

func (r *recordingBackend) Create(ctx context.Context, n backend.Network) (backend.Network, error) {
	r.writes = append(r.writes, "create "+n.Name)
	if r.fail != nil {
		return backend.Network{}, r.fail
	}
	return r.Store.Create(ctx, n)
}

func (r *recordingBackend) Update(ctx context.Context, n backend.Network) (backend.Network, error) {
	r.writes = append(r.writes, "update "+n.ID)
	if r.fail != nil {
		return backend.Network{}, r.fail
	}
	return r.Store.Update(ctx, n)
}

func (r *recordingBackend) Delete(ctx context.Context, id string) error {
	r.writes = append(r.writes, "delete "+id)
	if r.fail != nil {
		return r.fail
	}
	return r.Store.Delete(ctx, id)
}

func (f *fixture) newController(ctx context.Context) *Controller {
	var objects []runtime.Object
	for _, n := range f.networks {
		objects = append(objects, n)
	}
	f.client = fake.NewClientset(objects...)
	f.kubeclient = k8sfake.NewClientset()
	f.recorder = events.NewFakeRecorder(10)

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

// sync calls syncHandler for network and checks the error.
func (f *fixture) sync(ctx context.Context, network *samplecrdv1.Network, wantErr bool) {
	f.t.Helper()
	c := f.newController(ctx)
	err := c.syncHandler(ctx, cache.MetaObjectToName(network))
	if wantErr && err == nil {
		f.t.Error("expected error syncing network, got nil")
	} else if !wantErr && err != nil {
		f.t.Errorf("error syncing network: %v", err)
	}
}

// check compares the client actions, the backend writes and the events with
// the expected ones.
func (f *fixture) check() {
	f.t.Helper()
	f.checkActions()
	if diff := cmp.Diff(f.writes, f.backend.writes); diff != "" {
		f.t.Errorf("writes to the backend (-want +got):\n%s", diff)
	}
	f.checkEvents()
}

// run calls syncHandler for network and checks everything: sync, then check.
func (f *fixture) run(ctx context.Context, network *samplecrdv1.Network, wantErr bool) {
	f.t.Helper()
	f.sync(ctx, network, wantErr)
	f.check()
}

func (f *fixture) checkActions() {
	f.t.Helper()
	actions := filterInformerActions(f.client.Actions())
	for i, action := range actions {
		if i >= len(f.actions) {
			f.t.Errorf("%d unexpected actions: %s", len(actions)-len(f.actions), describe(actions[i:]))
			break
		}
		checkAction(f.t, f.actions[i], action)
	}
	if len(f.actions) > len(actions) {
		f.t.Errorf("%d additional expected actions: %s", len(f.actions)-len(actions), describe(f.actions[len(actions):]))
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
// resource and subresource, with the same options and the same object (for
// an update) or the same patch (for an apply).
func checkAction(t *testing.T, expected, actual core.Action) {
	t.Helper()
	if !expected.Matches(actual.GetVerb(), actual.GetResource().Resource) || actual.GetSubresource() != expected.GetSubresource() {
		t.Errorf("expected %s %s/%s, got %s %s/%s", expected.GetVerb(), expected.GetResource().Resource, expected.GetSubresource(),
			actual.GetVerb(), actual.GetResource().Resource, actual.GetSubresource())
		return
	}
	what := actual.GetVerb() + " " + actual.GetResource().Resource + "/" + actual.GetSubresource()
	switch e := expected.(type) {
	case core.UpdateActionImpl:
		a, ok := actual.(core.UpdateActionImpl)
		if !ok {
			t.Errorf("%s: expected an update, got %T", what, actual)
			return
		}
		if diff := cmp.Diff(e.UpdateOptions, a.UpdateOptions); diff != "" {
			t.Errorf("%s: options differ (-want +got):\n%s", what, diff)
		}
		if diff := cmp.Diff(e.GetObject(), a.GetObject()); diff != "" {
			t.Errorf("%s: object differs (-want +got):\n%s", what, diff)
		}
	case core.PatchActionImpl:
		a, ok := actual.(core.PatchActionImpl)
		if !ok {
			t.Errorf("%s: expected a patch, got %T", what, actual)
			return
		}
		if e.Name != a.Name || e.PatchType != a.PatchType {
			t.Errorf("%s: expected a %s patch of %s, got a %s patch of %s", what, e.PatchType, e.Name, a.PatchType, a.Name)
		}
		if diff := cmp.Diff(e.PatchOptions, a.PatchOptions); diff != "" {
			t.Errorf("%s: options differ (-want +got):\n%s", what, diff)
		}
		// Compared as JSON values, so that the order of the keys does not matter.
		var ev, av any
		if err := json.Unmarshal(e.Patch, &ev); err != nil {
			t.Fatalf("%s: expected patch: %v", what, err)
		}
		if err := json.Unmarshal(a.Patch, &av); err != nil {
			t.Fatalf("%s: patch sent is not JSON: %v: %s", what, err, a.Patch)
		}
		if diff := cmp.Diff(ev, av); diff != "" {
			t.Errorf("%s: patch differs (-want +got):\n%s", what, diff)
		}
	default:
		t.Errorf("%s: no comparison for expected %T", what, expected)
	}
}

// describe prints actions for a failure message, a patch as the text it is.
func describe(actions []core.Action) string {
	var b strings.Builder
	for _, a := range actions {
		fmt.Fprintf(&b, "\n\t%s %s/%s", a.GetVerb(), a.GetResource().Resource, a.GetSubresource())
		if p, ok := a.(core.PatchAction); ok {
			fmt.Fprintf(&b, " %s", p.GetPatch())
		}
	}
	return b.String()
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

var networksResource = samplecrdv1.SchemeGroupVersion.WithResource("networks")

// expectUpdate expects the Update that adds or removes the finalizer.
func (f *fixture) expectUpdate(n *samplecrdv1.Network) {
	f.actions = append(f.actions, core.NewUpdateActionWithOptions(networksResource, n.Namespace, n,
		metav1.UpdateOptions{FieldManager: "network-controller"}))
}

// expectApplyStatus expects the status apply of n's Ready condition, with
// this status, reason and message, and networkID unless it is empty.
func (f *fixture) expectApplyStatus(n *samplecrdv1.Network, status metav1.ConditionStatus, reason, message, networkID string) {
	f.t.Helper()
	st := samplecrdv1apply.NetworkStatus().
		WithObservedGeneration(n.Generation).
		WithConditions(metav1apply.Condition().
			WithType(samplecrdv1.ConditionReady).WithStatus(status).WithReason(reason).WithMessage(message).
			WithObservedGeneration(n.Generation).WithLastTransitionTime(metav1.NewTime(now)))
	if networkID != "" {
		st.WithNetworkID(networkID)
	}
	patch, err := json.Marshal(samplecrdv1apply.Network(n.Name, n.Namespace).WithUID(n.UID).WithStatus(st))
	if err != nil {
		f.t.Fatal(err)
	}
	force := true
	f.actions = append(f.actions, core.NewPatchSubresourceActionWithOptions(networksResource, n.Namespace, n.Name,
		types.ApplyPatchType, patch, metav1.PatchOptions{FieldManager: "network-controller", Force: &force}, "status"))
}

func newNetwork(name, cidr, gateway string) *samplecrdv1.Network {
	return &samplecrdv1.Network{
		TypeMeta:   metav1.TypeMeta{APIVersion: samplecrdv1.SchemeGroupVersion.String(), Kind: "Network"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault, UID: types.UID(name + "-uid"), Generation: 1},
		Spec:       samplecrdv1.NetworkSpec{Cidr: cidr, Gateway: gateway},
	}
}

// withReady returns a copy of n with the status the controller writes.
func withReady(n *samplecrdv1.Network, status metav1.ConditionStatus, reason, message, networkID string) *samplecrdv1.Network {
	n = n.DeepCopy()
	n.Status.ObservedGeneration = n.Generation
	n.Status.NetworkID = networkID
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

func deleting(n *samplecrdv1.Network) *samplecrdv1.Network {
	n = n.DeepCopy()
	n.DeletionTimestamp = &metav1.Time{Time: now}
	return n
}

// seedBackend puts a network in the backend, as it is before the sync, and returns it.
func (f *fixture) seedBackend(name, cidr, gateway, description string) backend.Network {
	f.t.Helper()
	n, err := f.store.Create(context.Background(), backend.Network{Name: name, CIDR: cidr, GatewayIP: gateway, Description: description})
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

// backendHas checks that the backend holds exactly these networks.
func (f *fixture) backendHas(want ...backend.Network) {
	f.t.Helper()
	got, err := f.store.List(context.Background(), "")
	if err != nil {
		f.t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		f.t.Errorf("backend networks (-want +got):\n%s", diff)
	}
}

// backendNetwork returns the backend's network called name.
func (f *fixture) backendNetwork(name string) backend.Network {
	f.t.Helper()
	n, err := backend.FindByName(context.Background(), f.store, name)
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

const synced = "The backend network matches the spec"

func TestCreatesBackendNetwork(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t)
	network := newNetwork("test", "192.168.0.0/16", "192.168.0.1")
	f.networks = append(f.networks, network)

	f.sync(ctx, network, false)

	// The backend picked the ID: read it, then expect it everywhere.
	created := f.backendNetwork("default/test")
	f.backendHas(backend.Network{ID: created.ID, Name: "default/test", CIDR: "192.168.0.0/16", GatewayIP: "192.168.0.1", Description: "test-uid"})
	// First the finalizer, then the backend network, then the status.
	f.expectUpdate(withFinalizer(network))
	f.writes = []string{"create default/test"}
	f.expectApplyStatus(network, metav1.ConditionTrue, ReasonSynced, synced, created.ID)
	f.events = []string{"Normal Created Created backend network " + created.ID}
	f.check()
}

func TestUpdatesBackendNetwork(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t)
	own := f.seedBackend("default/test", "192.168.0.0/16", "192.168.0.1", "test-uid")
	// The user changed the gateway: generation 2, status still about generation 1.
	network := withReady(withFinalizer(newNetwork("test", "192.168.0.0/16", "192.168.0.1")), metav1.ConditionTrue, ReasonSynced, synced, own.ID)
	network.Generation = 2
	network.Spec.Gateway = "192.168.255.254"
	f.networks = append(f.networks, network)

	f.writes = []string{"update " + own.ID}
	f.expectApplyStatus(network, metav1.ConditionTrue, ReasonSynced, synced, own.ID)
	f.events = []string{"Normal Updated Updated backend network " + own.ID + ": cidr 192.168.0.0/16 → 192.168.0.0/16, gateway 192.168.0.1 → 192.168.255.254"}
	f.run(ctx, network, false)

	own.GatewayIP = "192.168.255.254"
	f.backendHas(own)
}

func TestNothingToDo(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t)
	own := f.seedBackend("default/test", "192.168.0.0/16", "192.168.0.1", "test-uid")
	network := withReady(withFinalizer(newNetwork("test", "192.168.0.0/16", "192.168.0.1")), metav1.ConditionTrue, ReasonSynced, synced, own.ID)
	f.networks = append(f.networks, network)

	// No actions, no writes, no events: an unchanged status is not written again.
	f.run(ctx, network, false)
	f.backendHas(own)
}

// TestRecordsBackendNetworkFoundByName is a controller stopped after the
// backend's Create and before the status write: the next one finds the
// network by name, knows it by its description, and records its ID.
func TestRecordsBackendNetworkFoundByName(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t)
	own := f.seedBackend("default/test", "192.168.0.0/16", "192.168.0.1", "test-uid")
	network := withFinalizer(newNetwork("test", "192.168.0.0/16", "192.168.0.1"))
	f.networks = append(f.networks, network)

	f.expectApplyStatus(network, metav1.ConditionTrue, ReasonSynced, synced, own.ID)
	f.run(ctx, network, false)
	f.backendHas(own)
}

// TestFindsBackendNetworkByRecordedID: the backend network was renamed
// behind the controller's back; the recorded ID still finds it, and the
// network of the old name is someone else's.
func TestFindsBackendNetworkByRecordedID(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t)
	own := f.seedBackend("default/renamed", "192.168.0.0/16", "192.168.0.1", "test-uid")
	other := f.seedBackend("default/test", "10.0.0.0/8", "10.0.0.1", "")
	network := withReady(withFinalizer(newNetwork("test", "192.168.0.0/16", "192.168.0.1")), metav1.ConditionTrue, ReasonSynced, synced, own.ID)
	f.networks = append(f.networks, network)

	f.run(ctx, network, false)
	f.backendHas(own, other)
}

// TestRecreatesMissingBackendNetwork: the network whose ID the status
// records was deleted in the backend. The controller makes a new one and
// records its ID.
func TestRecreatesMissingBackendNetwork(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t)
	network := withReady(withFinalizer(newNetwork("test", "192.168.0.0/16", "192.168.0.1")), metav1.ConditionTrue, ReasonSynced, synced, "deleted-id")
	f.networks = append(f.networks, network)

	f.sync(ctx, network, false)

	created := f.backendNetwork("default/test")
	if created.ID == "deleted-id" {
		t.Fatal("the recreated backend network has the deleted one's ID")
	}
	f.backendHas(backend.Network{ID: created.ID, Name: "default/test", CIDR: "192.168.0.0/16", GatewayIP: "192.168.0.1", Description: "test-uid"})
	f.writes = []string{"create default/test"}
	f.expectApplyStatus(network, metav1.ConditionTrue, ReasonSynced, synced, created.ID)
	f.events = []string{"Normal Created Created backend network " + created.ID}
	f.check()
}

// TestForeignBackendNetworkIsLeftAlone: a backend network of the Network's
// name exists, and is not the Network's. It is neither adopted nor changed:
// the spec's cidr differs, and still no write reaches the backend.
func TestForeignBackendNetworkIsLeftAlone(t *testing.T) {
	for _, tc := range []struct {
		name        string
		description string // the foreign network's
		recordedID  string // the Network's status.networkID; "foreign" for the foreign network's
		owner       string // as the message names it
	}{
		{name: "no owner", description: "", owner: "no owner"},
		{name: "another Network's", description: "other-uid", owner: `owner "other-uid"`},
		{name: "recorded ID gone, name taken", description: "other-uid", recordedID: "deleted-id", owner: `owner "other-uid"`},
		{name: "recorded ID now someone else's", description: "other-uid", recordedID: "foreign", owner: `owner "other-uid"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			f := newFixture(t)
			foreign := f.seedBackend("default/test", "10.0.0.0/8", "10.0.0.1", tc.description)
			network := newNetwork("test", "192.168.0.0/16", "192.168.0.1")
			if tc.recordedID != "" {
				id := tc.recordedID
				if id == "foreign" {
					id = foreign.ID
				}
				network = withReady(withFinalizer(network), metav1.ConditionTrue, ReasonSynced, synced, id)
			} else {
				f.expectUpdate(withFinalizer(network))
			}
			f.networks = append(f.networks, network)

			message := "backend network " + foreign.ID + ` named "default/test" has ` + tc.owner +
				", not this Network (UID test-uid); it is left as it is"
			// No networkID: the status names no network of this Network's.
			f.expectApplyStatus(network, metav1.ConditionFalse, ReasonBackendNetworkConflict, message, "")
			f.events = []string{"Warning BackendNetworkConflict " + message}
			// An error, so that the key is retried with backoff until someone
			// removes the conflict.
			f.run(ctx, network, true)
			f.backendHas(foreign)
		})
	}
}

func TestDeleteRemovesBackendNetworkThenFinalizer(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t)
	own := f.seedBackend("default/test", "192.168.0.0/16", "192.168.0.1", "test-uid")
	other := f.seedBackend("default/other", "10.0.0.0/8", "10.0.0.1", "other-uid")
	network := deleting(withReady(withFinalizer(newNetwork("test", "192.168.0.0/16", "192.168.0.1")), metav1.ConditionTrue, ReasonSynced, synced, own.ID))
	f.networks = append(f.networks, network)

	withoutFinalizer := network.DeepCopy()
	withoutFinalizer.Finalizers = []string{}
	f.writes = []string{"delete " + own.ID}
	f.expectUpdate(withoutFinalizer)
	f.events = []string{"Normal Deleted Deleted backend network " + own.ID}
	f.run(ctx, network, false)
	f.backendHas(other)
}

// TestDeleteLeavesForeignBackendNetwork: the backend network of the deleted
// Network's name is not its own. It stays; the finalizer goes all the same.
func TestDeleteLeavesForeignBackendNetwork(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t)
	foreign := f.seedBackend("default/test", "192.168.0.0/16", "192.168.0.1", "")
	network := deleting(withFinalizer(newNetwork("test", "192.168.0.0/16", "192.168.0.1")))
	f.networks = append(f.networks, network)

	withoutFinalizer := network.DeepCopy()
	withoutFinalizer.Finalizers = []string{}
	f.expectUpdate(withoutFinalizer)
	f.events = []string{"Warning BackendNetworkConflict backend network " + foreign.ID + ` named "default/test" has no owner, not this Network (UID test-uid); it is left as it is`}
	f.run(ctx, network, false)
	f.backendHas(foreign)
}

func TestDeleteWhenBackendNetworkIsAlreadyGone(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t)
	network := deleting(withFinalizer(newNetwork("test", "192.168.0.0/16", "192.168.0.1")))
	network.Finalizers = append(network.Finalizers, "example.com/someone-else")
	network.Status.NetworkID = "deleted-id"
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

func TestBackendErrorSetsReadyFalseAndRequeues(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t)
	f.backend.fail = errDown
	network := withFinalizer(newNetwork("test", "192.168.0.0/16", "192.168.0.1"))
	f.networks = append(f.networks, network)

	message := "creating backend network: backend is down"
	f.writes = []string{"create default/test"}
	f.expectApplyStatus(network, metav1.ConditionFalse, ReasonBackendError, message, "")
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
	f.check()
}

func TestBackendErrorOnDeleteKeepsFinalizer(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t)
	own := f.seedBackend("default/test", "192.168.0.0/16", "192.168.0.1", "test-uid")
	f.backend.fail = errDown
	network := deleting(withReady(withFinalizer(newNetwork("test", "192.168.0.0/16", "192.168.0.1")), metav1.ConditionTrue, ReasonSynced, synced, own.ID))
	f.networks = append(f.networks, network)

	// No finalizer removal: the Network must outlive its backend network. The
	// status keeps the ID: the network is still there.
	message := "deleting backend network " + own.ID + ": backend is down"
	f.writes = []string{"delete " + own.ID}
	f.expectApplyStatus(network, metav1.ConditionFalse, ReasonBackendError, message, own.ID)
	f.events = []string{"Warning BackendError " + message}
	f.run(ctx, network, true)
	f.backendHas(own)
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
	client := fake.NewClientset(a)
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
