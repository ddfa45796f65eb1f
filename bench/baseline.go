package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"example.com/k8s-demo/e2e/process"
)

// The plain loop: the writes a controller makes for each object, made by a
// loop that already knows what to write. It reads nothing, watches nothing,
// queues nothing and never retries: the limit a controller can approach. It
// runs as many workers as the controllers (-workers), under the same rate
// limit, and sends its writes as they do:
//
//   - a CustomPod's pods in batches of 1, then 2, each batch at once, as
//     both controllers create them (pod_writes.go);
//   - the event ("Created 3 pods: …") from a goroutine of its own, through a
//     client of its own with its own rate limit, as a recorder sends it, and
//     named as client-go's recorders name events;
//   - the status while the pods start (3 pods, none ready), then the final
//     one at once: the loop does not wait for the kubelet.
//
// The objects themselves are created as the bench creates them for a
// controller: by 8 goroutines of their own, through a client that goes
// around the counting proxy and has no rate limit. The loop's counted
// requests per object are then a controller's.
//
// -loop-writes=final is the loop as it was before it made the event and the
// starting status: a second reference, the limit for a controller that
// records no event and writes its status once.

// networkFinalizer is crd-demo's (controller.go).
const networkFinalizer = "samplecrd.k8s.io/backend-network"

// baselineReady is the line the loop prints once its clients are made,
// before it creates anything.
const baselineReady = "plain loop: clients ready, waiting for SIGUSR1"

// The loop's writes per CustomPod (-loop-writes).
const (
	controllerWrites = "controller" // pods, event, starting status, final status
	finalWrites      = "final"      // pods, final status
)

// loopClients are the plain loop's clients.
type loopClients struct {
	dyn     dynamic.Interface    // CustomPods' status, Networks: the rate limit, counted
	kube    kubernetes.Interface // pods, as protobuf: the same rate limit, counted
	events  kubernetes.Interface // events: a rate limit of their own, counted
	objects dynamic.Interface    // the objects: no rate limit, not counted
}

func runBaseline(kindName string, n int, ns string, q qpsSetting, workers int, backendURL, objectsKubeconfig, writes string) error {
	if writes != controllerWrites && writes != finalWrites {
		return fmt.Errorf("-loop-writes: want %s or %s, got %q", controllerWrites, finalWrites, writes)
	}
	load := func(path string) (*rest.Config, error) {
		rules := clientcmd.NewDefaultClientConfigLoadingRules()
		if path != "" {
			rules = &clientcmd.ClientConfigLoadingRules{ExplicitPath: path}
		}
		return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, nil).ClientConfig()
	}
	cfg, err := load("")
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = float32(q.QPS), q.Burst
	var c loopClients
	if c.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		return err
	}
	// Pods and events as protobuf, as the controllers send them
	// (controller-runtime's client for every built-in kind; crd-demo's
	// clientsets): the same wire format for the same writes. Each
	// NewForConfig makes its own token bucket.
	builtin := rest.CopyConfig(cfg)
	builtin.ContentType = runtime.ContentTypeProtobuf
	builtin.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	if c.kube, err = kubernetes.NewForConfig(builtin); err != nil {
		return err
	}
	if c.events, err = kubernetes.NewForConfig(builtin); err != nil {
		return err
	}
	objCfg, err := load(objectsKubeconfig)
	if err != nil {
		return err
	}
	if objectsKubeconfig == "" {
		objCfg = rest.CopyConfig(cfg)
	}
	objCfg.QPS, objCfg.Burst = -1, 0
	if c.objects, err = dynamic.NewForConfig(objCfg); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The bench reads what the loop holds before its first object, then
	// says go (SIGUSR1): what the objects add is what it holds beyond that.
	goAhead := make(chan os.Signal, 1)
	signal.Notify(goAhead, syscall.SIGUSR1)
	fmt.Println(baselineReady)
	select {
	case <-goAhead:
	case <-ctx.Done():
		return ctx.Err()
	}

	var k kind
	switch kindName {
	case customPods.name:
		k = customPods
	case networks.name:
		k = networks
	default:
		return fmt.Errorf("-kind: want %s or %s, got %q", customPods.name, networks.name, kindName)
	}
	var mu sync.Mutex
	var firstErr error
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if firstErr == nil {
			firstErr = err
		}
	}
	// 1. The objects, as the bench creates them for a controller.
	created := make(chan *unstructured.Unstructured, n)
	indexes := make(chan int)
	var creators sync.WaitGroup
	for range 8 {
		creators.Go(func() {
			for i := range indexes {
				u, err := c.objects.Resource(k.gvr).Namespace(ns).Create(ctx, k.object(i), metav1.CreateOptions{})
				if err != nil {
					fail(fmt.Errorf("creating %s %d: %w", k.name, i, err))
					continue
				}
				created <- u
			}
		})
	}
	go func() {
		for i := range n {
			indexes <- i
		}
		close(indexes)
		creators.Wait()
		close(created)
	}()
	// 2. The workers make each object's writes.
	start := time.Now()
	var workersDone, eventsSent sync.WaitGroup
	for range workers {
		workersDone.Go(func() {
			for u := range created {
				var err error
				switch kindName {
				case customPods.name:
					err = baselineCustomPod(ctx, c, u, writes, &eventsSent)
				case networks.name:
					err = baselineNetwork(ctx, c.dyn, u, backendURL)
				}
				if err != nil {
					fail(err)
				}
			}
		})
	}
	workersDone.Wait()
	eventsSent.Wait()
	if firstErr != nil {
		return firstErr
	}
	fmt.Printf("plain loop: %d %ss written in %s; waiting to be stopped\n", n, kindName, time.Since(start))
	// Stay up, so that the bench reads this process's usage as it does a
	// controller's.
	<-ctx.Done()
	return nil
}

