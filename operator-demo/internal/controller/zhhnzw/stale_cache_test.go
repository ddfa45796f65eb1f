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

package zhhnzw

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	zhhnzwv1 "example.com/k8s-demo/operator-demo/api/zhhnzw/v1"
)

// The manager's cache hears of the controller's own writes a moment late.
// This spec makes the moment long (laggingConfig holds the cache's watches
// back) and reconciles one CustomPod three times back to back, as three
// events in a row would: the second and third reconciles read a cache that
// has not yet seen the first one's pods.
var _ = Describe("CustomPod, reconciled while the cache lags", func() {
	It("makes spec.replicas pods, no more", func(ctx SpecContext) {
		// 1. A manager whose cache lags, with the reconciler in it.
		mgr, r := startManager(ctx, laggingConfig(cfg))

		// 2. A CustomPod of 3 replicas, in a namespace of its own, once the
		// cache has it.
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "lagging-"}}
		Expect(k8sClient.Create(ctx, ns)).To(Succeed())
		cp := &zhhnzwv1.CustomPod{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns.Name},
			Spec:       zhhnzwv1.CustomPodSpec{Replicas: ptr.To[int32](3)},
		}
		Expect(k8sClient.Create(ctx, cp)).To(Succeed())
		Eventually(func() error {
			return mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(cp), &zhhnzwv1.CustomPod{})
		}).Should(Succeed())

		// 3. A change the cache has not heard of yet: its copy of the
		// CustomPod is one version behind, as it is after each write.
		before := cp.DeepCopy()
		cp.Labels = map[string]string{"tier": "web"}
		Expect(k8sClient.Patch(ctx, cp, client.MergeFrom(before))).To(Succeed())

		// 4. Three reconciles back to back. One that fails does not stop the
		// next, as the controller's queue would retry it; step 6 checks them.
		var failures []string
		for i := range 3 {
			if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(cp)}); err != nil {
				failures = append(failures, fmt.Sprintf("reconcile %d: %v", i+1, err))
			}
		}

		// 5. The pods, as the API server has them, not the cache.
		var pods corev1.PodList
		Expect(k8sClient.List(ctx, &pods, client.InNamespace(ns.Name))).To(Succeed())
		names := make([]string, 0, len(pods.Items))
		for _, p := range pods.Items {
			names = append(names, p.Name)
		}
		Expect(names).To(HaveLen(3), "the CustomPod asks for 3 pods")

		// 6. A stale cache is the normal case, not an error: no reconcile
		// may fail because of it.
		Expect(failures).To(BeEmpty(), "a reconcile failed")
	})
})

// startManager starts a manager on cfg until the spec ends, with the
// reconciler set up in it as cmd/main.go sets it up (its watches, and any
// index it adds).
func startManager(ctx context.Context, cfg *rest.Config) (ctrl.Manager, *CustomPodReconciler) {
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:     scheme.Scheme,
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	Expect(err).NotTo(HaveOccurred())
	r := newReconciler(mgr)
	Expect(r.SetupWithManager(mgr)).To(Succeed())
	mgrCtx, stop := context.WithCancel(ctx)
	DeferCleanup(stop)
	go func() {
		defer GinkgoRecover()
		Expect(mgr.Start(mgrCtx)).To(Succeed())
	}()
	return mgr, r
}

// newReconciler is the reconciler as cmd/main.go builds it, reading through
// mgr.
func newReconciler(mgr ctrl.Manager) *CustomPodReconciler {
	return &CustomPodReconciler{
		Client:    mgr.GetClient(),
		Scheme:    mgr.GetScheme(),
		APIReader: mgr.GetAPIReader(),
	}
}
