// Package custompod is one e2e suite for the three implementations of the
// CustomPod operator: crd-demo's client-go controller, kubebuilder-demo and
// operator-demo. Each follows the articles' steps (install the CRD, run the
// controller, apply the sample, scale 2 → 3 → 1, kubectl get pods), in a
// namespace of its own, with only the RBAC its module ships.
//
// The three install the same CRD, custompods.zhhnzw.mock.com, which serves
// v1 and v2 and stores v2: the API server calls the conversion webhook only
// for a client of v1, and a CRD has one conversion webhook for the cluster.
// So the tests use v2 objects (each module's v2 sample) and run side by side,
// whoever the CRD's webhook points at; TestCustomPodConversion, which needs
// the implementation's own webhook, and TestCustomPodStorageMigration, which
// has the CRD store v1 for a while, each have the CRD to themselves
// (crdWebhook). In the cluster, where the tests take turns, TestCustomPod
// checks both on its own Deployment instead.
package custompod

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"example.com/k8s-demo/e2e/harness"
	"example.com/k8s-demo/e2e/impls"
)

func TestMain(m *testing.M) { harness.Main(m) }

// implementation is how the suite installs and runs one module's CustomPod
// operator: the impls table's entry, and what only this suite needs.
type implementation struct {
	*impls.Impl
	// sample is the module's v2 sample CustomPod, relative to Dir, named
	// sampleName, with sampleReplicas pods and a template of its own.
	sample, sampleName string
	// install puts the CRD and the controller's ClusterRole in the cluster,
	// and returns the ClusterRole's name.
	install func(h *harness.H) (clusterRole string)
	// start runs the controller as the given kubeconfig's user, watching the
	// test's namespace only. With conversion, it also serves the CustomPod
	// conversion webhook and points the CRD at it; the caller holds
	// crdWebhook (and makeRun), as TestCustomPodConversion does.
	start func(h *harness.H, kubeconfig string, conversion bool) *harness.Process
	// deploy runs it in the cluster instead, with the module's `make deploy`
	// (image, CRD, RBAC and Deployment), watching every namespace.
	deploy func(h *harness.H) *harness.Deployed
}

// startController is the articles' way to run impl's controller: beside the
// cluster (install the CRD and ClusterRole, then run it as a user bound to
// that role only), or, with E2E_MANAGERS=in-cluster, `make deploy`.
func startController(h *harness.H, impl implementation) harness.Controller {
	h.Helper()
	if harness.InCluster() {
		return impl.deploy(h)
	}
	role := install(h, impl)
	return impl.start(h, h.KubeconfigAs("controller", role), false)
}

// sampleReplicas is spec.replicas in the three v2 samples.
const sampleReplicas = 2

// Out of the cluster, the tests of this package run side by side: each has a
// namespace of its own and most of their time is spent waiting on the cluster.
// In it they do not, since the three Deployments are shared.
func parallel(t *testing.T) {
	if !harness.InCluster() {
		t.Parallel()
	}
}

// What parallel tests must still take turns at: installing (`make install`
// regenerates a module's manifests, and the three modules apply the same
// CustomPod CRD: two creating it at once, one would fail), and `make run`,
// whose manager serves its health probes on :8081.
var installing, makeRun sync.Mutex

// crdWebhook is where the CustomPod CRD's conversion webhook points. An
// install (the CRD's manifest names its module's Service) and a scaffold's
// `make run` (hack/localwebhook points it at the manager) re-point it: they
// hold it for reading, as long as they do, and installing too (an install
// applies its manifest over what the CRD has). TestCustomPodConversion and
// TestCustomPodStorageMigration hold it for writing, so that nothing
// re-points or re-applies the CRD while they use their webhook. The order,
// to take several: makeRun, installing, crdWebhook.
var crdWebhook sync.RWMutex

// localWebhookDone is what hack/localwebhook, in a scaffold's `make run`,
// prints once it has pointed the CustomPod CRD at the manager (or left it).
var localWebhookDone = regexp.MustCompile(`CustomResourceDefinition custompods.zhhnzw.mock.com: conversion`)

// install is impl.install, one test at a time.
func install(h *harness.H, impl implementation) string {
	h.Helper()
	installing.Lock()
	defer installing.Unlock()
	crdWebhook.RLock()
	defer crdWebhook.RUnlock()
	return impl.install(h)
}

