// Package custompod holds the e2e suites of the three implementations of the
// CustomPod operator: crd-demo's client-go controller, kubebuilder-demo and
// operator-demo, each in a namespace of its own, with only the RBAC its
// module ships. This file says how the suites install, run and read each
// one. The package's tests are the robustness suite (kills, an API server
// outage, concurrent edits, leader election, a verb taken from the RBAC),
// which runs side by side. The tests that point the CRD's conversion webhook
// somewhere (`make run` does) are in the walkthrough package below it, one
// after another.
//
// The three install the same CRD, custompods.zhhnzw.mock.com, which serves
// v1 and v2 and stores v2: the API server calls the conversion webhook only
// for a client of v1, and a CRD has one conversion webhook for the cluster.
// So the tests here use v2 objects (each module's v2 sample) and run side by
// side, whoever the CRD's webhook points at.
package custompod

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"example.com/k8s-demo/e2e/harness"
	"example.com/k8s-demo/e2e/impls"
)

// Implementation is how the suites install and run one module's CustomPod
// operator: the impls table's entry, and what only the suites need.
type Implementation struct {
	*impls.Impl
	// Sample is the module's v2 sample CustomPod, relative to Dir, named
	// SampleName, with SampleReplicas pods and a template of its own.
	Sample, SampleName string
	// Install puts the CRD and the controller's ClusterRole in the cluster,
	// and returns the ClusterRole's name. One at a time: `make install`
	// regenerates the module's manifests, and the three modules apply the
	// same CRD (two creating it at once, one would fail).
	Install func(h *harness.H) (clusterRole string)
	// Deploy runs it in the cluster instead, with the module's `make deploy`
	// (image, CRD, RBAC and Deployment), watching every namespace.
	Deploy func(h *harness.H) *harness.Deployed
}

// SampleReplicas is spec.replicas in the three v2 samples.
const SampleReplicas = 2

// Implementations are the three, crd-demo's first.
var Implementations = []Implementation{
	{
		Impl:       &impls.ClientGo,
		Sample:     "example/example-custompod-v2.yaml",
		SampleName: "custompod-clock",
		Install: func(h *harness.H) string {
			h.KubectlIn(h.Path("crd-demo"), "apply", "-f", "crd/custompod.yaml")
			h.KubectlIn(h.Path("crd-demo"), "apply", "-f", "config/rbac/custompod-controller.yaml")
			return "crd-demo-custompod-controller"
		},
		Deploy: func(h *harness.H) *harness.Deployed {
			return h.Deploy(harness.DeploySpec{Dir: "crd-demo", Namespace: "crd-demo-system", Deployment: "custompod-controller"})
		},
	},
	kubebuilderLayout(&impls.Kubebuilder),
	kubebuilderLayout(&impls.OperatorSDK),
}

// kubebuilderLayout is kubebuilder-demo and operator-demo: the articles'
// `make install`, with the ClusterRole controller-gen writes, and the
// scaffold's `make deploy`: config/default, whose kustomization `make
// deploy` edits (put back afterwards), from the local registry, as article
// 001 deploys (crd-demo's image is loaded into the nodes instead, so that
// both ways run).
func kubebuilderLayout(im *impls.Impl) Implementation {
	dir := im.Dir
	return Implementation{
		Impl:       im,
		Sample:     "config/samples/zhhnzw_v2_custompod.yaml",
		SampleName: "custompod-sample-v2",
		Install: func(h *harness.H) string {
			if _, err := h.Command(h.Path(dir), "make", harness.MakeArgs(dir, "install")...); err != nil {
				h.Fatal(err)
			}
			return h.ApplyClusterRoleAs(h.Path(dir, "config/rbac/role.yaml"), dir+"-manager-role")
		},
		Deploy: func(h *harness.H) *harness.Deployed {
			return h.Deploy(harness.DeploySpec{Dir: dir, Namespace: dir + "-system", Deployment: dir + "-controller-manager",
				FromRegistry: true, Restore: []string{"config/manager/kustomization.yaml"}})
		},
	}
}

