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
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"example.com/k8s-demo/e2e/cluster"
	"example.com/k8s-demo/e2e/harness"
	"example.com/k8s-demo/e2e/impls"
	"example.com/k8s-demo/e2e/tier"
)

func TestMain(m *testing.M) { harness.Main(m) }

// startManager does the articles' `make install` and `make run`, as a
// ServiceAccount bound to the generated manager-role; with
// E2E_MANAGERS=in-cluster, what articles 000 and 001 do: the image pushed
// to the local registry, and `make deploy` (the CRDs, the generated RBAC and
// the manager's Deployment, whose pod pulls the image from the registry).
// It returns once the manager's webhooks answer: its workers may run before
// its webhook server does, and until then failurePolicy Fail refuses every
// Vpc and PodBuggerTool. One server serves both webhooks, so the Vpc's
// answering is the PodBuggerTool's too.
func startManager(h *harness.H) harness.Controller {
	h.Helper()
	if harness.InCluster() {
		d := h.Deploy(harness.DeploySpec{Dir: "operator-demo", Namespace: "operator-demo-system",
			Deployment: "operator-demo-controller-manager", FromRegistry: true,
			Restore: []string{"config/manager/kustomization.yaml"}})
		expectFromRegistry(h)
		waitForVpcWebhook(h)
		return d
	}
	dir := h.Path("operator-demo")
	kubeconfig := installAsManager(h)
	// `make run` serves the Vpc webhook too, on a port of the test's own,
	// through a webhook configuration for the test's namespace.
	webhook := h.NewLocalWebhook()
	p := h.Start(harness.ProcessSpec{Name: "make-run", Path: "make", Args: harness.MakeArgs("operator-demo", "run"), Dir: dir,
		Env: append([]string{"KUBECONFIG=" + kubeconfig}, webhook.MakeRunEnv(h)...)})
	h.WaitForLog(p, regexp.MustCompile("Starting workers"), 10*time.Minute)
	waitForVpcWebhook(h)
	return p
}

// waitForVpcWebhook waits until the API server gets an answer from the Vpc
// webhook, to a server-side dry run of a Vpc. In the cluster that is once
// the manager has issued its certificate, written it into the pod's
// certificate directory itself (a few seconds), the CA is in the webhook
// configuration and the pod is ready; until then the API server
// cannot call the webhook, and failurePolicy Fail refuses every Vpc.
func waitForVpcWebhook(h *harness.H) {
	h.Helper()
	h.WaitFor("the Vpc webhook to answer a dry run", 4*time.Minute, func(ctx context.Context) (bool, string, error) {
		// 198.18.0.0/15 (for benchmarks) overlaps no Vpc of the tests; a
		// refusal (422) would be the webhook's answer too.
		err := dryRunVpc(ctx, h, "vpc-webhook-probe", "198.18.0.0/15")
		if err == nil || apierrors.IsInvalid(err) {
			return true, "", nil
		}
		return false, err.Error(), nil
	})
}

// dryRunVpc asks the API server to create a Vpc in the test's namespace as
// a dry run (validated and admitted, not stored), quietly, for a wait that
// polls.
func dryRunVpc(ctx context.Context, h *harness.H, name, cidr string) error {
	body := fmt.Sprintf(`{"apiVersion":"network.mock.com/v1","kind":"Vpc","metadata":{"name":%q},"spec":{"vpcname":%q,"cidrblock":%q,"subnetnum":1}}`,
		name, name, cidr)
	req := h.Env.Client.CoreV1().RESTClient().Post().AbsPath("/apis/network.mock.com/v1/namespaces/"+h.Namespace+"/vpcs").
		Param("dryRun", "All").Body([]byte(body)).SetHeader("Content-Type", "application/json")
	return req.Do(ctx).Error()
}

