package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"

	"example.com/k8s-demo/crd-demo/internal/testenv"
	samplecrdv1 "example.com/k8s-demo/crd-demo/pkg/apis/samplecrd/v1"
	"example.com/k8s-demo/crd-demo/pkg/backend"
	clientset "example.com/k8s-demo/crd-demo/pkg/client/clientset/versioned"
	informers "example.com/k8s-demo/crd-demo/pkg/client/informers/externalversions"
)

// The integration tests run the Network controller against a real
// kube-apiserver (envtest) with crd/ installed, and the real backend API
// served in-process by httptest.

var apiServer = testenv.New("crd")

func TestMain(m *testing.M) {
	code := m.Run()
	apiServer.Stop()
	os.Exit(code)
}

type harness struct {
	t             *testing.T
	ctx           context.Context
	cfg           *rest.Config
	kube          kubernetes.Interface
	networkClient clientset.Interface
	ns            string
	store         *backend.Store
	backendURL    string
	// down makes the backend answer 503 to everything.
	down atomic.Bool
}

func newHarness(t *testing.T) *harness {
	logger, ctx := ktesting.NewTestContext(t)
	h := &harness{t: t, ctx: ctx, cfg: apiServer.Config(t), store: backend.NewMemoryStore()}
	h.kube = kubernetes.NewForConfigOrDie(h.cfg)
	h.networkClient = clientset.NewForConfigOrDie(h.cfg)

	handler := backend.NewHandler(h.store, logger.WithName("backend"))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h.down.Load() {
			http.Error(w, "backend is down for the test", http.StatusServiceUnavailable)
			return
		}
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	h.backendURL = srv.URL

	ns, err := h.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "network-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h.ns = ns.Name
	return h
}

// startController runs the controller as main does, watching the test's
// namespace, and returns a function that stops it and waits until it has.
func (h *harness) startController(name string) (stop func()) {
	h.t.Helper()
	ctx, cancel := context.WithCancel(klog.NewContext(h.ctx, klog.FromContext(h.ctx).WithName(name)))
	bc, err := backend.NewHTTPClient(h.backendURL)
	if err != nil {
		h.t.Fatal(err)
	}
	factory := informers.NewSharedInformerFactoryWithOptions(h.networkClient, 0, informers.WithNamespace(h.ns))
	c := NewController(ctx, h.kube, h.networkClient, factory.Samplecrd().V1().Networks(), bc, 0)
	factory.Start(ctx.Done())
	done := make(chan error)
	go func() { done <- c.Run(ctx, 2) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			h.t.Errorf("%s: Run: %v", name, err)
		}
		factory.Shutdown()
	}
}

// eventually polls cond until it returns true, failing the test after 30s
// with the last error cond returned: what it saw instead.
func (h *harness) eventually(what string, cond func() (bool, error)) {
	h.t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(h.ctx, 20*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		ok, err := cond()
		last = err
		return ok, nil
	})
	if err != nil {
		h.t.Fatalf("timed out waiting for %s (last seen: %v)", what, last)
	}
}

func (h *harness) networks() []backend.Network {
	h.t.Helper()
	networks, err := h.store.List(h.ctx, "")
	if err != nil {
		h.t.Fatal(err)
	}
	return networks
}

// backendHas waits until the backend holds exactly one network, with these values.
func (h *harness) backendHas(name, cidr, gateway string) {
	h.t.Helper()
	h.eventually("backend network "+name+" "+cidr+" "+gateway, func() (bool, error) {
		n := h.networks()
		return len(n) == 1 && n[0].Name == name && n[0].CIDR == cidr && n[0].GatewayIP == gateway, nil
	})
}