var implementations = []implementation{
	{
		Impl:       &impls.ClientGo,
		sample:     "example/example-custompod-v2.yaml",
		sampleName: "custompod-clock",
		install: func(h *harness.H) string {
			h.KubectlIn(h.Path("crd-demo"), "apply", "-f", "crd/custompod.yaml")
			h.KubectlIn(h.Path("crd-demo"), "apply", "-f", "config/rbac/custompod-controller.yaml")
			return "crd-demo-custompod-controller"
		},
		start: func(h *harness.H, kubeconfig string, conversion bool) *harness.Process {
			var args []string
			if conversion {
				// On a port of the test's own, which it writes into the CRD
				// with a self-signed CA.
				port := h.FreePort()
				args = []string{"--conversion-port", fmt.Sprint(port), "--conversion-bind-address", "127.0.0.1",
					"--conversion-url", fmt.Sprintf("https://127.0.0.1:%d/convert", port)}
			}
			return startBinary(h, &impls.ClientGo, "custompod-controller", kubeconfig, impls.Settings{LogLevel: impls.Debug}, args...)
		},
		deploy: func(h *harness.H) *harness.Deployed {
			return h.Deploy(harness.DeploySpec{Dir: "crd-demo", Namespace: "crd-demo-system", Deployment: "custompod-controller"})
		},
	},
	kubebuilderLayout(&impls.Kubebuilder),
	kubebuilderLayout(&impls.OperatorSDK),
}

// kubebuilderLayout is kubebuilder-demo and operator-demo: the articles'
// `make install` and `make run`, with the ClusterRole controller-gen writes.
func kubebuilderLayout(im *impls.Impl) implementation {
	dir := im.Dir
	return implementation{
		Impl:       im,
		sample:     "config/samples/zhhnzw_v2_custompod.yaml",
		sampleName: "custompod-sample-v2",
		install: func(h *harness.H) string {
			if _, err := h.Command(h.Path(dir), "make", "install"); err != nil {
				h.Fatal(err)
			}
			return h.ApplyClusterRoleAs(h.Path(dir, "config/rbac/role.yaml"), dir+"-manager-role")
		},
		start: func(h *harness.H, kubeconfig string, conversion bool) *harness.Process {
			// The manager serves its health probes on :8081, and `make run`
			// has no flag to move them: one `make run` at a time, released
			// once the test has stopped it (cleanups run last-in first-out).
			// (TestCustomPodConversion takes it itself, before crdWebhook.)
			if !conversion {
				makeRun.Lock()
				h.Cleanup(makeRun.Unlock)
				// It re-points the CRD before the manager starts: not
				// while an install applies the CRD, nor while
				// TestCustomPodConversion checks another webhook.
				installing.Lock()
				crdWebhook.RLock()
			}
			// Its `make run` serves the CustomPod conversion webhook (and
			// operator-demo's the Vpc webhook too): on a port of the test's
			// own, the CRD pointed at it (operator-demo: with a webhook
			// configuration for its namespace, deleted after it).
			env := append([]string{"KUBECONFIG=" + kubeconfig}, h.NewLocalWebhookFor(dir).MakeRunEnv(h)...)
			p := h.Start(harness.ProcessSpec{Name: "make-run", Path: "make", Args: []string{"run"}, Dir: h.Path(dir),
				Env: env})
			if !conversion {
				func() {
					defer installing.Unlock()
					defer crdWebhook.RUnlock()
					h.WaitForLog(p, localWebhookDone, 10*time.Minute)
				}()
			}
			h.WaitForLog(p, im.Started, 10*time.Minute)
			// Its webhook server and health probes serve this machine only.
			h.RequireLoopbackOnly(p)
			return p
		},
		deploy: func(h *harness.H) *harness.Deployed { return deployKubebuilderLayout(h, dir) },
	}
}

// deployKubebuilderLayout is the scaffold's `make deploy`: config/default,
// whose kustomization `make deploy` edits (put back afterwards).
func deployKubebuilderLayout(h *harness.H, dir string) *harness.Deployed {
	h.Helper()
	// From the local registry, as article 001 deploys; crd-demo's image is
	// loaded into the nodes instead, so that both ways run.
	return h.Deploy(harness.DeploySpec{Dir: dir, Namespace: dir + "-system", Deployment: dir + "-controller-manager",
		FromRegistry: true, Restore: []string{"config/manager/kustomization.yaml"}})
}

