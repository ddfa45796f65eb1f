/*
Copyright 2026.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package apps

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "example.com/k8s-demo/operator-demo/api/apps/v1alpha1"
)

// These tests hold the cache back on purpose, which a real manager cannot be
// made to do on demand (the envtest suite runs the controller in one): the
// reconciler writes to one fake client, the API server, and reads from
// another, its cache, which the test brings up to date when it chooses, and
// feeds the pod events to podEvents by hand. Each step asserts the exact
// writes the reconcile made.

// staleCache is the reconciler's client: reads from cache, writes to the server.
type staleCache struct {
	client.Client // the API server
	cache         client.Client
}

func (s staleCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return s.cache.Get(ctx, key, obj, opts...)
}

func (s staleCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return s.cache.List(ctx, list, opts...)
}

type staleFixture struct {
	t      *testing.T
	ctx    context.Context
	server client.Client
	cache  client.Client
	writes []string // "create pods", "delete pods/<name>", "patch podsets/status"
	r      *PodSetReconciler
	clock  *clocktesting.FakePassiveClock
	key    types.NamespacedName
	queue  workqueue.TypedRateLimitingInterface[reconcile.Request]
}

func newStaleFixture(t *testing.T, size int32) *staleFixture {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, appsv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	f := &staleFixture{t: t, ctx: context.Background(), key: types.NamespacedName{Namespace: "ns", Name: "web"},
		clock: clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
		queue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())}
	t.Cleanup(f.queue.ShutDown)
	ps := &appsv1alpha1.PodSet{ObjectMeta: metav1.ObjectMeta{Namespace: f.key.Namespace, Name: f.key.Name, UID: "podset-uid", Generation: 1},
		Spec: appsv1alpha1.PodSetSpec{Size: size}}
	f.server = fake.NewClientBuilder().WithScheme(scheme).WithObjects(ps.DeepCopy()).WithStatusSubresource(ps).
		WithInterceptorFuncs(interceptor.Funcs{
			Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				f.writes = append(f.writes, "create pods")
				return c.Create(ctx, obj, opts...)
			},
			Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
				f.writes = append(f.writes, "delete pods/"+obj.GetName())
				return c.Delete(ctx, obj, opts...)
			},
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
				f.writes = append(f.writes, "patch podsets/"+sub)
				return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
			},
		}).Build()
	f.cache = fake.NewClientBuilder().WithScheme(scheme).WithObjects(ps.DeepCopy()).
		WithIndex(&corev1.Pod{}, podOwnerKey, podSetOwnerName).Build()
	f.r = &PodSetReconciler{Client: staleCache{Client: f.server, cache: f.cache}, Scheme: scheme, Clock: f.clock}
	return f
}

// reconcile runs one Reconcile and returns the writes it made.
func (f *staleFixture) reconcile() ([]string, reconcile.Result) {
	f.t.Helper()
	f.writes = nil
	res, err := f.r.Reconcile(f.ctx, reconcile.Request{NamespacedName: f.key})
	if err != nil {
		f.t.Fatalf("Reconcile: %v", err)
	}
	return f.writes, res
}

// serverPods are the PodSet's pods in the API server, by name.
func (f *staleFixture) serverPods() []corev1.Pod {
	f.t.Helper()
	var list corev1.PodList
	if err := f.server.List(f.ctx, &list, client.InNamespace(f.key.Namespace)); err != nil {
		f.t.Fatal(err)
	}
	slices.SortFunc(list.Items, func(a, b corev1.Pod) int { return cmpString(a.Name, b.Name) })
	return list.Items
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// catchUp brings the cache up to date with the server's pods and PodSet, and
// delivers the events an informer would: a create for each new pod, a delete
// for each pod gone. It returns how many requests the events queued (the
// queue holds each key once).
func (f *staleFixture) catchUp() int {
	f.t.Helper()
	h := f.r.podEvents()
	server := map[string]corev1.Pod{}
	for _, p := range f.serverPods() {
		server[p.Name] = p
	}
	var cached corev1.PodList
	if err := f.cache.List(f.ctx, &cached); err != nil {
		f.t.Fatal(err)
	}
	for _, p := range cached.Items {
		if _, ok := server[p.Name]; !ok {
			if err := f.cache.Delete(f.ctx, &p); err != nil {
				f.t.Fatal(err)
			}
			h.DeleteFunc(f.ctx, event.DeleteEvent{Object: &p}, f.queue)
		}
		delete(server, p.Name)
	}
	for _, p := range server {
		p.ResourceVersion = ""
		if err := f.cache.Create(f.ctx, &p); err != nil {
			f.t.Fatal(err)
		}
		h.CreateFunc(f.ctx, event.CreateEvent{Object: &p}, f.queue)
	}
	var ps, cachedPS appsv1alpha1.PodSet
	if err := f.server.Get(f.ctx, f.key, &ps); err != nil {
		f.t.Fatal(err)
	}
	if err := f.cache.Get(f.ctx, f.key, &cachedPS); err != nil {
		f.t.Fatal(err)
	}
	cachedPS.Spec, cachedPS.Status = ps.Spec, ps.Status
	if err := f.cache.Update(f.ctx, &cachedPS); err != nil {
		f.t.Fatal(err)
	}
	queued := f.queue.Len()
	for f.queue.Len() > 0 {
		req, _ := f.queue.Get()
		if req.NamespacedName != f.key {
			f.t.Errorf("an event queued %v, want %v", req.NamespacedName, f.key)
		}
		f.queue.Done(req)
	}
	return queued
}

// setSize changes spec.size in the server and in the cache, as a user's
// edit that the cache has seen.
func (f *staleFixture) setSize(n int32) {
	f.t.Helper()
	for _, c := range []client.Client{f.server, f.cache} {
		var ps appsv1alpha1.PodSet
		if err := c.Get(f.ctx, f.key, &ps); err != nil {
			f.t.Fatal(err)
		}
		ps.Spec.Size = n
		if err := c.Update(f.ctx, &ps); err != nil {
			f.t.Fatal(err)
		}
	}
}

func expectWrites(t *testing.T, step string, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s: the reconcile wrote %q, want %q", step, got, want)
	}
}

func TestExpectationsHoldBackAStaleCache(t *testing.T) {
	f := newStaleFixture(t, 2)

	writes, _ := f.reconcile()
	expectWrites(t, "first reconcile, nothing cached", writes, "create pods", "create pods", "patch podsets/status")

	// The cache has not seen the two creates: a list from it shows no pods,
	// and without expectations this reconcile would create two more.
	writes, res := f.reconcile()
	expectWrites(t, "again, before the cache shows the pods", writes)
	if res.RequeueAfter != ExpectationsTimeout {
		t.Errorf("waiting for the cache: RequeueAfter %v, want ExpectationsTimeout (%v)", res.RequeueAfter, ExpectationsTimeout)
	}

	if n := f.catchUp(); n != 1 {
		t.Errorf("the two pods' create events queued %d requests, want 1: the PodSet's, once", n)
	}
	writes, _ = f.reconcile()
	expectWrites(t, "once the cache shows them", writes)
	if n := len(f.serverPods()); n != 2 {
		t.Errorf("the API server holds %d pods, want 2", n)
	}

	// Scaling down: the newest pod goes (equal timestamps: the greater name).
	f.setSize(1)
	pods := f.serverPods()
	writes, _ = f.reconcile()
	expectWrites(t, "size 1", writes, "delete pods/"+pods[1].Name, "patch podsets/status")
	writes, _ = f.reconcile()
	expectWrites(t, "again, before the cache shows the delete", writes)

	if n := f.catchUp(); n != 1 {
		t.Errorf("the pod's delete event queued %d requests, want 1", n)
	}
	writes, _ = f.reconcile()
	expectWrites(t, "once the cache shows it", writes)
	if got := f.serverPods(); len(got) != 1 || got[0].Name != pods[0].Name {
		t.Errorf("the API server holds %v, want %s alone", podNames(got), pods[0].Name)
	}
}

func TestExpectationsTimeOut(t *testing.T) {
	f := newStaleFixture(t, 1)
	writes, _ := f.reconcile()
	expectWrites(t, "first reconcile", writes, "create pods", "patch podsets/status")

	// The create's event never comes. Until ExpectationsTimeout the
	// controller waits; then it trusts the cache, which still shows no pod.
	f.clock.SetTime(f.clock.Now().Add(ExpectationsTimeout - time.Second))
	writes, res := f.reconcile()
	expectWrites(t, "a second before the timeout", writes)
	if res.RequeueAfter != time.Second {
		t.Errorf("RequeueAfter %v, want the second left", res.RequeueAfter)
	}
	f.clock.SetTime(f.clock.Now().Add(time.Second))
	writes, _ = f.reconcile()
	// (And the status again: the cache's PodSet is as stale as its pods.)
	expectWrites(t, "at the timeout", writes, "create pods", "patch podsets/status")
	if ok, _ := f.r.expectations().satisfied(f.key); ok {
		t.Error("the create after the timeout is not expected: expectations must start again from it")
	}
}

func TestExpectationsFailedCreateIsNotAwaited(t *testing.T) {
	f := newStaleFixture(t, 3)
	calls := 0
	f.r.Client = staleCache{Client: interceptor.NewClient(f.server.(client.WithWatch), interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if calls++; calls == 2 {
				return fmt.Errorf("quota exceeded")
			}
			return c.Create(ctx, obj, opts...)
		},
	}), cache: f.cache}
	if _, err := f.r.Reconcile(f.ctx, reconcile.Request{NamespacedName: f.key}); err == nil {
		t.Fatal("Reconcile: no error, want the failed create's")
	}
	// One pod was made: its event is all there is to wait for.
	if ok, _ := f.r.expectations().satisfied(f.key); ok {
		t.Error("satisfied before the one pod made was seen")
	}
	f.catchUp()
	if ok, _ := f.r.expectations().satisfied(f.key); !ok {
		t.Error("still waiting after the one pod made was seen: the creates that failed or were not made are awaited too")
	}
}