// update changes a Network as a user would, on the version it reads: the
// controller may write the status between the test's read and its write,
// and the API server refuses a write to an older version with a Conflict.
func (h *harness) update(name string, change func(*samplecrdv1.Network)) {
	h.t.Helper()
	networks := h.networkClient.SamplecrdV1().Networks(h.ns)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := networks.Get(h.ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		change(n)
		_, err = networks.Update(h.ctx, n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		h.t.Fatalf("updating Network %s: %v", name, err)
	}
}

// readyIs waits until the Network's Ready condition has this status and
// reason, for the Network's current generation.
func (h *harness) readyIs(name string, status metav1.ConditionStatus, reason string) *samplecrdv1.Network {
	h.t.Helper()
	var network *samplecrdv1.Network
	h.eventually("Network "+name+" Ready="+string(status)+" "+reason, func() (bool, error) {
		var err error
		network, err = h.networkClient.SamplecrdV1().Networks(h.ns).Get(h.ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(network.Status.Conditions, samplecrdv1.ConditionReady)
		if c == nil || c.Status != status || c.Reason != reason || network.Status.ObservedGeneration != network.Generation {
			return false, fmt.Errorf("generation %d, status %+v", network.Generation, network.Status)
		}
		return true, nil
	})
	return network
}

// hasEvent waits until the Network has an event of this type and reason, and
// returns its message.
func (h *harness) hasEvent(name, eventType, reason string) string {
	h.t.Helper()
	var message string
	h.eventually("event "+eventType+" "+reason+" on "+name, func() (bool, error) {
		events, err := h.kube.CoreV1().Events(h.ns).List(h.ctx, metav1.ListOptions{
			FieldSelector: fields.Set{"involvedObject.name": name, "involvedObject.kind": "Network"}.String(),
		})
		if err != nil {
			return false, err
		}
		i := slices.IndexFunc(events.Items, func(e corev1.Event) bool { return e.Type == eventType && e.Reason == reason })
		if i < 0 {
			return false, nil
		}
		message = events.Items[i].Message
		return true, nil
	})
	return message
}

// ownsStatus checks, in managedFields, that the controller's server-side
// apply owns the status fields it writes.
func ownsStatus(t *testing.T, network *samplecrdv1.Network) {
	t.Helper()
	for _, m := range network.ManagedFields {
		if m.Manager == fieldManager && m.Operation == metav1.ManagedFieldsOperationApply && m.Subresource == "status" && m.FieldsV1 != nil {
			for _, field := range []string{`"f:networkID"`, `"f:observedGeneration"`, `"k:{\"type\":\"Ready\"}"`} {
				if !strings.Contains(m.FieldsV1.GetRawString(), field) {
					t.Errorf("the %s apply of the status does not own %s: %s", fieldManager, field, m.FieldsV1.GetRawString())
				}
			}
			return
		}
	}
	t.Errorf("managedFields has no Apply of the status by %s: %+v", fieldManager, network.ManagedFields)
}

func newExampleNetwork() *samplecrdv1.Network {
	return &samplecrdv1.Network{
		ObjectMeta: metav1.ObjectMeta{Name: "example-network"},
		Spec:       samplecrdv1.NetworkSpec{Cidr: "192.168.0.0/16", Gateway: "192.168.0.1"},
	}
}

// TestNetworkLifecycle creates, updates and deletes a Network and checks that
// each change reaches the backend, including a delete made while the
// controller is down.
func TestNetworkLifecycle(t *testing.T) {
	h := newHarness(t)
	networks := h.networkClient.SamplecrdV1().Networks(h.ns)
	backendName := h.ns + "/example-network"
	stop := h.startController("first")

	// Create.
	if _, err := networks.Create(h.ctx, newExampleNetwork(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.backendHas(backendName, "192.168.0.0/16", "192.168.0.1")
	network := h.readyIs("example-network", metav1.ConditionTrue, ReasonSynced)
	if !slices.Contains(network.Finalizers, finalizerName) {
		t.Errorf("finalizers = %v, want %s", network.Finalizers, finalizerName)
	}
	h.hasEvent("example-network", corev1.EventTypeNormal, ReasonCreated)
	// The backend network carries the Network's UID; the status, its ID.
	if n := h.networks()[0]; n.Description != string(network.UID) || network.Status.NetworkID != n.ID {
		t.Errorf("backend network %+v, status.networkID %q; want the description %s (the Network's UID) and the status naming %s",
			n, network.Status.NetworkID, network.UID, n.ID)
	}
	ownsStatus(t, network)

	// Update.
	h.update("example-network", func(n *samplecrdv1.Network) {
		n.Spec.Cidr = "10.10.0.0/16"
		n.Spec.Gateway = "10.10.0.1"
	})
	h.backendHas(backendName, "10.10.0.0/16", "10.10.0.1")
	if network = h.readyIs("example-network", metav1.ConditionTrue, ReasonSynced); network.Status.ObservedGeneration != 2 {
		t.Errorf("observedGeneration = %d, want 2", network.Status.ObservedGeneration)
	}
	h.hasEvent("example-network", corev1.EventTypeNormal, ReasonUpdated)

	// Delete while the controller is down: without a finalizer it would
	// never hear of it. The finalizer holds the Network in the API server.
	stop()
	if err := networks.Delete(h.ctx, "example-network", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	network, err := networks.Get(h.ctx, "example-network", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("with the controller down, the deleted Network must wait for its finalizer: %v", err)
	}
	if network.DeletionTimestamp == nil {
		t.Fatal("deleted Network has no deletionTimestamp")
	}
	if n := h.networks(); len(n) != 1 {
		t.Fatalf("backend networks = %+v, want the one still there", n)
	}

	// A new controller finds the deleting Network when its informer lists,
	// deletes the backend network, and removes the finalizer.
	stop = h.startController("second")
	defer stop()
	h.eventually("the backend network to be deleted", func() (bool, error) { return len(h.networks()) == 0, nil })
	h.eventually("the Network to be gone", func() (bool, error) {
		_, err := networks.Get(h.ctx, "example-network", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

// TestForeignBackendNetwork creates a backend network first, then a Network of
// its name: the controller neither adopts, changes nor deletes it.
func TestForeignBackendNetwork(t *testing.T) {
	h := newHarness(t)
	networks := h.networkClient.SamplecrdV1().Networks(h.ns)
	foreign, err := h.store.Create(h.ctx, backend.Network{Name: h.ns + "/example-network", CIDR: "10.0.0.0/8", GatewayIP: "10.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	stop := h.startController("controller")
	defer stop()

	if _, err := networks.Create(h.ctx, newExampleNetwork(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	network := h.readyIs("example-network", metav1.ConditionFalse, ReasonBackendNetworkConflict)
	want := "backend network " + foreign.ID + ` named "` + foreign.Name + `" has no owner, not this Network (UID ` + string(network.UID) + "); it is left as it is"
	if got := meta.FindStatusCondition(network.Status.Conditions, samplecrdv1.ConditionReady).Message; got != want {
		t.Errorf("Ready message = %q, want %q", got, want)
	}
	if network.Status.NetworkID != "" {
		t.Errorf("status.networkID = %q, want none: the backend network is not this Network's", network.Status.NetworkID)
	}
	if got := h.hasEvent("example-network", corev1.EventTypeWarning, ReasonBackendNetworkConflict); got != want {
		t.Errorf("Warning event = %q, want %q", got, want)
	}
	if n := h.networks(); len(n) != 1 || n[0] != foreign {
		t.Errorf("backend networks = %+v, want only %+v, unchanged", n, foreign)
	}

	// Deleted, the Network goes, and the foreign network stays.
	if err := networks.Delete(h.ctx, "example-network", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.eventually("the Network to be gone", func() (bool, error) {
		_, err := networks.Get(h.ctx, "example-network", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if n := h.networks(); len(n) != 1 || n[0] != foreign {
		t.Errorf("after the Network's delete, backend networks = %+v, want only %+v, unchanged", n, foreign)
	}
}

// TestRecreatesDeletedBackendNetwork deletes the backend network behind the
// controller's back: on its next sync the controller makes a new one and
// records the new ID.
func TestRecreatesDeletedBackendNetwork(t *testing.T) {
	h := newHarness(t)
	networks := h.networkClient.SamplecrdV1().Networks(h.ns)
	stop := h.startController("controller")
	defer stop()

	if _, err := networks.Create(h.ctx, newExampleNetwork(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	network := h.readyIs("example-network", metav1.ConditionTrue, ReasonSynced)
	old := network.Status.NetworkID
	if err := h.store.Delete(h.ctx, old); err != nil {
		t.Fatalf("deleting backend network %q, the one status.networkID names: %v", old, err)
	}

	// The backend cannot be watched: a change to the Network brings the next sync.
	h.update("example-network", func(n *samplecrdv1.Network) {
		n.Labels = map[string]string{"touched": "yes"}
	})
	h.eventually("a new backend network, recorded in the status", func() (bool, error) {
		n, err := networks.Get(h.ctx, "example-network", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		b := h.networks()
		return len(b) == 1 && b[0].ID != old && n.Status.NetworkID == b[0].ID && b[0].Description == string(n.UID), nil
	})
}

// TestBackendOutage checks that backend errors show in the status and events,
// and that the controller retries until the backend is back.
func TestBackendOutage(t *testing.T) {
	h := newHarness(t)
	networks := h.networkClient.SamplecrdV1().Networks(h.ns)
	h.down.Store(true)
	stop := h.startController("controller")
	defer stop()

	if _, err := networks.Create(h.ctx, newExampleNetwork(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	network := h.readyIs("example-network", metav1.ConditionFalse, ReasonBackendError)
	t.Logf("Ready=False message: %s", meta.FindStatusCondition(network.Status.Conditions, samplecrdv1.ConditionReady).Message)
	h.hasEvent("example-network", corev1.EventTypeWarning, ReasonBackendError)

	// No new event is needed to retry: the work queue's backoff brings the
	// key back by itself.
	h.down.Store(false)
	h.readyIs("example-network", metav1.ConditionTrue, ReasonSynced)
	h.backendHas(h.ns+"/example-network", "192.168.0.0/16", "192.168.0.1")

	// A delete during an outage waits for the backend, then completes.
	h.down.Store(true)
	if err := networks.Delete(h.ctx, "example-network", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.readyIs("example-network", metav1.ConditionFalse, ReasonBackendError)
	h.down.Store(false)
	h.eventually("the Network to be gone", func() (bool, error) {
		_, err := networks.Get(h.ctx, "example-network", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if n := h.networks(); len(n) != 0 {
		t.Errorf("backend networks = %+v, want none", n)
	}
}