// TestCustomPod follows the articles with each implementation. In the
// cluster it then checks conversion on the Deployment it made (subtest
// conversion; for crd-demo, the storage migration first, subtest
// migration): a Deployment of TestCustomPodConversion's own, deployed,
// waited for and undeployed for each implementation, took kind longer than
// the checks themselves.
func TestCustomPod(t *testing.T) {
	parallel(t)
	for _, impl := range implementations {
		t.Run(impl.Name, func(t *testing.T) {
			parallel(t)
			h := harness.New(t)
			ctrl := testScale(h, impl)
			if harness.InCluster() && impl.Impl == &impls.ClientGo {
				// The storage migration is the cluster's work, the
				// webhook only converts: one implementation is enough.
				t.Run("migration", func(t *testing.T) {
					testStorageMigration(harness.New(t))
				})
			}
			if harness.InCluster() {
				// Last, since it takes the webhook (and so the
				// controller) down for good. Its objects get a namespace
				// of their own; the Deployment's log is in the failure
				// dump of the test above it, which fails with it.
				t.Run("conversion", func(t *testing.T) {
					h := harness.New(t)
					h.Track("custompod/from-v1", "custompod/"+impl.sampleName)
					expectServiceWebhook(h, impl)
					testConversion(h, impl, ctrl)
				})
			}
		})
	}
}

// customPod is the part of a v2 CustomPod the test reads.
type customPod struct {
	Metadata struct {
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		Replicas *int32   `json:"replicas"`
		Template template `json:"template"`
	} `json:"spec"`
	Status struct {
		Replicas      int32              `json:"replicas"`
		ReadyReplicas int32              `json:"readyReplicas"`
		PodNames      []string           `json:"podNames"`
		Conditions    []metav1.Condition `json:"conditions"`
	} `json:"status"`
}

// testScale runs the articles' steps and returns the controller it started.
func testScale(h *harness.H, impl implementation) harness.Controller {
	h.Helper()
	name := impl.sampleName
	h.Track("custompod/" + name)

	// The articles' steps: install the CRD, run the controller.
	ctrl := startController(h, impl)

	h.KubectlIn(h.Path(impl.Dir), "apply", "-f", impl.sample)
	waitForPods(h, name, sampleReplicas)
	// The pods run the v2 template's image and command.
	expectTemplate(h, name)

	// Scale up through the scale subresource, as `kubectl scale` does.
	h.Kubectl("scale", "custompod/"+name, "--replicas=3")
	if got, want := waitForPods(h, name, 3), []string{name + "-0", name + "-1", name + "-2"}; !slices.Equal(got, want) {
		h.Errorf("pods %v, want %v: pod i is named <CustomPod>-<i>", got, want)
	}

	// And down again, editing the spec as the articles do: the highest
	// ordinals go.
	h.Kubectl("patch", "custompod", name, "--type=merge", "-p", `{"spec":{"replicas":1}}`)
	survivors := waitForPods(h, name, 1)
	if want := []string{name + "-0"}; !slices.Equal(survivors, want) {
		h.Errorf("after scaling down, pods %v, want %v", survivors, want)
	}

	// A deleted pod is replaced under its name, once the old one has gone:
	// the controller watches the pods it owns.
	old, err := h.Env.Client.CoreV1().Pods(h.Namespace).Get(h.Ctx, survivors[0], metav1.GetOptions{})
	if err != nil {
		h.Fatal(err)
	}
	h.Kubectl("delete", "pod", old.Name, "--wait=false")
	h.WaitFor("pod "+old.Name+" to be replaced: the same name, a new UID", 2*time.Minute, func(ctx context.Context) (bool, string, error) {
		pod, err := h.Env.Client.CoreV1().Pods(h.Namespace).Get(ctx, old.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, "gone, not yet replaced", nil
		}
		if err != nil {
			return false, "", err
		}
		return pod.UID != old.UID, fmt.Sprintf("uid %s (the old one's: %s), deletionTimestamp %v", pod.UID, old.UID, pod.DeletionTimestamp), nil
	})
	replaced := waitForPods(h, name, 1)

	out := h.Kubectl("get", "pods")
	if !strings.Contains(out, replaced[0]) || !strings.Contains(out, "Running") {
		h.Errorf("kubectl get pods does not show %s Running:\n%s", replaced[0], out)
	}
	out = h.Kubectl("get", "custompod", name)
	for _, col := range []string{"DESIRED", "CURRENT", "READY", "AGE"} {
		if !strings.Contains(out, col) {
			h.Errorf("kubectl get custompod lacks the %s column:\n%s", col, out)
		}
	}

	// Deleting the CustomPod deletes its pods: their owner references make
	// the cluster's garbage collector remove them. (That the controller
	// creates none afterwards is checked where no collector hides it: the
	// envtest suites.)
	h.Kubectl("delete", "custompod", name)
	h.WaitFor("the garbage collector to delete the CustomPod's pods", 2*time.Minute, func(ctx context.Context) (bool, string, error) {
		left, err := h.Env.Client.CoreV1().Pods(h.Namespace).List(ctx, metav1.ListOptions{LabelSelector: "zhhnzw.mock.com/custompod=" + name})
		if err != nil {
			return false, "", err
		}
		return len(left.Items) == 0, fmt.Sprintf("%d pods left", len(left.Items)), nil
	})

	// It did all this with only the RBAC its module ships: the pods and the
	// status above, and the events below, each needed a verb of its role.
	h.ExpectEvent("CustomPod", name, "SuccessfulCreate")
	h.ExpectEvent("CustomPod", name, "SuccessfulDelete")
	h.ExpectAPIServerLogged(ctrl)
	return ctrl
}

