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
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "example.com/k8s-demo/operator-demo/api/apps/v1alpha1"
)

// TestReadYourWritesCountsItsOwnPods runs Reconcile three times back to back,
// with no expectations, against a real API server and a real cache whose
// watches are held back (laggingConfig): the cache has not seen the first
// reconcile's pods when the second lists them. Through ReadYourWritesClient
// the List waits for them, and the PodSet gets its 3 pods; through the
// manager's own client it gets 9. An envtest of its own: the suite's manager
// runs a PodSet controller of its own, which would reconcile this PodSet too.
func TestReadYourWritesCountsItsOwnPods(t *testing.T) {
	dir, err := envTestDir()
	if err != nil {
		t.Fatal(err)
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: dir,
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting envtest (kube-apiserver and etcd from %s): %v", dir, err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, appsv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	mgr, err := ctrl.NewManager(laggingConfig(cfg), ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	// The index ownedPods lists by, as SetupWithManager adds it.
	if err := mgr.GetFieldIndexer().IndexField(ctx, &corev1.Pod{}, podOwnerKey, podSetOwnerName); err != nil {
		t.Fatal(err)
	}
	c, err := ReadYourWritesClient(mgr)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		t.Fatal("the manager's cache did not sync")
	}

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "read-your-writes"}}
	ps := &appsv1alpha1.PodSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "web"},
		Spec: appsv1alpha1.PodSetSpec{Size: 3}}
	for _, obj := range []client.Object{ns, ps} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	// In the cache before the first reconcile, whichever client reads it.
	for mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(ps), &appsv1alpha1.PodSet{}) != nil {
		time.Sleep(10 * time.Millisecond)
	}

	r := &PodSetReconciler{Client: c, Scheme: scheme, ReadYourWrites: true}
	for i := range 3 {
		if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(ps)}); err != nil {
			t.Fatalf("reconcile %d: %v", i+1, err)
		}
	}

	var pods corev1.PodList // from the API server, not the cache
	if err := mgr.GetAPIReader().List(ctx, &pods, client.InNamespace(ns.Name)); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 3 {
		names := make([]string, 0, len(pods.Items))
		for _, p := range pods.Items {
			names = append(names, p.Name)
		}
		t.Fatalf("after 3 reconciles back to back, the PodSet of size 3 has %d pods, want 3: %v", len(pods.Items), names)
	}
}
