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

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	appsv1alpha1 "example.com/k8s-demo/operator-demo/api/apps/v1alpha1"
)

// ownManagerLabel marks a PodSet that a spec reconciles with a manager of its
// own: the repository's suite runs a PodSet controller of its own, which
// leaves such PodSets alone. In a suite without one, it changes nothing.
const ownManagerLabel = "apps.mock.com/own-manager"

// The manager's cache hears of the controller's own writes a moment late,
// and PodSet's pods have generated names: a reconcile that trusts the cache
// in that moment creates pods again. This spec makes the moment long
// (laggingConfig) and reconciles one PodSet three times back to back, as
// three events in a row would.
var _ = Describe("PodSet, reconciled while the cache lags", func() {
	It("makes spec.size pods, no more", func(ctx SpecContext) {
		// 1. A manager whose cache lags, with the reconciler set up in it as
		// cmd/main.go sets it up: its index, and the pod watch that tells
		// the expectations what the cache has shown.
		mgr, err := ctrl.NewManager(laggingConfig(cfg), ctrl.Options{
			Scheme:     scheme.Scheme,
			Metrics:    metricsserver.Options{BindAddress: "0"},
			Controller: config.Controller{SkipNameValidation: ptr.To(true)},
		})
		Expect(err).NotTo(HaveOccurred())
		r := &PodSetReconciler{Client: mgr.GetClient(), Scheme: mgr.GetScheme()}
		Expect(r.SetupWithManager(mgr)).To(Succeed())
		mgrCtx, stop := context.WithCancel(ctx)
		DeferCleanup(stop)
		go func() {
			defer GinkgoRecover()
			Expect(mgr.Start(mgrCtx)).To(Succeed())
		}()

		// 2. A PodSet of 3, in a namespace of its own, once the cache has it.
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "lagging-"}}
		Expect(k8sClient.Create(ctx, ns)).To(Succeed())
		ps := &appsv1alpha1.PodSet{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns.Name,
				Labels: map[string]string{ownManagerLabel: "true"}},
			Spec: appsv1alpha1.PodSetSpec{Size: 3},
		}
		Expect(k8sClient.Create(ctx, ps)).To(Succeed())
		Eventually(func() error {
			return mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(ps), &appsv1alpha1.PodSet{})
		}).Should(Succeed())

		// 3. Three reconciles back to back; one that fails is followed by
		// the next, as the controller's queue would retry it.
		for i := range 3 {
			if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(ps)}); err != nil {
				GinkgoWriter.Printf("reconcile %d: %v\n", i+1, err)
			}
		}

		// 4. The pods, as the API server has them, not the cache. The
		// manager's own worker may still be creating them when the three
		// reconciles return: 3 once it is done, and still 3 a second later.
		podNames := func() []string {
			var pods corev1.PodList
			Expect(k8sClient.List(ctx, &pods, client.InNamespace(ns.Name))).To(Succeed())
			names := make([]string, 0, len(pods.Items))
			for _, p := range pods.Items {
				names = append(names, p.Name)
			}
			return names
		}
		Eventually(podNames).Should(HaveLen(3), "the PodSet asks for 3 pods")
		Consistently(podNames, "1s").Should(HaveLen(3), "the PodSet asks for 3 pods")
	})
})