// expectFromRegistry checks, as the articles do, that the registry's
// catalog lists the image, and that the manager's pod runs it under the
// registry's name: it was pulled from there, never loaded into the nodes.
func expectFromRegistry(h *harness.H) {
	h.Helper()
	resp, err := http.Get("http://" + cluster.RegistryHost + "/v2/_catalog")
	if err != nil {
		h.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(body), `"operator-demo"`) {
		h.Errorf("the registry's catalog does not list operator-demo: %s", body)
	}
	h.Logf("curl http://%s/v2/_catalog: %s", cluster.RegistryHost, strings.TrimSpace(string(body)))
	pods, err := h.Env.Client.CoreV1().Pods("operator-demo-system").List(h.Ctx, metav1.ListOptions{})
	if err != nil {
		h.Fatal(err)
	}
	want := cluster.RegistryHost + "/operator-demo:e2e"
	for _, p := range pods.Items {
		for _, c := range p.Status.ContainerStatuses {
			if c.Name == "manager" && c.Image != want {
				h.Errorf("the manager's pod %s runs %s, want %s, from the local registry", p.Name, c.Image, want)
			}
			if c.Name == "manager" {
				h.Logf("pod %s runs %s (image ID %s)", p.Name, c.Image, c.ImageID)
			}
		}
	}
}

// runsContainers says whether the cluster's nodes run containers: kwok's
// nodes are fake, and say so in an annotation.
func runsContainers(ctx context.Context, h *harness.H) bool {
	h.Helper()
	nodes, err := h.Env.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		h.Fatal(err)
	}
	for _, n := range nodes.Items {
		if n.Annotations["kwok.x-k8s.io/node"] != "fake" {
			return true
		}
	}
	return false
}

// installAsManager does the articles' `make install` (the CRDs), applies
// the generated manager-role, and returns a kubeconfig for a ServiceAccount
// bound to it and nothing else.
func installAsManager(h *harness.H) string {
	h.Helper()
	dir := h.Path("operator-demo")
	// The CustomPod CRD may point at the last manager run beside the
	// cluster: make install's apply puts its Service back (hack/localwebhook
	// wrote the URL into kubectl's last-applied copy).
	if _, err := h.Command(dir, "make", harness.MakeArgs("operator-demo", "install")...); err != nil {
		h.Fatal(err)
	}
	// role.yaml's ClusterRole: its other roles are for the certificate
	// rotation only `make deploy` turns on.
	h.ApplyClusterRoleAs(h.Path("operator-demo", "config/rbac/role.yaml"), "manager-role")
	return h.KubeconfigAs("manager", "manager-role")
}