func baselineCustomPod(ctx context.Context, c loopClients, cp *unstructured.Unstructured, writes string, eventsSent *sync.WaitGroup) error {
	ns := cp.GetNamespace()
	// Pods in batches of 1, then 2: each batch at once.
	names := make([]any, 3)
	for _, batch := range [][]int{{0}, {1, 2}} {
		errs := make([]error, len(batch))
		var wg sync.WaitGroup
		for j, i := range batch {
			wg.Go(func() {
				pod, err := c.kube.CoreV1().Pods(ns).Create(ctx, podFor(cp, i), metav1.CreateOptions{})
				if err == nil {
					names[i] = pod.Name
				}
				errs[j] = err
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
	}
	if writes == controllerWrites {
		// The event, from a goroutine of its own: a recorder's broadcaster
		// sends it while the worker goes on.
		eventsSent.Go(func() {
			if _, err := c.events.EventsV1().Events(ns).Create(ctx, eventFor(cp, names), metav1.CreateOptions{}); err != nil {
				fmt.Fprintln(os.Stderr, "plain loop: event:", err)
			}
		})
		// The status while the pods start: 3 pods, none ready.
		if err := writeStatus(ctx, c.dyn, cp, names, 0); err != nil {
			return err
		}
	}
	return writeStatus(ctx, c.dyn, cp, names, 3)
}

// writeStatus writes cp's status with ready of its 3 pods ready, and sets cp
// to what the API server returned (its resourceVersion for the next write).
func writeStatus(ctx context.Context, dyn dynamic.Interface, cp *unstructured.Unstructured, names []any, ready int64) error {
	cond := map[string]any{
		"type": "Ready", "status": "False", "reason": "PodsNotReady", "message": fmt.Sprintf("%d of 3 pods ready", ready),
		"observedGeneration": cp.GetGeneration(), "lastTransitionTime": time.Now().UTC().Format(time.RFC3339),
	}
	if ready == 3 {
		cond["status"], cond["reason"] = "True", "PodsReady"
	}
	status := map[string]any{"replicas": int64(3), "readyReplicas": ready, "podNames": names, "conditions": []any{cond}}
	if err := unstructured.SetNestedField(cp.Object, status, "status"); err != nil {
		return err
	}
	u, err := dyn.Resource(customPods.gvr).Namespace(cp.GetNamespace()).UpdateStatus(ctx, cp, metav1.UpdateOptions{})
	if err != nil {
		return err
	}
	*cp = *u
	return nil
}

// eventFor is the event a controller records once it has made cp's pods:
// the SuccessfulCreate a ReplicaSet records, named as client-go's recorders
// name an event (the object's name, a dot, the time in hexadecimal
// nanoseconds).
func eventFor(cp *unstructured.Unstructured, names []any) *eventsv1.Event {
	now := time.Now()
	strs := make([]string, len(names))
	for i, n := range names {
		strs[i] = fmt.Sprint(n)
	}
	return &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", cp.GetName(), now.UnixNano()), Namespace: cp.GetNamespace()},
		EventTime:  metav1.NewMicroTime(now),
		Regarding: corev1.ObjectReference{
			APIVersion: cp.GetAPIVersion(), Kind: cp.GetKind(), Namespace: cp.GetNamespace(), Name: cp.GetName(),
			UID: cp.GetUID(), ResourceVersion: cp.GetResourceVersion(),
		},
		Type: corev1.EventTypeNormal, Reason: "SuccessfulCreate", Action: "Create",
		Note:                "Created 3 pods: " + strings.Join(strs, ", "),
		ReportingController: "custompod-controller", ReportingInstance: "plain-loop",
	}
}

// podFor is the pod the CustomPod controllers make with ordinal i: named,
// owned, labelled, busybox, with the restricted security context.
func podFor(cp *unstructured.Unstructured, i int) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:   cp.GetName() + "-" + strconv.Itoa(i),
			Labels: map[string]string{"zhhnzw.mock.com/custompod": cp.GetName()},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "zhhnzw.mock.com/v2", Kind: "CustomPod", Name: cp.GetName(), UID: cp.GetUID(),
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot:   ptr.To(true),
				RunAsUser:      ptr.To[int64](65534),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{
				Name: "busybox", Image: "busybox:1.36", ImagePullPolicy: corev1.PullIfNotPresent, Command: []string{"sleep", "3600"},
				SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: ptr.To(false),
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
			}},
		},
	}
}

