// Package walkthrough holds the CustomPod tests that point the CustomPod CRD's
// conversion webhook somewhere, for the three implementations (crd-demo,
// kubebuilder-demo, operator-demo; see the custompod package): the articles'
// steps with `make run` (TestCustomPod, TestCustomPodRestricted), whose
// localwebhook points the CRD at the manager it starts; and the conversion
// and the storage migration (TestCustomPodConversion,
// TestCustomPodStorageMigration), which point it at the webhook they check
// and need it to stay there. A CRD has one conversion webhook for the
// cluster, and `make run`'s manager serves its health probes on :8081, so
// these tests run one after another: none calls t.Parallel. Nothing else
// runs meanwhile: go test runs one package at a time here (-p 1, as make e2e
// and make test pass it). The robustness tests, which run the controllers
// from their builds and use v2 objects only, run side by side in the
// custompod package.
//
// In the cluster (E2E_MANAGERS=in-cluster), TestCustomPod checks the
// conversion and the migration on the Deployments it made instead.
package walkthrough

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"example.com/k8s-demo/e2e/custompod"
	"example.com/k8s-demo/e2e/harness"
	"example.com/k8s-demo/e2e/impls"
)

func TestMain(m *testing.M) { harness.Main(m) }

// implementation is one of the custompod package's three.
type implementation = custompod.Implementation

var implementations = custompod.Implementations

// startController is the articles' way to run impl's controller: beside the
// cluster (install the CRD and ClusterRole, then run it as a user bound to
// that role only), or, with E2E_MANAGERS=in-cluster, `make deploy`.
func startController(h *harness.H, impl implementation) harness.Controller {
	h.Helper()
	if harness.InCluster() {
		return impl.Deploy(h)
	}
	role := impl.Install(h)
	return start(h, impl, h.KubeconfigAs("controller", role), false)
}

// localWebhookDone is what tools/localwebhook, in a scaffold's `make run`,
// prints once it has pointed the CustomPod CRD at the manager.
var localWebhookDone = regexp.MustCompile(`CustomResourceDefinition custompods.zhhnzw.mock.com: conversion`)

// conversionServing is what crd-demo's controller logs once its conversion
// webhook listens.
var conversionServing = regexp.MustCompile(`"Serving the conversion webhook"`)

// start runs impl's controller beside the cluster as the given kubeconfig's
// user, watching the test's namespace only: crd-demo's from its build, the
// scaffolds' with `make run`. With conversion, crd-demo's also serves the
// CustomPod conversion webhook and points the CRD at it; the scaffolds'
// `make run` always does.
func start(h *harness.H, impl implementation, kubeconfig string, conversion bool) *harness.Process {
	h.Helper()
	if impl.Impl == &impls.ClientGo {
		var args []string
		if conversion {
			// On a port of the test's own, which it writes into the CRD
			// with a self-signed CA.
			port := h.FreePort()
			args = []string{"--conversion-port", fmt.Sprint(port), "--conversion-bind-address", "127.0.0.1",
				"--conversion-url", fmt.Sprintf("https://127.0.0.1:%d/convert", port)}
		}
		p := custompod.StartBinary(h, impl.Impl, "custompod-controller", kubeconfig, impls.Settings{LogLevel: impls.Debug}, args...)
		if conversion {
			// A controller that cannot listen exits: say so now, not
			// after the callers' wait for the webhook.
			h.WaitForLog(p, conversionServing, time.Minute)
		}
		return p
	}
	// Its `make run` serves the CustomPod conversion webhook (and
	// operator-demo's the Vpc webhook too): on a port of the test's own, the
	// CRD pointed at it (operator-demo: with a webhook configuration for its
	// namespace, deleted after it). Its health probes take :8081.
	env := append([]string{"KUBECONFIG=" + kubeconfig}, h.NewLocalWebhookFor(impl.Dir).MakeRunEnv(h)...)
	p := h.Start(harness.ProcessSpec{Name: "make-run", Path: "make", Args: harness.MakeArgs(impl.Dir, "run"), Dir: h.Path(impl.Dir),
		Env: env})
	h.WaitForLog(p, localWebhookDone, 10*time.Minute)
	h.WaitForLog(p, impl.Started, 10*time.Minute)
	// Its webhook server and health probes serve this machine only.
	h.RequireLoopbackOnly(p)
	return p
}

// TestCustomPod follows the articles with each implementation. In the
// cluster it then checks conversion on the Deployment it made (subtest
// conversion; for crd-demo, the storage migration first, subtest
// migration): a Deployment of TestCustomPodConversion's own, deployed,
// waited for and undeployed for each implementation, took kind longer than
// the checks themselves.
func TestCustomPod(t *testing.T) {
	for _, impl := range implementations {
		t.Run(impl.Name, func(t *testing.T) {
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
					h.Track("custompod/from-v1", "custompod/"+impl.SampleName)
					expectServiceWebhook(h, impl)
					testConversion(h, impl, ctrl)
				})
			}
		})
	}
}

// testScale runs the articles' steps and returns the controller it started.
func testScale(h *harness.H, impl implementation) harness.Controller {
	h.Helper()
	name := impl.SampleName
	h.Track("custompod/" + name)

	// The articles' steps: install the CRD, run the controller.
	ctrl := startController(h, impl)

	h.KubectlIn(h.Path(impl.Dir), "apply", "-f", impl.Sample)
	custompod.WaitForPods(h, name, custompod.SampleReplicas)
	// The pods run the v2 template's image and command.
	expectTemplate(h, name)

	// Scale up through the scale subresource, as `kubectl scale` does.
	h.Kubectl("scale", "custompod/"+name, "--replicas=3")
	if got, want := custompod.WaitForPods(h, name, 3), []string{name + "-0", name + "-1", name + "-2"}; !slices.Equal(got, want) {
		h.Errorf("pods %v, want %v: pod i is named <CustomPod>-<i>", got, want)
	}

	// And down again, editing the spec as the articles do: the highest
	// ordinals go.
	h.Kubectl("patch", "custompod", name, "--type=merge", "-p", `{"spec":{"replicas":1}}`)
	survivors := custompod.WaitForPods(h, name, 1)
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
	replaced := custompod.WaitForPods(h, name, 1)

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

// expectTemplate fails the test unless every pod of the CustomPod runs its
// v2 template: one container, the template's image and command.
func expectTemplate(h *harness.H, name string) {
	h.Helper()
	cp, err := custompod.Get(h.Ctx, h, name)
	if err != nil {
		h.Fatal(err)
	}
	expectPodsRun(h, name, cp.Spec.Template)
}

// expectPodsRun fails the test unless every live pod of the CustomPod runs
// want, and there is at least one.
func expectPodsRun(h *harness.H, name string, want custompod.Template) {
	h.Helper()
	pods := custompod.OwnedPods(h, name)
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
