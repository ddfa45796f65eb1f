// Package operatordemo is the e2e suite of operator-demo's other two APIs,
// with the articles' operator-sdk steps: make install, make run (all three
// controllers in one manager), apply the samples, change them. The manager
// runs with only the ClusterRole controller-gen generated. (CustomPod, the
// same in the three implementations, is in the custompod suite.)
package operatordemo

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"example.com/k8s-demo/e2e/harness"
)

func TestMain(m *testing.M) { harness.Main(m) }

// startManager does the articles' `make install` and `make run`, as a
// ServiceAccount bound to the generated manager-role; with
// E2E_MANAGERS=in-cluster, `make deploy` (the image, the CRDs, the generated
// RBAC and the manager's Deployment).
func startManager(h *harness.H) harness.Controller {
	h.Helper()
	if harness.InCluster() {
		return h.Deploy(harness.DeploySpec{Dir: "operator-demo", Namespace: "operator-demo-system",
			Deployment: "operator-demo-controller-manager", Restore: []string{"config/manager/kustomization.yaml"}})
	}
	dir := h.Path("operator-demo")
	if _, err := h.Command(dir, "make", "install"); err != nil {
		h.Fatal(err)
	}
	h.KubectlIn(dir, "apply", "-f", "config/rbac/role.yaml")
	kubeconfig := h.KubeconfigAs("manager", "manager-role")
	p := h.Start(harness.ProcessSpec{Name: "make-run", Path: "make", Args: []string{"run"}, Dir: dir,
		Env: []string{"KUBECONFIG=" + kubeconfig, "WATCH_NAMESPACE=" + h.Namespace}})
	h.WaitForLog(p, regexp.MustCompile("Starting workers"), 10*time.Minute)
	return p
}

// pods lists the running, not terminating pods with a label, and their names.
func pods(ctx context.Context, h *harness.H, selector string) ([]corev1.Pod, []string, error) {
	list, err := h.Env.Client.CoreV1().Pods(h.Namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, nil, err
	}
	var live []corev1.Pod
	var names []string
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning {
			live = append(live, p)
			names = append(names, p.Name)
		}
	}
	slices.Sort(names)
	return live, names, nil
}

// get reads an object's JSON into v.
func get(ctx context.Context, h *harness.H, path string, v any) error {
	raw, err := h.Env.Client.CoreV1().RESTClient().Get().AbsPath(path).DoRaw(ctx)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, v)
}

func readyCondition(conds []metav1.Condition) (status, reason string) {
	for _, c := range conds {
		if c.Type == "Ready" {
			return string(c.Status), c.Reason
		}
	}
	return "", ""
}

func TestPodSet(t *testing.T) {
	h := harness.New(t)
	h.Track("podset/podset-sample")
	mgr := startManager(h)
	h.KubectlIn(h.Path("operator-demo"), "apply", "-f", "config/samples/apps_v1alpha1_podset.yaml")

	waitForSize := func(n int) {
		h.Helper()
		h.WaitFor(fmt.Sprintf("podset-sample to run %d pods, listed in status.nodes", n), 2*time.Minute, func(ctx context.Context) (bool, string, error) {
			var ps struct {
				Status struct {
					Nodes      []string           `json:"nodes"`
					Conditions []metav1.Condition `json:"conditions"`
				} `json:"status"`
			}
			if err := get(ctx, h, "/apis/apps.mock.com/v1alpha1/namespaces/"+h.Namespace+"/podsets/podset-sample", &ps); err != nil {
				return false, "", err
			}
			_, names, err := pods(ctx, h, "apps.mock.com/podset=podset-sample")
			if err != nil {
				return false, "", err
			}
			ready, _ := readyCondition(ps.Status.Conditions)
			return len(names) == n && slices.Equal(ps.Status.Nodes, names) && ready == "True",
				fmt.Sprintf("running %v; status.nodes %v; Ready=%s", names, ps.Status.Nodes, ready), nil
		})
	}
	waitForSize(3)
	h.Kubectl("patch", "podset", "podset-sample", "--type=merge", "-p", `{"spec":{"size":5}}`)
	waitForSize(5)
	h.Kubectl("patch", "podset", "podset-sample", "--type=merge", "-p", `{"spec":{"size":2}}`)
	waitForSize(2)
	if out := h.Kubectl("get", "podset"); !strings.Contains(out, "podset-sample") {
		t.Errorf("kubectl get podset:\n%s", out)
	}
	if strings.Contains(mgr.Log(), "forbidden") {
		t.Errorf("the manager was refused a request, so its RBAC is incomplete:\n%s", mgr.Tail(40))
	}
}