func baselineNetwork(ctx context.Context, dyn dynamic.Interface, net *unstructured.Unstructured, backendURL string) error {
	ns := net.GetNamespace()
	nets := dyn.Resource(networks.gvr).Namespace(ns)
	var err error
	net.SetFinalizers([]string{networkFinalizer})
	if net, err = nets.Update(ctx, net, metav1.UpdateOptions{}); err != nil {
		return err
	}
	cidr, _, _ := unstructured.NestedString(net.Object, "spec", "cidr")
	gw, _, _ := unstructured.NestedString(net.Object, "spec", "gateway")
	body, _ := json.Marshal(map[string]any{"network": map[string]string{
		"name": ns + "/" + net.GetName(), "cidr": cidr, "gateway_ip": gw}})
	resp, err := http.Post(backendURL+"/v2.0/networks", "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("backend: POST /v2.0/networks: want 201 Created, got %s", resp.Status)
	}
	status := map[string]any{
		"observedGeneration": net.GetGeneration(),
		"conditions": []any{map[string]any{
			"type": "Ready", "status": "True", "reason": "Synced", "message": "backend network up to date",
			"observedGeneration": net.GetGeneration(), "lastTransitionTime": time.Now().UTC().Format(time.RFC3339),
		}},
	}
	if err := unstructured.SetNestedField(net.Object, status, "status"); err != nil {
		return err
	}
	_, err = nets.UpdateStatus(ctx, net, metav1.UpdateOptions{})
	return err
}

// deleteNetworks deletes every Network of the namespace and waits until they
// are gone from the cluster and from the backend. With a controller, its
// finalizer does the backend's part; the plain loop's part is done here.
func (b *bench) deleteNetworks(ctx context.Context, ns, backendURL string, baseline bool, p *process.Process) error {
	nets := b.dyn.Resource(networks.gvr).Namespace(ns)
	if err := nets.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		return err
	}
	if baseline {
		list, err := nets.List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		backend := backendNetworks(backendURL)
		for _, u := range list.Items {
			if id, ok := backend[ns+"/"+u.GetName()]; ok {
				req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, backendURL+"/v2.0/networks/"+id, nil)
				if resp, err := http.DefaultClient.Do(req); err == nil {
					resp.Body.Close()
				}
			}
			if _, err := nets.Patch(ctx, u.GetName(), "application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
				return err
			}
		}
	}
	var left, inBackend int
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, b.timeout, true, func(ctx context.Context) (bool, error) {
		list, err := nets.List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		left, inBackend = len(list.Items), len(backendNetworks(backendURL))
		return left == 0 && inBackend == 0, nil
	})
	if err != nil {
		return fmt.Errorf("deleting every Network: after %s, %d Networks left and %d networks still in the backend\n%s", b.timeout, left, inBackend, tail(p))
	}
	return nil
}

// backendNetworks maps the backend's network names to their IDs.
func backendNetworks(url string) map[string]string {
	resp, err := http.Get(url + "/v2.0/networks")
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var body struct {
		Networks []struct{ ID, Name string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil
	}
	m := map[string]string{}
	for _, n := range body.Networks {
		if strings.TrimSpace(n.Name) != "" {
			m[n.Name] = n.ID
		}
	}
	return m
}
