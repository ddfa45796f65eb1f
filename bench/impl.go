package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"example.com/k8s-demo/e2e/cluster"
	"example.com/k8s-demo/e2e/impls"
)

// kind is one custom resource the bench creates, and what converged means.
type kind struct {
	name string
	gvr  schema.GroupVersionResource
	// object is the i-th object the bench creates.
	object func(i int) *unstructured.Unstructured
	// converged says the controller has finished with the object.
	converged func(u *unstructured.Unstructured) bool
	// pods is how many pods the controller makes for each object.
	pods int
}

var customPods = kind{
	name: "CustomPod",
	// The bench runs no conversion webhook.
	gvr: impls.CustomPods,
	object: func(i int) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "zhhnzw.mock.com/v2", "kind": "CustomPod",
			"metadata": map[string]any{"name": fmt.Sprintf("cp-%05d", i)},
			"spec": map[string]any{"replicas": int64(3),
				"template": map[string]any{"image": "busybox:1.36", "command": []any{"sleep", "3600"}}},
		}}
	},
	converged: podsReady("replicas"),
	pods:      3,
}

// podsReady: status.replicas and readyReplicas match the spec's field, and
// the Ready condition is True for the current generation: the status the
// three CustomPod implementations and PodSet share.
func podsReady(specField string) func(u *unstructured.Unstructured) bool {
	return func(u *unstructured.Unstructured) bool {
		want, _, _ := unstructured.NestedInt64(u.Object, "spec", specField)
		got, _, _ := unstructured.NestedInt64(u.Object, "status", "replicas")
		ready, _, _ := unstructured.NestedInt64(u.Object, "status", "readyReplicas")
		return got == want && ready == want && readyFor(u)
	}
}

// podSets are CustomPods by another name: spec.size for spec.replicas.
var podSets = kind{
	name: "PodSet",
	gvr:  schema.GroupVersionResource{Group: "apps.mock.com", Version: "v1alpha1", Resource: "podsets"},
	object: func(i int) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps.mock.com/v1alpha1", "kind": "PodSet",
			"metadata": map[string]any{"name": fmt.Sprintf("ps-%05d", i)},
			"spec":     map[string]any{"size": int64(3)},
		}}
	},
	converged: podsReady("size"),
	pods:      3,
}

var networks = kind{
	name: "Network",
	gvr:  schema.GroupVersionResource{Group: "samplecrd.k8s.io", Version: "v1", Resource: "networks"},
	object: func(i int) *unstructured.Unstructured {
		// 10.x.y.0/24: distinct networks, valid for the CRD's rules.
		cidr := fmt.Sprintf("10.%d.%d.0/24", i/256, i%256)
		gw := fmt.Sprintf("10.%d.%d.1", i/256, i%256)
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "samplecrd.k8s.io/v1", "kind": "Network",
			"metadata": map[string]any{"name": fmt.Sprintf("net-%05d", i)},
			"spec":     map[string]any{"cidr": cidr, "gateway": gw},
		}}
	},
	converged: func(u *unstructured.Unstructured) bool {
		gen := u.GetGeneration()
		observed, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
		return observed == gen && readyFor(u)
	},
}

// readyFor: a Ready condition that is True and describes the current generation.
func readyFor(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != "Ready" {
			continue
		}
		g, _ := m["observedGeneration"].(int64)
		if g == 0 {
			// Network's condition may leave it to status.observedGeneration.
			g = u.GetGeneration()
		}
		return m["status"] == "True" && g == u.GetGeneration()
	}
	return false
}

// implementation is one controller the bench measures, or the plain loop.
type implementation struct {
	name string
	kind kind
	// crds are applied before the run (relative to the repository root).
	crds []string
	// ctrl is the controller the run builds and starts; nil for the plain
	// client-go loop, which is this binary itself.
	ctrl *impls.Impl
	// defaultQPS is what the implementation uses when told nothing.
	defaultQPS qpsSetting
	// flags are added to the controller's own (args).
	flags []string
	// needsBackend starts crd-demo's network-backend beside it.
	needsBackend bool
	baseline     bool
	// loopWrites, for a plain loop: controllerWrites or finalWrites.
	loopWrites string
	// staleCache is how the controller keeps a cache that lags behind its
	// own writes from making it create or delete too many pods.
	staleCache string
	// leftOut says why the default run leaves this implementation out (it
	// must fit in 15 minutes, and each row costs three runs of over a
	// minute at N = 1000); empty: the default runs it.
	leftOut string
}

// finalWritesLoop is the plain loop that makes only a CustomPod's pods and
// its final status.
const finalWritesLoop = "plain loop of 4 writes"

// The answers to the stale cache, as the tables name them.
const (
	podNames       = "pod names"
	expectations   = "expectations"
	readYourWrites = "read-your-writes"
)

// qpsSetting is client-go's client-side rate limit. A negative QPS is no limit.
type qpsSetting struct {
	QPS   float64
	Burst int
}

func (q qpsSetting) String() string {
	if q.QPS < 0 {
		return "no limit"
	}
	return strconv.FormatFloat(q.QPS, 'f', -1, 64) + "/" + strconv.Itoa(q.Burst)
}

