package cluster

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// Clientset returns a client for the cluster a kubeconfig file describes.
func Clientset(kubeconfig string) (kubernetes.Interface, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig %s: %w", kubeconfig, err)
	}
	// These clients only make short calls: a dead server must not hang them.
	cfg.Timeout = 15 * time.Second
	// The waits poll several times a second: client-go's default limit of 5
	// requests a second would throttle them, and at the deadline its error
	// would hide the server's last answer.
	cfg.QPS, cfg.Burst = 50, 100
	return kubernetes.NewForConfig(cfg)
}

// poll asks check every interval until it says done or timeout passes. A
// check returns what it saw, or the error that stopped it from seeing: on
// timeout the error says what was awaited and the last thing seen, not only
// that time ran out.
func poll(ctx context.Context, interval, timeout time.Duration, what string, check func(context.Context) (bool, string, error)) error {
	last := "no answer from the API server yet"
	err := wait.PollUntilContextTimeout(ctx, interval, timeout, true, func(ctx context.Context) (bool, error) {
		done, seen, err := check(ctx)
		switch {
		case err != nil && ctx.Err() != nil:
			// cut short by the deadline: the last answer says more
		case err != nil:
			last = err.Error()
		default:
			last = seen
		}
		return err == nil && done, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %s: gave up after %s, last seen: %s", what, timeout, last)
	}
	return nil
}

// WaitForReady waits until the API server says it is ready (GET /readyz).
// A restarted API server answers before it is: until its post-start hooks
// have run it may not yet serve the CustomResourceDefinitions' resources or
// know the RBAC bindings, and a client sees "the server doesn't have a
// resource type" or "forbidden". When it gives up, it says which checks
// failed.
func WaitForReady(ctx context.Context, kubeconfig string, timeout time.Duration, log io.Writer) error {
	cs, err := Clientset(kubeconfig)
	if err != nil {
		return err
	}
	start := time.Now()
	err = poll(ctx, 200*time.Millisecond, timeout, "the API server's /readyz", func(ctx context.Context) (bool, string, error) {
		body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").Param("verbose", "").DoRaw(ctx)
		if err != nil {
			if failed := failedChecks(string(body)); failed != "" && ctx.Err() == nil {
				return false, "", fmt.Errorf("failed checks: %s", failed)
			}
			return false, "", err
		}
		return true, "ready", nil
	})
	if err != nil {
		return err
	}
	progress(log, start, "the API server is ready (/readyz)")
	return nil
}

// failedChecks picks the failed checks ("[-]name failed: ...") out of a
// verbose /readyz answer.
func failedChecks(body string) string {
	var failed []string
	for _, line := range strings.Split(body, "\n") {
		if name, ok := strings.CutPrefix(line, "[-]"); ok {
			name, _, _ = strings.Cut(name, " ")
			failed = append(failed, name)
		}
	}
	return strings.Join(failed, ", ")
}

// WaitForNodes waits until at least want nodes are Ready, and says how many
// it saw when it gives up.
func WaitForNodes(ctx context.Context, kubeconfig string, want int, timeout time.Duration, log io.Writer) error {
	cs, err := Clientset(kubeconfig)
	if err != nil {
		return err
	}
	start := time.Now()
	var last string
	err = poll(ctx, 500*time.Millisecond, timeout, fmt.Sprintf("%d Ready nodes", want), func(ctx context.Context) (bool, string, error) {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		ready := 0
		for _, n := range nodes.Items {
			if nodeReady(&n) {
				ready++
			}
		}
		last = fmt.Sprintf("%d of %d nodes Ready", ready, len(nodes.Items))
		return ready >= want, last, nil
	})
	if err != nil {
		return err
	}
	progress(log, start, "nodes: %s", last)
	return nil
}

// WaitForDefaultServiceAccount waits until the controller-manager has made
// the default ServiceAccount of the default namespace: until then the API
// server refuses pods there ("serviceaccount \"default\" not found").
func WaitForDefaultServiceAccount(ctx context.Context, kubeconfig string, timeout time.Duration) error {
	cs, err := Clientset(kubeconfig)
	if err != nil {
		return err
	}
	return poll(ctx, 200*time.Millisecond, timeout, "the default ServiceAccount", func(ctx context.Context) (bool, string, error) {
		_, err := cs.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, "it exists", err
	})
}

// WaitForDaemonSets waits until every DaemonSet in kube-system has a pod
// available on each node it targets. A kind node is Ready before its
// kube-proxy and CNI pods run: until kube-proxy has written the node's
// Service rules, a pod's connection to a ClusterIP (the API server's
// 10.96.0.1, a webhook's Service) leaves the cluster by the default route,
// and whatever answers there is not the Service. A manager started then
// fails its first requests and restarts.
func WaitForDaemonSets(ctx context.Context, kubeconfig string, timeout time.Duration, log io.Writer) error {
	cs, err := Clientset(kubeconfig)
	if err != nil {
		return err
	}
	start := time.Now()
	err = poll(ctx, 500*time.Millisecond, timeout, "kube-system's DaemonSets (kube-proxy, the CNI) on every node", func(ctx context.Context) (bool, string, error) {
		list, err := cs.AppsV1().DaemonSets(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		if len(list.Items) == 0 {
			return false, "no DaemonSets in kube-system yet", nil
		}
		waiting := daemonSetsWaiting(list.Items)
		return len(waiting) == 0, strings.Join(waiting, ", "), nil
	})
	if err != nil {
		return err
	}
	progress(log, start, "kube-system's DaemonSets (kube-proxy, the CNI) run on every node")
	return nil
}

// daemonSetsWaiting names the DaemonSets not yet available on every node
// they target, with how many of their pods are.
func daemonSetsWaiting(list []appsv1.DaemonSet) []string {
	var waiting []string
	for _, ds := range list {
		st := ds.Status
		if st.ObservedGeneration < ds.Generation || st.DesiredNumberScheduled == 0 ||
			st.NumberAvailable < st.DesiredNumberScheduled || st.UpdatedNumberScheduled < st.DesiredNumberScheduled {
			waiting = append(waiting, fmt.Sprintf("%s: %d of %d pods available", ds.Name, st.NumberAvailable, st.DesiredNumberScheduled))
		}
	}
	return waiting
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// WaitEstablished is `kubectl wait`'s argument for a CRD the API server
// serves. kubectl 1.37 fails at once, instead of waiting, while a new CRD's
// .status.conditions is still null, with --for=condition=Established
// (kubernetes/kubernetes#66439) and with this JSONPath alike ("<nil> is not
// array or slice"): harness.H.WaitEstablished tries that answer again.
const WaitEstablished = `--for=jsonpath={.status.conditions[?(@.type=="Established")].status}=True`