// waitForPods waits until the CustomPod has exactly n pods Running (not
// being deleted), and its status says so; it returns their names.
func waitForPods(h *harness.H, name string, n int) []string {
	h.Helper()
	var names []string
	h.WaitFor(fmt.Sprintf("custompod/%s to have %d Running pods and a status that says so", name, n), 2*time.Minute,
		func(ctx context.Context) (bool, string, error) {
			cp, err := getCustomPod(ctx, h, name)
			if err != nil {
				return false, "", err
			}
			names = names[:0]
			running := 0
			for _, p := range ownedPods(h, name) {
				if p.DeletionTimestamp != nil {
					continue
				}
				names = append(names, p.Name)
				if p.Status.Phase == corev1.PodRunning {
					running++
				}
			}
			slices.Sort(names)
			ready := readyOf(cp)
			seen := fmt.Sprintf("%d pods (%d Running) %v; status.replicas=%d readyReplicas=%d podNames=%v Ready=%s",
				len(names), running, names, cp.Status.Replicas, cp.Status.ReadyReplicas, cp.Status.PodNames, ready)
			done := len(names) == n && running == n && int(cp.Status.Replicas) == n && int(cp.Status.ReadyReplicas) == n &&
				slices.Equal(cp.Status.PodNames, names) && ready == "True"
			return done, seen, nil
		})
	return slices.Clone(names)
}

// template is v2's spec.template: what the pods run.
type template struct {
	Image   string   `json:"image"`
	Command []string `json:"command,omitempty"`
}

// getCustomPod reads the CustomPod as v2, the stored version: no conversion
// webhook involved.
func getCustomPod(ctx context.Context, h *harness.H, name string) (*customPod, error) {
	raw, err := h.Env.Client.CoreV1().RESTClient().Get().AbsPath("/apis/zhhnzw.mock.com/v2/namespaces", h.Namespace, "custompods", name).DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	var cp customPod
	return &cp, json.Unmarshal(raw, &cp)
}

// expectTemplate fails the test unless every pod of the CustomPod runs its
// v2 template: one container, the template's image and command.
func expectTemplate(h *harness.H, name string) {
	h.Helper()
	cp, err := getCustomPod(h.Ctx, h, name)
	if err != nil {
		h.Fatal(err)
	}
	expectPodsRun(h, name, cp.Spec.Template)
}

// expectPodsRun fails the test unless every live pod of the CustomPod runs
// want, and there is at least one.
func expectPodsRun(h *harness.H, name string, want template) {
	h.Helper()
	pods := ownedPods(h, name)
	if len(pods) == 0 {
		h.Fatalf("custompod/%s has no pods", name)
	}
	for _, p := range pods {
		if len(p.Spec.Containers) != 1 {
			h.Errorf("pod %s has %d containers, want 1", p.Name, len(p.Spec.Containers))
			continue
		}
		c := p.Spec.Containers[0]
		if c.Image != want.Image || !slices.Equal(c.Command, want.Command) {
			h.Errorf("pod %s runs image %q command %q; the CustomPod's template says image %q command %q",
				p.Name, c.Image, c.Command, want.Image, want.Command)
		}
	}
}

// readyOf is the status of the Ready condition, or "".
func readyOf(cp *customPod) string {
	for _, c := range cp.Status.Conditions {
		if c.Type == "Ready" {
			return string(c.Status)
		}
	}
	return ""
}

// ownedPods lists the pods that carry the CustomPod's label and are
// controlled by it.
func ownedPods(h *harness.H, name string) []corev1.Pod {
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