// defaultLimit is ctrl's rate limit when told none.
func defaultLimit(ctrl *impls.Impl) qpsSetting {
	return qpsSetting{ctrl.DefaultQPS, ctrl.DefaultBurst}
}

// args run the controller on one namespace, with workers reconciling at
// once, logging at info level (controller-runtime's scaffolds default to
// debug, which would cost the managers more than the client-go controller).
func (im implementation) args(ns string, q qpsSetting, workers int, backendURL string) []string {
	args := im.ctrl.Args(impls.Settings{Namespace: ns, Workers: workers, QPS: q.QPS, Burst: q.Burst, LogLevel: impls.Info})
	if im.needsBackend {
		args = append(args, "--backend-url="+backendURL)
	}
	return append(args, im.flags...)
}

// networkController is crd-demo's other controller: another main package of
// the same module, with the CustomPod controller's flags (internal/kubeconfig,
// internal/leader, klog's); args adds its --backend-url.
var networkController = func() impls.Impl {
	im := impls.ClientGo
	im.Name, im.Pkg, im.Binary, im.Lease = "network-controller", ".", "network-controller", "crd-demo-network-controller"
	return im
}()

// controllerRuntimeImpl is kubebuilder-demo or operator-demo. Every CRD in
// config/crd/bases is installed, as `make install` does: a manager whose
// controllers watch a kind with no CRD never syncs its caches and exits.
func controllerRuntimeImpl(name string, ctrl *impls.Impl, k kind, staleCache string) implementation {
	crds, _ := filepath.Glob(filepath.Join(rootDir, ctrl.Dir, "config/crd/bases/*.yaml"))
	for i, c := range crds {
		crds[i], _ = filepath.Rel(rootDir, c)
	}
	return implementation{name: name, kind: k, crds: crds, ctrl: ctrl, defaultQPS: defaultLimit(ctrl), staleCache: staleCache}
}

// rootDir is the repository root (the bench runs from bench/); empty outside
// the repository, which newBench reports.
var rootDir = func() string {
	wd, _ := os.Getwd()
	root, _ := cluster.FindRoot(wd)
	return root
}()

// withFlags adds flags to im's controller's.
func withFlags(im implementation, flags ...string) implementation {
	im.flags = flags
	return im
}

// leftOut marks im as one the default run leaves out, for this reason.
func leftOut(im implementation, why string) implementation {
	im.leftOut = why
	return im
}

var implementations = []implementation{
	{
		name:       impls.ClientGo.Name,
		kind:       customPods,
		crds:       []string{"crd-demo/crd/custompod.yaml"},
		ctrl:       &impls.ClientGo,
		defaultQPS: defaultLimit(&impls.ClientGo),
		staleCache: podNames,
	},
	controllerRuntimeImpl(impls.Kubebuilder.Name, &impls.Kubebuilder, customPods, podNames),
	// operator-demo's CustomPod controller is kubebuilder-demo's but for its
	// package clause and an import path (make verify:
	// scripts/compare-scaffolds.sh), in a manager with more controllers.
	leftOut(controllerRuntimeImpl(impls.OperatorSDK.Name, &impls.OperatorSDK, customPods, podNames),
		"its CustomPod controller is kubebuilder's but for its package clause and an import path (`make verify` checks it)"),
	// operator-demo's PodSet: the same pods from another controller of the
	// same manager, which answers the stale cache with expectations.
	leftOut(controllerRuntimeImpl("PodSet (operator-sdk)", &impls.OperatorSDK, podSets, expectations),
		"another kind, whose controller answers the stale cache with expectations (docs/bench.md, The stale cache: four answers)"),
	// The same controller, reading through controller-runtime's
	// read-your-writes client instead of keeping expectations.
	leftOut(withFlags(controllerRuntimeImpl("PodSet read-your-writes (operator-sdk)", &impls.OperatorSDK, podSets, readYourWrites),
		"--podset-read-your-writes"),
		"PodSet, its reads waiting for the cache to show its writes (docs/bench.md, The stale cache: four answers)"),
	{
		name: "plain loop", kind: customPods, baseline: true, loopWrites: controllerWrites,
		crds: []string{"crd-demo/crd/custompod.yaml"},
		// A client-go loop: client-go's default.
		defaultQPS: defaultLimit(&impls.ClientGo),
	},
	{
		name: finalWritesLoop, kind: customPods, baseline: true, loopWrites: finalWrites,
		crds:       []string{"crd-demo/crd/custompod.yaml"},
		defaultQPS: defaultLimit(&impls.ClientGo),
		leftOut:    "its pods and the final status only, the limit for a controller that records no event and writes its status once",
	},
	{
		name:         "Network (client-go)",
		kind:         networks,
		crds:         []string{"crd-demo/crd/network.yaml"},
		ctrl:         &networkController,
		defaultQPS:   defaultLimit(&networkController),
		needsBackend: true,
		leftOut:      "Networks, which make no pods: their controller's writes go to the Neutron stand-in",
	},
	{
		name: "Network plain loop", kind: networks, baseline: true, needsBackend: true, loopWrites: controllerWrites,
		crds:       []string{"crd-demo/crd/network.yaml"},
		defaultQPS: defaultLimit(&impls.ClientGo),
		leftOut:    "the Network controller's loop",
	},
}