// StartBinary runs impl's controller, built from its module, on the test's
// namespace, not through `make run`, so that it can be killed and restarted
// in a second.
func StartBinary(h *harness.H, impl *impls.Impl, name, kubeconfig string, s impls.Settings, extra ...string) *harness.Process {
	h.Helper()
	s.Namespace = h.Namespace
	return h.Start(harness.ProcessSpec{Name: name, Path: h.Build(impl.Dir, impl.Pkg, impl.Binary),
		Args: append(impl.Args(s), extra...),
		Env:  append([]string{"KUBECONFIG=" + kubeconfig}, impl.Env...)})
}

// CustomPod is the part of a v2 CustomPod the tests read.
type CustomPod struct {
	Metadata struct {
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		Replicas *int32   `json:"replicas"`
		Template Template `json:"template"`
	} `json:"spec"`
	Status struct {
		Replicas      int32              `json:"replicas"`
		ReadyReplicas int32              `json:"readyReplicas"`
		PodNames      []string           `json:"podNames"`
		Conditions    []metav1.Condition `json:"conditions"`
	} `json:"status"`
}

// Template is v2's spec.template: what the pods run.
type Template struct {
	Image   string   `json:"image"`
	Command []string `json:"command,omitempty"`
}

// Get reads the CustomPod as v2, the stored version: no conversion webhook
// involved.
func Get(ctx context.Context, h *harness.H, name string) (*CustomPod, error) {
	raw, err := h.Env.Client.CoreV1().RESTClient().Get().AbsPath("/apis/zhhnzw.mock.com/v2/namespaces", h.Namespace, "custompods", name).DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	var cp CustomPod
	return &cp, json.Unmarshal(raw, &cp)
}

// Ready is the status of the Ready condition, or "".
func (cp *CustomPod) Ready() string {
	for _, c := range cp.Status.Conditions {
		if c.Type == "Ready" {
			return string(c.Status)
		}
	}
	return ""
}

// OwnedPods lists the pods that carry the CustomPod's label and are
// controlled by it.
func OwnedPods(h *harness.H, name string) []corev1.Pod {
	list, err := h.Env.Client.CoreV1().Pods(h.Namespace).List(h.Ctx, metav1.ListOptions{LabelSelector: "zhhnzw.mock.com/custompod=" + name})
	if err != nil {
		return nil
	}
	var pods []corev1.Pod
	for _, p := range list.Items {
		if ref := metav1.GetControllerOf(&p); ref != nil && ref.Kind == "CustomPod" && ref.Name == name {
			pods = append(pods, p)
		}
	}
	return pods
}

// WaitForPods waits until the CustomPod has exactly n pods Running (not
// being deleted), and its status says so; it returns their names.
func WaitForPods(h *harness.H, name string, n int) []string {
	h.Helper()
	var names []string
	h.WaitFor(fmt.Sprintf("custompod/%s to have %d Running pods and a status that says so", name, n), 2*time.Minute,
		func(ctx context.Context) (bool, string, error) {
			cp, err := Get(ctx, h, name)
			if err != nil {
				return false, "", err
			}
			names = names[:0]
			running := 0
			for _, p := range OwnedPods(h, name) {
				if p.DeletionTimestamp != nil {
					continue
				}
				names = append(names, p.Name)
				if p.Status.Phase == corev1.PodRunning {
					running++
				}
			}
			slices.Sort(names)
			ready := cp.Ready()
			seen := fmt.Sprintf("%d pods (%d Running) %v; status.replicas=%d readyReplicas=%d podNames=%v Ready=%s",
				len(names), running, names, cp.Status.Replicas, cp.Status.ReadyReplicas, cp.Status.PodNames, ready)
			done := len(names) == n && running == n && int(cp.Status.Replicas) == n && int(cp.Status.ReadyReplicas) == n &&
				slices.Equal(cp.Status.PodNames, names) && ready == "True"
			return done, seen, nil
		})
	return slices.Clone(names)
}