// startManagerBinary is startManager with the manager built and run as a
// binary, so that it can be killed (SIGKILL) and restarted in a second; in
// the cluster, it is killed in its pod and restarted in a new one.
func startManagerBinary(h *harness.H) harness.Controller {
	h.Helper()
	if harness.InCluster() {
		return startManager(h)
	}
	// What `make run` does for the webhook, then the manager on that port.
	webhook := h.NewLocalWebhook()
	kubeconfig := installAsManager(h)
	webhook.Apply(h)
	im := &impls.OperatorSDK
	// With its webhooks (not impls' Env, which turns them off): they are
	// what this suite checks.
	p := h.Start(harness.ProcessSpec{Name: "manager", Path: h.Build(im.Dir, im.Pkg, im.Binary),
		Args: append(im.Args(impls.Settings{Namespace: h.Namespace}), webhook.ManagerArgs()...),
		Env:  []string{"KUBECONFIG=" + kubeconfig}})
	h.WaitForLog(p, regexp.MustCompile("Starting workers"), 2*time.Minute)
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

// TestPodSet runs in a namespace that enforces the "restricted" Pod Security
// Standard, as TestVpc does: the pods the controllers make must be admitted.
func TestPodSet(t *testing.T) {
	h := harness.New(t)
	h.Track("podset/podset-sample")
	h.EnforceRestricted()
	startManager(h)
	h.KubectlIn(h.Path("operator-demo"), "apply", "-f", "config/samples/apps_v1alpha1_podset.yaml")

	waitForSize := func(n int) {
		h.Helper()
		h.WaitFor(fmt.Sprintf("podset-sample to run %d pods, listed in status.nodes", n), 2*time.Minute, func(ctx context.Context) (bool, string, error) {
			var ps struct {
				Status struct {
					Replicas      int32              `json:"replicas"`
					ReadyReplicas int32              `json:"readyReplicas"`
					Nodes         []string           `json:"nodes"`
					Conditions    []metav1.Condition `json:"conditions"`
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
			return len(names) == n && slices.Equal(ps.Status.Nodes, names) && ready == "True" &&
					int(ps.Status.Replicas) == n && int(ps.Status.ReadyReplicas) == n,
				fmt.Sprintf("running %v; status.nodes %v replicas %d readyReplicas %d; Ready=%s",
					names, ps.Status.Nodes, ps.Status.Replicas, ps.Status.ReadyReplicas, ready), nil
		})
	}
	waitForSize(3)
	h.Kubectl("patch", "podset", "podset-sample", "--type=merge", "-p", `{"spec":{"size":5}}`)
	waitForSize(5)
	h.Kubectl("patch", "podset", "podset-sample", "--type=merge", "-p", `{"spec":{"size":2}}`)
	waitForSize(2)
	if out := h.Kubectl("get", "podset"); !regexp.MustCompile(`DESIRED +CURRENT +READY +AGE\n+podset-sample +2 +2 +2 `).MatchString(out) {
		t.Errorf("kubectl get podset does not show DESIRED, CURRENT and READY 2:\n%s", out)
	}
	expectManaged(h, "podset-controller", "apps.mock.com/podset=podset-sample",
		"/apis/apps.mock.com/v1alpha1/namespaces/"+h.Namespace+"/podsets/podset-sample")
	h.ExpectEvent("PodSet", "podset-sample", "SuccessfulCreate")
}

// expectManaged fails the test unless the controller's writes carry its
// field manager's name: the pods with a label (created) and the object's
// status (patched).
func expectManaged(h *harness.H, manager, selector, path string) {
	h.Helper()
	list, err := h.Env.Client.CoreV1().Pods(h.Namespace).List(h.Ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		h.Fatal(err)
	}
	var obj metav1.PartialObjectMetadata
	if err := get(h.Ctx, h, path, &obj); err != nil {
		h.Fatal(err)
	}
	for i := range list.Items {
		h.ExpectManager(&list.Items[i], manager, "")
	}
	h.ExpectManager(&obj, manager, "status")
}

func TestVpc(t *testing.T) {
	h := harness.New(t)
	h.Track("vpc/vpc-sample")
	h.EnforceRestricted()
	startManager(h)
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
	expectManaged(h, "vpc-controller", "network.mock.com/vpc=vpc-sample",
		"/apis/network.mock.com/v1/namespaces/"+h.Namespace+"/vpcs/vpc-sample")

	// Three equal subnets cannot be carved: the CRD's CEL refuses the change,
	// naming the field, and the Vpc keeps its two subnets. (The controller's
	// own refusal, InvalidSubnetting, is for a Vpc stored before that rule:
	// vpc_controller_test.go.)
	if out, err := h.KubectlErr("patch", "vpc", "vpc-sample", "--type=merge", "-p", `{"spec":{"subnetnum":3}}`); err == nil ||
		!strings.Contains(out, "spec.subnetnum: Invalid value: 3: must be a power of two") {
		t.Errorf("subnetnum 3: want it refused at admission, naming spec.subnetnum; err=%v:\n%s", err, out)
	}
	waitForSubnets("10.0.0.0/17", "10.0.128.0/17")
	h.ExpectEvent("Vpc", "vpc-sample", "SuccessfulCreate")
}

// TestVpcOverlapRefused is the Vpc webhook as kubectl shows it: a Vpc whose
// range overlaps another's in its namespace is refused, naming the field
// and the other Vpc; with the webhook's server gone, failurePolicy Fail
// refuses every Vpc, until the server is back (in the cluster) or the local
// configuration is deleted (beside it: `make uninstall-local-webhook`).
//
// Not a case of e2e/admission's testdata/invalid: those are refused by the
// CRDs alone, each on its own, with no controller running; this one needs
// the manager's webhook and the other Vpc.
func TestVpcOverlapRefused(t *testing.T) {
	h := harness.New(t)
	h.Track("vpc")
	mgr := startManager(h)
	h.KubectlIn(h.Path("operator-demo"), "apply", "-f", "config/samples/network_v1_vpc.yaml")
	testdata := h.Path("e2e", "operatordemo", "testdata")

	// The webhook reads its cache, which gets vpc-sample a moment after
	// the API server stored it.
	h.WaitFor("the webhook to know vpc-sample", 30*time.Second, func(ctx context.Context) (bool, string, error) {
		err := dryRunVpc(ctx, h, "vpc-overlapping", "10.0.1.0/24")
		return err != nil, fmt.Sprintf("a dry run of vpc-overlapping: %v", err), nil
	})
	want := `The Vpc "vpc-overlapping" is invalid: spec.cidrblock: Invalid value: "10.0.1.0/24": ` +
		`overlaps 10.0.0.0/16, the cidrblock of Vpc "vpc-sample"`
	out, err := h.KubectlErr("apply", "-f", filepath.Join(testdata, "vpc-overlapping.yaml"))
	if err == nil || !strings.Contains(out, want) {
		t.Errorf("kubectl apply -f vpc-overlapping.yaml: %v, want it refused with\n%s\ngot:\n%s", err, want, out)
	}
	if out, err := h.KubectlErr("get", "vpc", "vpc-overlapping"); err == nil {
		t.Errorf("the refused vpc-overlapping was stored:\n%s", out)
	}

	// With the webhook's server gone, the API server cannot ask it, and
	// failurePolicy Fail refuses even a Vpc that overlaps nothing.
	if err := mgr.Stop(); err != nil {
		t.Fatal(err)
	}
	disjoint := filepath.Join(testdata, "vpc-disjoint.yaml")
	out, err = h.KubectlErr("apply", "-f", disjoint)
	// "failed to call webhook" is the API server's word for a call that
	// did not reach the webhook, where "denied the request" is the
	// webhook's no. How it failed depends on the network: beside the
	// cluster, nothing listens on make run's port (connection refused). In
	// it, the Service has no pod left and kube-proxy refuses its address;
	// or, for a moment after the pod's end, still sends to it, and the call
	// times out after the configuration's timeoutSeconds; or, in the moment
	// the node's rules for the address change, the connection leaves by the
	// default route, and where a TLS proxy answers there (as in this
	// project's CI) the certificate is for other names.
	down := regexp.MustCompile(`failed calling webhook "vvpc-v1\.kb\.io": failed to call webhook: ` +
		`.*(connect: connection refused|context deadline exceeded|tls: failed to verify certificate)`)
	if err == nil || !down.MatchString(out) {
		t.Errorf("with the manager stopped, kubectl apply -f vpc-disjoint.yaml: %v, want it refused: %s; got:\n%s", err, down, out)
	}
	// Chapter 5's "now you": an update goes to the webhook too, even one
	// that leaves spec alone, and is refused; a delete does not
	// (verbs=create;update), and goes through.
	if out, err := h.KubectlErr("label", "vpc", "vpc-sample", "example.com/now-you=1"); err == nil || !down.MatchString(out) {
		t.Errorf("with the manager stopped, kubectl label vpc vpc-sample: %v, want it refused: %s; got:\n%s", err, down, out)
	}
	if out, err := h.KubectlErr("delete", "vpc", "vpc-sample"); err != nil {
		t.Errorf("with the manager stopped, kubectl delete vpc vpc-sample: %v, want it deleted (no webhook is called on delete); got:\n%s", err, out)
	}

	if harness.InCluster() {
		if err := mgr.Restart(); err != nil {
			t.Fatal(err)
		}
		waitForVpcWebhook(h)
	} else {
		// make run's configuration outlives it: deleting it is the way out.
		if _, err := h.UninstallLocalWebhook(); err != nil {
			t.Fatal(err)
		}
	}
	h.Kubectl("apply", "-f", disjoint)
}

// The sample PodBuggerTool's debugger: an ephemeral container named after it.
const debuggerName = "debugger-podbuggertool-sample"

// runAsNobody is kubectl run's --overrides for a pod that runs as a user
// other than root, as chapter 4's debug-me.
const runAsNobody = `{"apiVersion":"v1","spec":{"securityContext":{"runAsUser":65534}}}`

// ephemeral lists a pod's ephemeral containers: "name image target" each.
func ephemeral(p *corev1.Pod) []string {
	var out []string
	for _, c := range p.Spec.EphemeralContainers {
		out = append(out, c.Name+" "+c.Image+" "+c.TargetContainerName)
	}
	return out
}

// TestPodBuggerTool is article 004's debugging operator: a running pod
// whose labels match the PodBuggerTool's selector gets one ephemeral
// container running its image, and a pod that does not match gets none. On
// kind, where containers run, a command in the debugger sees the target
// container's processes; kwok runs no container, so there only the API's
// part is checked.
func TestPodBuggerTool(t *testing.T) {
	h := harness.New(t)
	h.Track("podbuggertool/podbuggertool-sample", "pod/debug-me", "pod/leave-me")
	startManager(h)
	// As chapter 4: busybox's image runs as root, and the debugger may not
	// (kubectl debug --profile=restricted's securityContext): the pod names
	// another user, which the debugger runs as too.
	h.Kubectl("run", "debug-me", "--image=busybox", "--labels=debug.mock.com/debug=true", "--overrides="+runAsNobody, "--", "sleep", "3600")
	h.Kubectl("run", "leave-me", "--image=busybox", "--", "sleep", "3600")
	h.KubectlIn(h.Path("operator-demo"), "apply", "-f", "config/samples/debug_v1alpha1_podbuggertool.yaml")

	waitForDebugger(h, "debug-me to get the sample's debugger, and the PodBuggerTool to count it")
	left, err := h.Env.Client.CoreV1().Pods(h.Namespace).Get(t.Context(), "leave-me", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ecs := ephemeral(left); len(ecs) > 0 {
		t.Errorf("leave-me does not match the selector, and got %q", ecs)
	}
	for _, obj := range []string{"debug-me", "podbuggertool-sample"} {
		if out := h.Kubectl("get", "events", "--field-selector", "reason=DebuggerAdded,involvedObject.name="+obj); !strings.Contains(out, debuggerName) {
			t.Errorf("no DebuggerAdded event on %s:\n%s", obj, out)
		}
	}

	expectDebuggerRuns(h, "debug-me")
	h.ExpectEvent("PodBuggerTool", "podbuggertool-sample", "DebuggerAdded")
}

// expectDebuggerRuns checks, where the nodes run containers, that the
// sample's debugger in pod runs and sees the target container's processes
// (its sleep 3600).
func expectDebuggerRuns(h *harness.H, pod string) {
	h.Helper()
	if !runsContainers(h.Ctx, h) {
		h.Log("the cluster's nodes are kwok's, which run no container: the debugger is in the pod's spec, not running")
		return
	}
	h.WaitFor("the debugger to run", 2*time.Minute, func(ctx context.Context) (bool, string, error) {
		p, err := h.Env.Client.CoreV1().Pods(h.Namespace).Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		for _, s := range p.Status.EphemeralContainerStatuses {
			if s.Name == debuggerName {
				return s.State.Running != nil, fmt.Sprintf("%s: %+v", s.Name, s.State), nil
			}
		}
		return false, "no status for " + debuggerName + " yet", nil
	})
	// The debugger shares the target container's process namespace: its ps
	// lists the target's sleep.
	out := h.Kubectl("exec", pod, "-c", debuggerName, "--", "ps")
	h.Logf("ps in the debugger:\n%s", out)
	if !strings.Contains(out, "sleep 3600") {
		h.Errorf("the debugger's ps does not show %s's sleep 3600:\n%s", pod, out)
	}
}

// TestPodBuggerToolNeedsDebugRights is the security review's finding 1: the
// controller adds debuggers with its own rights, so admission checks those
// of whoever asks: config/policy/podbuggertool_debug_rights.yaml, which
// config/default ships, and the manager's webhook, which an OLM bundle
// carries in its place. A ServiceAccount bound only to the PodBuggerTool
// editor role is refused, with a message naming the right it lacks; one that
// may also patch pods/ephemeralcontainers, as kubectl debug needs, is
// admitted, and its debugger added. The namespace enforces the "restricted"
// Pod Security Standard, which the debugger meets (finding 8). The manager
// may update pods/ephemeralcontainers but not patch them: its status writes
// pass because neither the policy nor the webhook sees podbuggertools/status.
func TestPodBuggerToolNeedsDebugRights(t *testing.T) {
	h := harness.New(t)
	h.Track("podbuggertool/podbuggertool-sample", "pod/debug-me")
	h.EnforceRestricted()
	startManager(h)
	dir := h.Path("operator-demo")
	const editorRole = "config/rbac/debug_podbuggertool_editor_role.yaml"
	h.KubectlIn(dir, "apply", "-f", editorRole)
	t.Cleanup(func() { _, _ = h.KubectlErr("delete", "--ignore-not-found", "-f", filepath.Join(dir, editorRole)) })
	debugRole := h.Namespace + "-kubectl-debug"
	h.Kubectl("create", "clusterrole", debugRole, "--verb=patch", "--resource=pods/ephemeralcontainers")
	t.Cleanup(func() { _, _ = h.KubectlErr("delete", "clusterrole", debugRole, "--ignore-not-found") })
	alice := h.KubeconfigAs("alice", "debug-podbuggertool-editor-role")
	bob := h.KubeconfigAs("bob", "debug-podbuggertool-editor-role", debugRole)
	// "pods/ephemeralcontainers" would be the pod named ephemeralcontainers.
	canDebug := func(kubeconfig string) bool {
		out, _ := h.KubectlErr("--kubeconfig", kubeconfig, "auth", "can-i", "patch", "pods", "--subresource=ephemeralcontainers")
		return strings.HasPrefix(out, "yes")
	}
	h.WaitFor("RBAC to let bob patch pods/ephemeralcontainers", time.Minute, func(context.Context) (bool, string, error) {
		return canDebug(bob), "", nil
	})
	if canDebug(alice) {
		t.Fatal("alice may patch pods/ephemeralcontainers: she should hold the editor role only")
	}

	h.Kubectl("apply", "-f", filepath.Join(h.Path("e2e", "operatordemo", "testdata"), "debug-me-restricted.yaml"))
	sample := filepath.Join(dir, "config/samples/debug_v1alpha1_podbuggertool.yaml")
	// refusedBy waits until what refuses alice's PodBuggerTool (a
	// server-side dry run) says answerer, then checks the message.
	refusedBy := func(what, answerer string) {
		t.Helper()
		var refusal string
		h.WaitFor(what+" to refuse alice's PodBuggerTool", time.Minute, func(context.Context) (bool, string, error) {
			out, err := h.KubectlErr("--kubeconfig", alice, "apply", "-f", sample, "--dry-run=server")
			refusal = out
			return err != nil && strings.Contains(out, answerer), strings.TrimSpace(out), nil
		})
		for _, want := range []string{"(Forbidden)", answerer, "user system:serviceaccount:" + h.Namespace + ":alice may not patch pods/ephemeralcontainers in namespace " + h.Namespace} {
			if !strings.Contains(refusal, want) {
				t.Errorf("alice's refusal lacks %q:\n%s", want, refusal)
			}
		}
	}
	const policy = "config/policy/podbuggertool_debug_rights.yaml"
	if !harness.InCluster() {
		// The webhook alone, as an OLM bundle installs the operator: make
		// run serves it, and make install applies no policy.
		refusedBy("the webhook", `admission webhook "vpodbuggertool-v1alpha1.kb.io" denied the request: podbuggertools.debug.mock.com "podbuggertool-sample" is forbidden:`)
		// make deploy applied the policy with the rest of config/default.
		h.KubectlIn(dir, "apply", "-f", policy)
		t.Cleanup(func() { _, _ = h.KubectlErr("delete", "--ignore-not-found", "-f", filepath.Join(dir, policy)) })
	}
	// The API server compiles a new policy in the background; once it has,
	// the policy answers before the webhook is asked.
	// make deploy prefixes the policy's and its binding's names
	// (operator-demo-...); applied alone, they have none.
	refusedBy("the policy", "podbuggertool-needs-debug-rights-binding.debug.mock.com' denied request:")

	h.Kubectl("--kubeconfig", bob, "apply", "-f", sample)
	waitForDebugger(h, "debug-me to get bob's debugger, restricted, and the PodBuggerTool to count it")
	pod, err := h.Env.Client.CoreV1().Pods(h.Namespace).Get(t.Context(), "debug-me", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sc := pod.Spec.EphemeralContainers[0].SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot ||
		sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.Capabilities == nil ||
		!slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || sc.SeccompProfile == nil ||
		sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("the debugger's securityContext is not kubectl debug --profile=restricted's: %+v", sc)
	}

	// alice may change what changes no debugger, not what does.
	h.Kubectl("--kubeconfig", alice, "label", "podbuggertool", "podbuggertool-sample", "team=a")
	out, err := h.KubectlErr("--kubeconfig", alice, "patch", "podbuggertool", "podbuggertool-sample", "--type=merge", "-p", `{"spec":{"image":"busybox:musl"}}`)
	if err == nil || !strings.Contains(out, "pods/ephemeralcontainers") {
		t.Errorf("alice changed the image of bob's PodBuggerTool: want it refused, naming pods/ephemeralcontainers; got err=%v:\n%s", err, out)
	}
	expectDebuggerRuns(h, "debug-me")
}

// TestPodBuggerToolSurvivesKills kills the manager with SIGKILL at random
// moments while labelled pods come and go, and restarts it: no pod may ever
// have two debuggers (a watch sees every version of every pod), and in the
// end every labelled pod has exactly one.
func TestPodBuggerToolSurvivesKills(t *testing.T) {
	tier.Extended(t)
	h := harness.New(t)
	h.Track("podbuggertool/podbuggertool-sample")
	mgr := startManagerBinary(h)
	most := watchEphemeral(h)
	h.KubectlIn(h.Path("operator-demo"), "apply", "-f", "config/samples/debug_v1alpha1_podbuggertool.yaml")

	seed := time.Now().UnixNano()
	t.Logf("random seed %d", seed)
	rnd := rand.New(rand.NewPCG(uint64(seed), 0))
	rounds := 4
	if harness.Full() {
		rounds = 15
	}
	var live []string
	for round := range rounds {
		for i := range 2 {
			name := fmt.Sprintf("pod-%d-%d", round, i)
			h.Kubectl("run", name, "--image=busybox", "--labels=debug.mock.com/debug=true", "--", "sleep", "3600")
			live = append(live, name)
		}
		if round > 0 {
			h.Kubectl("delete", "pod", live[0], "--wait=false")
			live = live[1:]
		}
		// Somewhere in the middle of the manager's work.
		time.Sleep(time.Duration(rnd.IntN(400)) * time.Millisecond)
		if err := mgr.Kill(); err != nil {
			t.Fatal(err)
		}
		if err := mgr.Restart(); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}

	h.WaitFor(fmt.Sprintf("each of %v to have a debugger", live), 2*time.Minute, func(ctx context.Context) (bool, string, error) {
		var without []string
		for _, name := range live {
			pod, err := h.Env.Client.CoreV1().Pods(h.Namespace).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, "", err
			}
			if len(pod.Spec.EphemeralContainers) == 0 {
				without = append(without, name)
			}
		}
		return len(without) == 0, fmt.Sprintf("without one: %v", without), nil
	})
	for name, ecs := range most() {
		if len(ecs) > 1 {
			t.Errorf("pod %s had %d debuggers: %q", name, len(ecs), ecs)
		}
	}
	for _, name := range live {
		pod, err := h.Env.Client.CoreV1().Pods(h.Namespace).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ecs, want := ephemeral(pod), debuggerName+" busybox "+name; !slices.Equal(ecs, []string{want}) {
			t.Errorf("pod %s has %q, want %q", name, ecs, want)
		}
	}
}

// watchEphemeral watches the test's pods and returns, for each, the most
// ephemeral containers it was ever seen with (ephemeral containers are
// never removed, but a pod can be deleted before the end).
func watchEphemeral(h *harness.H) func() map[string][]string {
	h.Helper()
	pods := h.Env.Client.CoreV1().Pods(h.Namespace)
	list, err := pods.List(h.Ctx, metav1.ListOptions{})
	if err != nil {
		h.Fatal(err)
	}
	w, err := watchtools.NewRetryWatcherWithContext(h.Ctx, list.ResourceVersion, &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return pods.Watch(ctx, o)
		},
	})
	if err != nil {
		h.Fatal(err)
	}
	h.Cleanup(w.Stop)
	var mu sync.Mutex
	most := map[string][]string{}
	go func() {
		for ev := range w.ResultChan() {
			if pod, ok := ev.Object.(*corev1.Pod); ok {
				mu.Lock()
				if ecs := ephemeral(pod); len(ecs) > len(most[pod.Name]) {
					most[pod.Name] = ecs
				}
				mu.Unlock()
			}
		}
	}()
	return func() map[string][]string {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(most)
	}
}

// waitForDebugger waits until debug-me carries the debugger of the sample
// PodBuggerTool, and the tool counts it and is Ready.
func waitForDebugger(h *harness.H, what string) {
	h.Helper()
	want := debuggerName + " busybox debug-me"
	h.WaitFor(what, 2*time.Minute, func(ctx context.Context) (bool, string, error) {
		pod, err := h.Env.Client.CoreV1().Pods(h.Namespace).Get(ctx, "debug-me", metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		var tool struct {
			Status struct {
				DebuggedPods int32              `json:"debuggedPods"`
				Conditions   []metav1.Condition `json:"conditions"`
			} `json:"status"`
		}
		if err := get(ctx, h, "/apis/debug.mock.com/v1alpha1/namespaces/"+h.Namespace+"/podbuggertools/podbuggertool-sample", &tool); err != nil {
			return false, "", err
		}
		ready, reason := readyCondition(tool.Status.Conditions)
		ecs := ephemeral(pod)
		return slices.Equal(ecs, []string{want}) && tool.Status.DebuggedPods == 1 && ready == "True",
			fmt.Sprintf("debug-me's ephemeral containers %q (want %q); debuggedPods %d; Ready=%s (%s)", ecs, want, tool.Status.DebuggedPods, ready, reason), nil
	})
}
