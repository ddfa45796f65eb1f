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
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	appsv1alpha1 "example.com/k8s-demo/operator-demo/api/apps/v1alpha1"
	zhhnzwv2 "example.com/k8s-demo/operator-demo/api/zhhnzw/v2"
	"example.com/k8s-demo/operator-demo/internal/controller/zhhnzw"
)

// cmd/main.go runs the CustomPod and PodSet controllers in one manager, and
// each indexes pods by its owner: their index keys must differ, or the
// second SetupWithManager fails and the manager never starts.
var _ = Describe("One manager for CustomPod and PodSet", func() {
	It("should set both controllers up, as cmd/main.go does", func() {
		s := runtime.NewScheme()
		Expect(clientgoscheme.AddToScheme(s)).To(Succeed())
		Expect(zhhnzwv2.AddToScheme(s)).To(Succeed())
		Expect(appsv1alpha1.AddToScheme(s)).To(Succeed())
		// The suite's manager has named its controllers already: names are
		// checked across managers, so this one skips the check.
		mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: s, Metrics: metricsserver.Options{BindAddress: "0"},
			Controller: config.Controller{SkipNameValidation: ptr.To(true)}})
		Expect(err).NotTo(HaveOccurred())

		Expect((&zhhnzw.CustomPodReconciler{
			Client: mgr.GetClient(), Scheme: mgr.GetScheme(), APIReader: mgr.GetAPIReader(),
		}).SetupWithManager(mgr)).To(Succeed())
		Expect((&PodSetReconciler{
			Client: mgr.GetClient(), Scheme: mgr.GetScheme(),
		}).SetupWithManager(mgr)).To(Succeed())
	})
})
