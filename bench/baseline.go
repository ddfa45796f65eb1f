package main

import (
	"bytes"
	"context"
	"encoding/json"
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

// The plain loop: the writes a controller ends up making for each object,
// made by a loop that already knows what to write. It reads nothing, watches
// nothing and never retries: the limit a controller can approach. It runs as
// many workers as the controllers (-workers), under the same rate limit.

// networkFinalizer is crd-demo's (controller.go).
const networkFinalizer = "samplecrd.k8s.io/backend-network"

// baselineReady is the line the loop prints once its clients are made,
// before it creates anything.
const baselineReady = "plain loop: clients ready, waiting for SIGUSR1"

func runBaseline(kindName string, n int, ns string, q qpsSetting, workers int, backendURL string) error {
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(clientcmd.NewDefaultClientConfigLoadingRules(), nil).ClientConfig()
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = float32(q.QPS), q.Burst
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	// Pods as protobuf, as the controllers send them (controller-runtime's
	// client for every built-in kind; crd-demo's clientsets for pods and
	// events): the same wire format for the same writes.
	builtin := rest.CopyConfig(cfg)
	builtin.ContentType = runtime.ContentTypeProtobuf
	builtin.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	kube, err := kubernetes.NewForConfig(builtin)
	if err != nil {
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

	one := func(i int) error {
		switch kindName {
		case customPods.name:
			return baselineCustomPod(ctx, dyn, kube, ns, i)
		case networks.name:
			return baselineNetwork(ctx, dyn, ns, i, backendURL)
		}
		return fmt.Errorf("-kind: want %s or %s, got %q", customPods.name, networks.name, kindName)
	}
	jobs := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for range workers {
		wg.Go(func() {
			for i := range jobs {
				if err := one(i); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
			}
		})
	}
	start := time.Now()
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	fmt.Printf("plain loop: %d %ss written in %s; waiting to be stopped\n", n, kindName, time.Since(start))
	// Stay up, so that the bench reads this process's usage as it does a
	// controller's.
	<-ctx.Done()
	return nil
}

func baselineCustomPod(ctx context.Context, dyn dynamic.Interface, kube kubernetes.Interface, ns string, i int) error {
	cp, err := dyn.Resource(customPods.gvr).Namespace(ns).Create(ctx, customPods.object(i), metav1.CreateOptions{})
	if err != nil {
		return err
	}
	var names []any
	for i := range 3 {
		pod, err := kube.CoreV1().Pods(ns).Create(ctx, podFor(cp, i), metav1.CreateOptions{})
		if err != nil {
			return err
		}
		names = append(names, pod.Name)
	}
	// The status once the pods are ready, written at once: the loop does not
	// wait for the kubelet, where a controller writes again as pods become ready.
	status := map[string]any{
		"replicas":      int64(3),
		"readyReplicas": int64(3),
		"podNames":      names,
		"conditions": []any{map[string]any{
			"type": "Ready", "status": "True", "reason": "PodsReady", "message": "3 of 3 pods ready",
			"observedGeneration": cp.GetGeneration(), "lastTransitionTime": time.Now().UTC().Format(time.RFC3339),
		}},
	}
	if err := unstructured.SetNestedField(cp.Object, status, "status"); err != nil {
		return err
	}
	_, err = dyn.Resource(customPods.gvr).Namespace(ns).UpdateStatus(ctx, cp, metav1.UpdateOptions{})
	return err
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

func baselineNetwork(ctx context.Context, dyn dynamic.Interface, ns string, i int, backendURL string) error {
	nets := dyn.Resource(networks.gvr).Namespace(ns)
	net, err := nets.Create(ctx, networks.object(i), metav1.CreateOptions{})
	if err != nil {
		return err
	}
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
