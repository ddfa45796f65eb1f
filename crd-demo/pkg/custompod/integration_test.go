package custompod

import (
	"context"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	"example.com/k8s-demo/crd-demo/internal/testenv"
	zhhnzwv1 "example.com/k8s-demo/crd-demo/pkg/apis/zhhnzw/v1"
	zhhnzwv2 "example.com/k8s-demo/crd-demo/pkg/apis/zhhnzw/v2"
	clientset "example.com/k8s-demo/crd-demo/pkg/client/clientset/versioned"
	informers "example.com/k8s-demo/crd-demo/pkg/client/informers/externalversions"
)

// apiServer runs etcd and kube-apiserver with crd/ installed, and the
// conversion webhook, so that v1 CustomPods can be written too. It has no
// scheduler, kubelet or garbage collector: pods stay Pending, and a pod that
// was never scheduled is removed at once when deleted.
var apiServer = testenv.New("../../crd").WithConversionWebhook()

func TestMain(m *testing.M) {
	code := m.Run()
	apiServer.Stop()
	os.Exit(code)
}

// TestScaleAgainstAPIServer runs the controller as cmd/custompod-controller
// does and scales a CustomPod 3 → 1, then deletes one of its pods behind its
// back.
func TestScaleAgainstAPIServer(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	cfg := apiServer.Config(t)
	kube := kubernetes.NewForConfigOrDie(cfg)
	custom := clientset.NewForConfigOrDie(cfg)

	// Count the pods the controller creates and deletes: scaling must make
	// exactly the pods that are missing, never one too many. A create the
	// API server refuses with AlreadyExists makes nothing: the controller
	// sends one when its cache is behind (a pod it just made, not seen yet),
	// which is how deterministic names keep it from making too many.
	var creates, deletes, refused atomic.Int32
	controllerCfg := rest.CopyConfig(cfg)
	controllerCfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(req)
			if err != nil {
				return resp, err
			}
			switch {
			case strings.HasSuffix(req.URL.Path, "/pods") && req.Method == http.MethodPost && resp.StatusCode == http.StatusCreated:
				creates.Add(1)
			case strings.HasSuffix(req.URL.Path, "/pods") && req.Method == http.MethodPost && resp.StatusCode == http.StatusConflict:
				refused.Add(1)
			case strings.Contains(req.URL.Path, "/pods/") && req.Method == http.MethodDelete && (resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusAccepted):
				deletes.Add(1)
			}
			return resp, err
		})
	})
	controllerKube := kubernetes.NewForConfigOrDie(controllerCfg)
	ns, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "custompod-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	c := runController(ctx, t, controllerKube, custom, ns.Name)

	customPods := custom.ZhhnzwV2().CustomPods(ns.Name)
	cp, err := customPods.Create(ctx, &zhhnzwv2.CustomPod{
		ObjectMeta: metav1.ObjectMeta{Name: "sample"},
		Spec: zhhnzwv2.CustomPodSpec{
			Replicas: ptr.To[int32](3),
			Template: zhhnzwv2.CustomPodTemplate{Image: "nginx:1.27", Command: []string{"nginx", "-g", "daemon off;"}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// converged waits until the CustomPod has exactly n pods and a status
	// that lists them.
	converged := func(n int) []string {
		t.Helper()
		var names []string
		err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			pods, err := kube.CoreV1().Pods(ns.Name).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, nil
			}
			names = nil
			for _, pod := range pods.Items {
				if metav1.IsControlledBy(&pod, cp) && pod.DeletionTimestamp == nil {
					names = append(names, pod.Name)
				}
			}
			slices.Sort(names)
			got, err := customPods.Get(ctx, "sample", metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			return len(names) == n && got.Status.Replicas == int32(n) && slices.Equal(got.Status.PodNames, names), nil
		})
		if err != nil {
			t.Fatalf("timed out waiting for %d pods listed in the status; last pods seen: %v", n, names)
		}
		return names
	}

	converged(3)
	// The pods run the template.
	pods, err := kube.CoreV1().Pods(ns.Name).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, pod := range pods.Items {
		if c := pod.Spec.Containers[0]; c.Image != "nginx:1.27" || !slices.Equal(c.Command, []string{"nginx", "-g", "daemon off;"}) {
			t.Errorf("pod %s runs %s %q, want the template's nginx:1.27 [nginx -g daemon off;]", pod.Name, c.Image, c.Command)
		}
	}

	cp, err = customPods.Get(ctx, "sample", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cp.Spec.Replicas = ptr.To[int32](1)
	if cp, err = customPods.Update(ctx, cp, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	names := converged(1)

	if !slices.Equal(names, []string{"sample-0"}) {
		t.Errorf("after the scale down the pods are %v, want [sample-0]: the highest ordinals go", names)
	}

	// Someone deletes the last pod: its Delete event brings a replacement,
	// under the same name.
	old, err := kube.CoreV1().Pods(ns.Name).Get(ctx, names[0], metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := kube.CoreV1().Pods(ns.Name).Delete(ctx, old.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		pod, err := kube.CoreV1().Pods(ns.Name).Get(ctx, old.Name, metav1.GetOptions{})
		return err == nil && pod.UID != old.UID, nil
	})
	if err != nil {
		t.Errorf("pod %s was not replaced", old.Name)
	}
	converged(1)

	// 3 pods, then 1 replacement; 2 deleted by the scale down.
	if creates.Load() != 4 || deletes.Load() != 2 {
		t.Errorf("the controller created %d pods and deleted %d, want 4 and 2 (and %d creates refused: the pod existed)", creates.Load(), deletes.Load(), refused.Load())
	}

	// The CustomPod is deleted. This API server has no garbage collector, so
	// its pods stay (in a cluster their owner reference makes the collector
	// delete them); the controller must leave them alone and create none.
	if err := customPods.Delete(ctx, "sample", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		_, err := c.customPodsLister.CustomPods(ns.Name).Get("sample")
		return err != nil, nil
	})
	if err != nil {
		t.Fatal("the controller's cache still holds the deleted CustomPod")
	}
	created, removed := creates.Load(), deletes.Load()
	time.Sleep(2 * time.Second) // the work queue's retries, had the sync failed
	if creates.Load() != created || deletes.Load() != removed {
		t.Errorf("after the CustomPod was deleted the controller created %d pods and deleted %d, want none",
			creates.Load()-created, deletes.Load()-removed)
	}
}

// TestV1CustomPodAgainstAPIServer: the controller reads v2, a client writes
// v1. The API server converts (the webhook of testenv): the pods run v1's
// busybox, and the v1 client sees the status the controller wrote in v2.
func TestV1CustomPodAgainstAPIServer(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	cfg := apiServer.Config(t)
	kube := kubernetes.NewForConfigOrDie(cfg)
	custom := clientset.NewForConfigOrDie(cfg)
	ns, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "custompod-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	runController(ctx, t, kube, custom, ns.Name)

	v1s := custom.ZhhnzwV1().CustomPods(ns.Name)
	if _, err := v1s.Create(ctx, &zhhnzwv1.CustomPod{
		ObjectMeta: metav1.ObjectMeta{Name: "sample"},
		Spec:       zhhnzwv1.CustomPodSpec{Replicas: ptr.To[int32](2)},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var last *zhhnzwv1.CustomPod
	err = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		last, err = v1s.Get(ctx, "sample", metav1.GetOptions{})
		return err == nil && last.Status.Replicas == 2 && len(last.Status.PodNames) == 2, nil
	})
	if err != nil {
		t.Fatalf("the v1 CustomPod's status never listed 2 pods; last seen: %+v", last)
	}
	pods, err := kube.CoreV1().Pods(ns.Name).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, pod := range pods.Items {
		if c := pod.Spec.Containers[0]; c.Image != zhhnzwv1.PodImage || !slices.Equal(c.Command, []string{"sleep", "3600"}) {
			t.Errorf("pod %s runs %s %q, want v1's busybox:1.36 [sleep 3600]", pod.Name, c.Image, c.Command)
		}
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// TestReadinessAgainstAPIServer runs the controller on a namespace that
// enforces the "restricted" Pod Security Standard, so that the API server's
// PodSecurity admission checks the pods it makes. This API server has no
// kubelet: the test marks the pods Ready itself, as a kubelet would, and
// follows readyReplicas and the Ready condition.
func TestReadinessAgainstAPIServer(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	cfg := apiServer.Config(t)
	kube := kubernetes.NewForConfigOrDie(cfg)
	custom := clientset.NewForConfigOrDie(cfg)
	ns, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		GenerateName: "custompod-",
		Labels:       map[string]string{"pod-security.kubernetes.io/enforce": "restricted"},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	runController(ctx, t, kube, custom, ns.Name)

	customPods := custom.ZhhnzwV2().CustomPods(ns.Name)
	if _, err := customPods.Create(ctx, &zhhnzwv2.CustomPod{
		ObjectMeta: metav1.ObjectMeta{Name: "sample"},
		Spec:       zhhnzwv2.CustomPodSpec{Replicas: ptr.To[int32](2), Template: zhhnzwv1.DefaultTemplate()},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// statusIs waits until the status counts replicas pods, ready of them
	// ready, with the Ready condition's status and message.
	var last zhhnzwv2.CustomPodStatus
	statusIs := func(replicas, ready int32, cond metav1.ConditionStatus, message string) {
		t.Helper()
		err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			got, err := customPods.Get(ctx, "sample", metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			last = got.Status
			c := meta.FindStatusCondition(got.Status.Conditions, zhhnzwv2.ConditionReady)
			return got.Status.Replicas == replicas && got.Status.ReadyReplicas == ready &&
				c != nil && c.Status == cond && c.Message == message, nil
		})
		if err != nil {
			t.Fatalf("want replicas=%d readyReplicas=%d Ready=%s %q; last status seen: %+v", replicas, ready, cond, message, last)
		}
	}
	// The pods were admitted: the restricted profile allows the pod template.
	statusIs(2, 0, metav1.ConditionFalse, "0 of 2 pods ready")
	pods, err := kube.CoreV1().Pods(ns.Name).List(ctx, metav1.ListOptions{LabelSelector: LabelCustomPod + "=sample"})
	if err != nil || len(pods.Items) != 2 {
		t.Fatalf("want 2 pods, got %v (%v)", pods, err)
	}

	// setReady sets a pod's Ready condition, as the kubelet does.
	setReady := func(pod *corev1.Pod, status corev1.ConditionStatus) {
		t.Helper()
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status, LastTransitionTime: metav1.Now()}}
		updated, err := kube.CoreV1().Pods(ns.Name).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		*pod = *updated
	}
	setReady(&pods.Items[0], corev1.ConditionTrue)
	statusIs(2, 1, metav1.ConditionFalse, "1 of 2 pods ready")
	setReady(&pods.Items[1], corev1.ConditionTrue)
	statusIs(2, 2, metav1.ConditionTrue, "2 of 2 pods ready")
	setReady(&pods.Items[0], corev1.ConditionFalse)
	statusIs(2, 1, metav1.ConditionFalse, "1 of 2 pods ready")

	// Its writes carry its name in managedFields, not the binary's.
	cp, err := customPods.Get(ctx, "sample", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	expectManager(t, &pods.Items[1], "custompod-controller", "")
	expectManager(t, cp, "custompod-controller", "status")
}

// runController runs the controller on namespace ns as
// cmd/custompod-controller does (its pod informer holding only the pods with
// LabelCustomPod), until the test ends.
func runController(ctx context.Context, t *testing.T, kube kubernetes.Interface, custom clientset.Interface, ns string) *Controller {
	ctx, cancel := context.WithCancel(ctx)
	kubeInformers := kubeinformers.NewSharedInformerFactoryWithOptions(kube, 0, kubeinformers.WithNamespace(ns),
		kubeinformers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = LabelCustomPod }))
	customInformers := informers.NewSharedInformerFactoryWithOptions(custom, 0, informers.WithNamespace(ns))
	c := NewController(ctx, kube, custom, kube, kubeInformers.Core().V1().Pods(), customInformers.Zhhnzw().V2().CustomPods())
	kubeInformers.Start(ctx.Done())
	customInformers.Start(ctx.Done())
	done := make(chan error)
	go func() { done <- c.Run(ctx, 2) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		kubeInformers.Shutdown()
		customInformers.Shutdown()
	})
	return c
}

// expectManager fails the test unless obj's managedFields have an entry of
// manager for subresource ("" for the object itself).
func expectManager(t *testing.T, obj metav1.Object, manager, subresource string) {
	t.Helper()
	var seen []string
	for _, m := range obj.GetManagedFields() {
		if m.Manager == manager && m.Subresource == subresource {
			return
		}
		seen = append(seen, m.Manager+" "+m.Subresource)
	}
	t.Errorf("%s: no managedFields entry of %s for subresource %q; entries: %q", obj.GetName(), manager, subresource, seen)
}