func TestVpc(t *testing.T) {
	h := harness.New(t)
	h.Track("vpc/vpc-sample")
	mgr := startManager(h)
	h.KubectlIn(h.Path("operator-demo"), "apply", "-f", "config/samples/network_v1_vpc.yaml")

	type vpcStatus struct {
		Status struct {
			Subnets    []string           `json:"subnets"`
			PodNames   []string           `json:"podNames"`
			Subnetnum  int32              `json:"subnetnum"`
			Conditions []metav1.Condition `json:"conditions"`
		} `json:"status"`
	}
	// waitForSubnets waits for one Running gateway pod per subnet, each
	// carrying its subnet, and a status that lists them.
	waitForSubnets := func(subnets ...string) {
		h.Helper()
		h.WaitFor(fmt.Sprintf("vpc-sample to run one gateway pod in each of %v", subnets), 2*time.Minute, func(ctx context.Context) (bool, string, error) {
			var vpc vpcStatus
			if err := get(ctx, h, "/apis/network.mock.com/v1/namespaces/"+h.Namespace+"/vpcs/vpc-sample", &vpc); err != nil {
				return false, "", err
			}
			live, names, err := pods(ctx, h, "network.mock.com/vpc=vpc-sample")
			if err != nil {
				return false, "", err
			}
			var podSubnets []string
			for _, p := range live {
				for _, e := range p.Spec.Containers[0].Env {
					if e.Name == "SUBNET_CIDR" {
						podSubnets = append(podSubnets, e.Value)
					}
				}
			}
			// Compared as sets: status lists them in address order.
			statusSubnets := slices.Clone(vpc.Status.Subnets)
			slices.Sort(podSubnets)
			slices.Sort(statusSubnets)
			slices.Sort(subnets)
			ready, _ := readyCondition(vpc.Status.Conditions)
			done := slices.Equal(podSubnets, subnets) && slices.Equal(statusSubnets, subnets) &&
				slices.Equal(vpc.Status.PodNames, names) && int(vpc.Status.Subnetnum) == len(subnets) && ready == "True"
			return done, fmt.Sprintf("pods' subnets %v; status.subnets %v podNames %v subnetnum %d; Ready=%s",
				podSubnets, vpc.Status.Subnets, vpc.Status.PodNames, vpc.Status.Subnetnum, ready), nil
		})
	}
	waitForSubnets("10.0.0.0/18", "10.0.64.0/18", "10.0.128.0/18", "10.0.192.0/18")

	h.Kubectl("patch", "vpc", "vpc-sample", "--type=merge", "-p", `{"spec":{"subnetnum":2}}`)
	waitForSubnets("10.0.0.0/17", "10.0.128.0/17")

	// Three equal subnets cannot be carved: refused, with a reason and an event.
	h.Kubectl("patch", "vpc", "vpc-sample", "--type=merge", "-p", `{"spec":{"subnetnum":3}}`)
	h.WaitFor("vpc-sample to say it cannot carve 3 subnets", time.Minute, func(ctx context.Context) (bool, string, error) {
		var vpc vpcStatus
		if err := get(ctx, h, "/apis/network.mock.com/v1/namespaces/"+h.Namespace+"/vpcs/vpc-sample", &vpc); err != nil {
			return false, "", err
		}
		ready, reason := readyCondition(vpc.Status.Conditions)
		return ready == "False" && reason == "InvalidSubnetting", fmt.Sprintf("Ready=%s reason=%s", ready, reason), nil
	})
	if out := h.Kubectl("get", "events", "--field-selector", "involvedObject.name=vpc-sample,type=Warning"); !strings.Contains(out, "InvalidSubnetting") {
		t.Errorf("no InvalidSubnetting warning event:\n%s", out)
	}
	if strings.Contains(mgr.Log(), "forbidden") {
		t.Errorf("the manager was refused a request, so its RBAC is incomplete:\n%s", mgr.Tail(40))
	}
}
