package custompod

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	kubeinformers "k8s.io/client-go/informers"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	zhhnzwv1 "example.com/k8s-demo/crd-demo/pkg/apis/zhhnzw/v1"
	zhhnzwv2 "example.com/k8s-demo/crd-demo/pkg/apis/zhhnzw/v2"
	"example.com/k8s-demo/crd-demo/pkg/client/clientset/versioned/fake"
	informers "example.com/k8s-demo/crd-demo/pkg/client/informers/externalversions"
)

// Like the Network controller's tests (and kubernetes/sample-controller's):
// fake clientsets, caches filled by hand, one syncHandler call, and the exact
// client actions compared with the expected ones.

var (
	alwaysReady = func() bool { return true }
	now         = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	podsGVR     = corev1.SchemeGroupVersion.WithResource("pods")
	cpGVR       = zhhnzwv2.SchemeGroupVersion.WithResource("custompods")
)

type fixture struct {
	t *testing.T

	client     *fake.Clientset
	kubeclient *k8sfake.Clientset
	recorder   *events.FakeRecorder

	customPods []*zhhnzwv2.CustomPod
	pods       []*corev1.Pod
	// newPods are in the API server but not yet in the informer's cache.
	newPods []*corev1.Pod

	// Actions expected on each client, and events as "Type Reason message".
	actions     []core.Action
	kubeactions []core.Action
	events      []string
	// createErr, if set, fails every pod create.
	createErr error
}

func newFixture(t *testing.T) *fixture {
	return &fixture{t: t}
}

func (f *fixture) newController(ctx context.Context) (*Controller, kubeinformers.SharedInformerFactory) {
	var objects, kubeobjects []runtime.Object
	for _, cp := range f.customPods {
		objects = append(objects, cp)
	}
	for _, pod := range append(f.pods, f.newPods...) {
		kubeobjects = append(kubeobjects, pod)
	}
	f.client = fake.NewClientset(objects...)
	f.kubeclient = k8sfake.NewClientset(kubeobjects...)
	f.kubeclient.PrependReactor("create", "pods", func(action core.Action) (bool, runtime.Object, error) {
		if f.createErr != nil {
			return true, nil, f.createErr
		}
		return false, nil, nil
	})
	f.recorder = events.NewFakeRecorder(20)

	i := informers.NewSharedInformerFactory(f.client, 0)
	k8sI := kubeinformers.NewSharedInformerFactory(f.kubeclient, 0)
	c := NewController(ctx, f.kubeclient, f.client, f.kubeclient, k8sI.Core().V1().Pods(), i.Zhhnzw().V2().CustomPods())
	c.customPodsSynced = alwaysReady
	c.podsSynced = alwaysReady
	c.recorder = f.recorder
	c.clock = testingclock.NewFakePassiveClock(now)

	for _, cp := range f.customPods {
		if err := i.Zhhnzw().V2().CustomPods().Informer().GetIndexer().Add(cp); err != nil {
			f.t.Fatal(err)
		}
	}
	for _, pod := range f.pods {
		if err := k8sI.Core().V1().Pods().Informer().GetIndexer().Add(pod); err != nil {
			f.t.Fatal(err)
		}
	}
	return c, k8sI
}

func (f *fixture) run(ctx context.Context, cp *zhhnzwv2.CustomPod, wantErr bool) {
	f.t.Helper()
	c, _ := f.newController(ctx)
	err := c.syncHandler(ctx, cache.MetaObjectToName(cp))
	if wantErr && err == nil {
		f.t.Error("expected error syncing CustomPod, got nil")
	} else if !wantErr && err != nil {
		f.t.Errorf("error syncing CustomPod: %v", err)
	}
	checkActions(f.t, "custompod client", f.actions, f.client.Actions())
	checkActions(f.t, "kube client", f.kubeactions, f.kubeclient.Actions())
	f.checkEvents()
}

// sortRuns sorts each run of consecutive elements for which key returns ok,
// by that key. The pods of one batch are created at once: their creates and
// events come in no fixed order.
func sortRuns[T any](s []T, key func(T) (string, bool)) {
	for i := 0; i < len(s); {
		if _, ok := key(s[i]); !ok {
			i++
			continue
		}
		j := i
		for j < len(s) {
			if _, ok := key(s[j]); !ok {
				break
			}
			j++
		}
		slices.SortStableFunc(s[i:j], func(a, b T) int {
			ka, _ := key(a)
			kb, _ := key(b)
			return strings.Compare(ka, kb)
		})
		i = j
	}
}

func podCreateName(a core.Action) (string, bool) {
	if c, ok := a.(core.CreateAction); ok && c.GetResource() == podsGVR {
		return c.GetObject().(*corev1.Pod).Name, true
	}
	return "", false
}

func (f *fixture) checkEvents() {
	f.t.Helper()
	close(f.recorder.Events)
	var got []string
	for e := range f.recorder.Events {
		got = append(got, e)
	}
	if diff := cmp.Diff(f.events, got); diff != "" {
		f.t.Errorf("events (-want +got):\n%s", diff)
	}
}

func checkActions(t *testing.T, client string, expected, actual []core.Action) {
	t.Helper()
	sortRuns(actual, podCreateName)
	for i, action := range actual {
		if i >= len(expected) {
			t.Errorf("%s: %d unexpected actions: %+v", client, len(actual)-len(expected), actual[i:])
			return
		}
		checkAction(t, expected[i], action)
	}
	if len(expected) > len(actual) {
		t.Errorf("%s: %d additional expected actions: %+v", client, len(expected)-len(actual), expected[len(actual):])
	}
}

// checkAction verifies that expected and actual are the same verb on the same
// resource, with the same object, name or label selector.
func checkAction(t *testing.T, expected, actual core.Action) {
	t.Helper()
	if !expected.Matches(actual.GetVerb(), actual.GetResource().Resource) || actual.GetSubresource() != expected.GetSubresource() {
		t.Errorf("expected %s %s/%s, got %s %s/%s", expected.GetVerb(), expected.GetResource().Resource, expected.GetSubresource(),
			actual.GetVerb(), actual.GetResource().Resource, actual.GetSubresource())
		return
	}
	switch e := expected.(type) {
	case core.CreateActionImpl:
		a := actual.(core.CreateActionImpl)
		if diff := cmp.Diff(e.GetObject(), a.GetObject()); diff != "" {
			t.Errorf("create %s: object differs (-want +got):\n%s", actual.GetResource().Resource, diff)
		}
		if diff := cmp.Diff(e.GetCreateOptions(), a.GetCreateOptions()); diff != "" {
			t.Errorf("create %s: options differ (-want +got):\n%s", actual.GetResource().Resource, diff)
		}
	case core.UpdateActionImpl:
		a := actual.(core.UpdateActionImpl)
		if diff := cmp.Diff(e.GetObject(), a.GetObject()); diff != "" {
			t.Errorf("update %s/%s: object differs (-want +got):\n%s", actual.GetResource().Resource, actual.GetSubresource(), diff)
		}
		if diff := cmp.Diff(e.GetUpdateOptions(), a.GetUpdateOptions()); diff != "" {
			t.Errorf("update %s/%s: options differ (-want +got):\n%s", actual.GetResource().Resource, actual.GetSubresource(), diff)
		}
	case core.DeleteActionImpl:
		if got := actual.(core.DeleteAction).GetName(); got != e.GetName() {
			t.Errorf("deleted %s %q, want %q", actual.GetResource().Resource, got, e.GetName())
		}
	case core.GetActionImpl:
		if got := actual.(core.GetAction).GetName(); got != e.GetName() {
			t.Errorf("read %s %q, want %q", actual.GetResource().Resource, got, e.GetName())
		}
	default:
		t.Errorf("unexpected action type %T", expected)
	}
}

func newCustomPod(name string, replicas *int32) *zhhnzwv2.CustomPod {
	return &zhhnzwv2.CustomPod{
		TypeMeta: metav1.TypeMeta{APIVersion: zhhnzwv2.SchemeGroupVersion.String(), Kind: "CustomPod"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: metav1.NamespaceDefault, UID: types.UID(name + "-uid"), Generation: 1,
		},
		// The template every v1 CustomPod has when read as v2.
		Spec: zhhnzwv2.CustomPodSpec{Replicas: replicas, Template: zhhnzwv1.DefaultTemplate()},
	}
}

// ownedPod returns a pod of cp, created age ago, as the API server stores it:
// running, and ready.
func ownedPod(cp *zhhnzwv2.CustomPod, name string, age time.Duration) *corev1.Pod {
	pod := newPod(cp, name)
	pod.CreationTimestamp = metav1.NewTime(now.Add(-age))
	pod.Status.Phase = corev1.PodRunning
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	return pod
}

// withStatus returns a copy of cp with the status the controller writes:
// podNames, readyReplicas of them ready, and the Ready condition.
func withStatus(cp *zhhnzwv2.CustomPod, readyReplicas int32, ready metav1.ConditionStatus, reason, message string, podNames ...string) *zhhnzwv2.CustomPod {
	cp = cp.DeepCopy()
	cp.Status.Replicas = int32(len(podNames))
	cp.Status.ReadyReplicas = readyReplicas
	cp.Status.PodNames = podNames
	cp.Status.Conditions = []metav1.Condition{{
		Type: zhhnzwv2.ConditionReady, Status: ready, Reason: reason, Message: message,
		ObservedGeneration: cp.Generation, LastTransitionTime: metav1.NewTime(now),
	}}
	return cp
}

// expectCreatePods expects the creates of cp's pods names, which succeed, and
// one event that names them.
func (f *fixture) expectCreatePods(cp *zhhnzwv2.CustomPod, names ...string) {
	for _, name := range names {
		f.expectCreateAttempt(cp, name)
	}
	f.events = append(f.events, "Normal SuccessfulCreate "+podsNote("Created", names))
}

// expectCreateAttempt expects the create of cp's pod name, with no event.
func (f *fixture) expectCreateAttempt(cp *zhhnzwv2.CustomPod, name string) {
	f.kubeactions = append(f.kubeactions, core.NewCreateActionWithOptions(podsGVR, cp.Namespace, newPod(cp, name), metav1.CreateOptions{FieldManager: "custompod-controller"}))
}

func (f *fixture) expectGetPod(cp *zhhnzwv2.CustomPod, name string) {
	f.kubeactions = append(f.kubeactions, core.NewGetAction(podsGVR, cp.Namespace, name))
}

// expectDeletePods expects the deletes of cp's pods names, in order, and one
// event that names them.
func (f *fixture) expectDeletePods(cp *zhhnzwv2.CustomPod, names ...string) {
	for _, name := range names {
		f.kubeactions = append(f.kubeactions, core.NewDeleteAction(podsGVR, cp.Namespace, name))
	}
	f.events = append(f.events, "Normal SuccessfulDelete "+podsNote("Deleted", names))
}

func (f *fixture) expectUpdateStatus(cp *zhhnzwv2.CustomPod) {
	f.actions = append(f.actions, core.NewUpdateSubresourceActionWithOptions(cpGVR, "status", cp.Namespace, cp, metav1.UpdateOptions{FieldManager: "custompod-controller"}))
}

func TestPodShape(t *testing.T) {
	cp := newCustomPod("test", ptr.To[int32](1))
	pod := newPod(cp, "test-0")
	want := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:      "test-0",
			Namespace: "default",
			Labels:    map[string]string{"app.kubernetes.io/managed-by": "crd-demo", "zhhnzw.mock.com/custompod": "test"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "zhhnzw.mock.com/v2", Kind: "CustomPod", Name: "test", UID: "test-uid",
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
	if diff := cmp.Diff(want, pod); diff != "" {
		t.Errorf("newPod (-want +got):\n%s", diff)
	}

	// Another template: its image and command, the rest unchanged. No
	// command: the image's own entrypoint.
	cp.Spec.Template = zhhnzwv2.CustomPodTemplate{Image: "nginx:1.27"}
	want.Spec.Containers[0].Image, want.Spec.Containers[0].Command = "nginx:1.27", nil
	if diff := cmp.Diff(want, newPod(cp, "test-0")); diff != "" {
		t.Errorf("newPod with image nginx:1.27 (-want +got):\n%s", diff)
	}
	cp.Spec.Template.Command = []string{"nginx", "-g", "daemon off;"}
	want.Spec.Containers[0].Command = []string{"nginx", "-g", "daemon off;"}
	if diff := cmp.Diff(want, newPod(cp, "test-0")); diff != "" {
		t.Errorf("newPod with a command (-want +got):\n%s", diff)
	}
}

// TestPodsNote: one event names a sync's pods, five at most.
func TestPodsNote(t *testing.T) {
	for _, tc := range []struct {
		names []string
		want  string
	}{
		{[]string{"a-0"}, "Created pod: a-0"},
		{[]string{"a-0", "a-1", "a-2"}, "Created 3 pods: a-0, a-1, a-2"},
		{[]string{"a-0", "a-1", "a-2", "a-3", "a-4", "a-5", "a-6"}, "Created 7 pods: a-0, a-1, a-2, a-3, a-4 and 2 more"},
	} {
		if got := podsNote("Created", tc.names); got != tc.want {
			t.Errorf("podsNote(%q) = %q, want %q", tc.names, got, tc.want)
		}
	}
}

func TestScaleUpCreatesPods(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t)
	cp := newCustomPod("test", ptr.To[int32](3))
	f.customPods = append(f.customPods, cp)

	f.expectCreatePods(cp, "test-0", "test-1", "test-2")
	// New pods are not ready yet: the kubelet has not started them.
	f.expectUpdateStatus(withStatus(cp, 0, metav1.ConditionFalse, ReasonPodsNotReady, "0 of 3 pods ready", "test-0", "test-1", "test-2"))
	f.run(ctx, cp, false)
}

func TestDefaultReplicasIsOne(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t)
	cp := newCustomPod("test", nil)
	f.customPods = append(f.customPods, cp)

	f.expectCreatePods(cp, "test-0")
	f.expectUpdateStatus(withStatus(cp, 0, metav1.ConditionFalse, ReasonPodsNotReady, "0 of 1 pods ready", "test-0"))
	f.run(ctx, cp, false)
}

// TestScaleDownDeletesHighestOrdinals: a pod whose name has no ordinal (made
// by another version of this controller, say) goes first, then the highest
// ordinals.
func TestScaleDownDeletesHighestOrdinals(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t)
	cp := withStatus(newCustomPod("test", ptr.To[int32](1)), 4, metav1.ConditionTrue, ReasonPodsReady, "4 of 4 pods ready", "test-0", "test-1", "test-2", "test-x7k2p")
	cp.Generation = 2
	f.customPods = append(f.customPods, cp)
	f.pods = append(f.pods,
		ownedPod(cp, "test-1", 3*time.Minute),
		ownedPod(cp, "test-0", 2*time.Minute),
		ownedPod(cp, "test-x7k2p", 4*time.Minute),
		ownedPod(cp, "test-2", 1*time.Minute),
	)

	f.expectDeletePods(cp, "test-x7k2p", "test-2", "test-1")
	f.expectUpdateStatus(withStatus(cp, 1, metav1.ConditionTrue, ReasonPodsReady, "1 of 1 pods ready", "test-0"))
	f.run(ctx, cp, false)
}

func TestScaleToZero(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t)
	cp := newCustomPod("test", ptr.To[int32](0))
	f.customPods = append(f.customPods, cp)
	f.pods = append(f.pods, ownedPod(cp, "test-0", time.Minute))

	f.expectDeletePods(cp, "test-0")
	f.expectUpdateStatus(withStatus(cp, 0, metav1.ConditionTrue, ReasonPodsReady, "0 of 0 pods ready"))
	f.run(ctx, cp, false)
}

// TestPodsThatDoNotCount: a terminating pod does not count and keeps its name
// until it is gone; a finished pod is deleted, to free its name for a
// replacement; pods that only carry the label are left alone.
func TestPodsThatDoNotCount(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t)
	cp := newCustomPod("test", ptr.To[int32](4))
	f.customPods = append(f.customPods, cp)

	terminating := ownedPod(cp, "test-1", time.Minute)
	terminating.DeletionTimestamp = &metav1.Time{Time: now}
	failed := ownedPod(cp, "test-2", time.Minute)
	failed.Status.Phase = corev1.PodFailed
	// Labelled like ours, but no owner reference (or someone else's).
	orphan := ownedPod(cp, "test-orphan", time.Minute)
	orphan.OwnerReferences = nil
	foreign := ownedPod(cp, "test-foreign", time.Minute)
	foreign.OwnerReferences[0].UID = "another-uid"
	f.pods = append(f.pods, ownedPod(cp, "test-0", time.Minute), terminating, failed, orphan, foreign)

	f.expectCreatePods(cp, "test-3")
	f.expectDeletePods(cp, "test-2")
	f.expectUpdateStatus(withStatus(cp, 1, metav1.ConditionFalse, ReasonPodsNotReady, "1 of 4 pods ready", "test-0", "test-3"))
	f.run(ctx, cp, false)
}

// TestCountsPodsTheCacheHasNotSeenYet: pods created by the previous sync may
// not be in the informer's cache yet. Their creates are refused, the API
// server says the pods are this CustomPod's, and they are counted: no event,
// no error, and the status is left as it is.
func TestCountsPodsTheCacheHasNotSeenYet(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t)
	cp := withStatus(newCustomPod("test", ptr.To[int32](2)), 2, metav1.ConditionTrue, ReasonPodsReady, "2 of 2 pods ready", "test-0", "test-1")
	f.customPods = append(f.customPods, cp)
	f.newPods = append(f.newPods, ownedPod(cp, "test-0", time.Second), ownedPod(cp, "test-1", time.Second))

	f.expectCreateAttempt(cp, "test-0")
	f.expectGetPod(cp, "test-0")
	f.expectCreateAttempt(cp, "test-1")
	f.expectGetPod(cp, "test-1")
	f.run(ctx, cp, false)
}

// TestPodNameTakenByAnotherPod: a pod this CustomPod does not control holds
// the name of one it needs. The CustomPod says so, and the sync is retried.
func TestPodNameTakenByAnotherPod(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t)
	cp := newCustomPod("test", ptr.To[int32](1))
	f.customPods = append(f.customPods, cp)
	f.newPods = append(f.newPods, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "test-0", Namespace: cp.Namespace}})

	const msg = "creating pod test-0: the name is taken by a pod this CustomPod does not control"
	f.expectCreateAttempt(cp, "test-0")
	f.expectGetPod(cp, "test-0")
	f.events = append(f.events, "Warning FailedCreate Error creating pod: "+msg)
	f.expectUpdateStatus(withStatus(cp, 0, metav1.ConditionFalse, ReasonScaleFailed, msg))
	f.run(ctx, cp, true)
}

func TestStatusIsWrittenOnlyWhenItChanges(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t)
	cp := withStatus(newCustomPod("test", ptr.To[int32](2)), 2, metav1.ConditionTrue, ReasonPodsReady, "2 of 2 pods ready", "test-0", "test-1")
	f.customPods = append(f.customPods, cp)
	f.pods = append(f.pods, ownedPod(cp, "test-0", time.Minute), ownedPod(cp, "test-1", time.Minute))

	// No actions at all: the pods are read from the cache.
	f.run(ctx, cp, false)
}

// TestReadyReplicasCountsReadyPods: status.replicas counts the pods that
// exist, readyReplicas those whose Ready condition is True, and the CustomPod
// is Ready only when every pod it asks for is.
func TestReadyReplicasCountsReadyPods(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t)
	cp := withStatus(newCustomPod("test", ptr.To[int32](3)), 3, metav1.ConditionTrue, ReasonPodsReady, "3 of 3 pods ready", "test-0", "test-1", "test-2")
	f.customPods = append(f.customPods, cp)
	notReady := ownedPod(cp, "test-1", time.Minute) // a readiness probe that fails
	notReady.Status.Conditions[0].Status = corev1.ConditionFalse
	pending := ownedPod(cp, "test-2", time.Minute) // not started yet
	pending.Status = corev1.PodStatus{Phase: corev1.PodPending}
	f.pods = append(f.pods, ownedPod(cp, "test-0", time.Minute), notReady, pending)

	f.expectUpdateStatus(withStatus(cp, 1, metav1.ConditionFalse, ReasonPodsNotReady, "1 of 3 pods ready", "test-0", "test-1", "test-2"))
	f.run(ctx, cp, false)
}

// TestScaleDownOfAPodAlreadyGone: a pod deleted since the cache last saw it
// is gone as wanted, with no SuccessfulDelete event: this sync did not delete
// it.
func TestScaleDownOfAPodAlreadyGone(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t)
	cp := withStatus(newCustomPod("test", ptr.To[int32](1)), 3, metav1.ConditionTrue, ReasonPodsReady, "3 of 3 pods ready", "test-0", "test-1", "test-2")
	cp.Generation = 2
	f.customPods = append(f.customPods, cp)
	f.pods = append(f.pods,
		ownedPod(cp, "test-0", 3*time.Minute),
		ownedPod(cp, "test-1", 2*time.Minute),
		ownedPod(cp, "test-2", 1*time.Minute),
	)
	c, _ := f.newController(ctx)
	f.kubeclient.PrependReactor("delete", "pods", func(action core.Action) (bool, runtime.Object, error) {
		if name := action.(core.DeleteAction).GetName(); name == "test-2" {
			return true, nil, apierrors.NewNotFound(podsGVR.GroupResource(), name)
		}
		return false, nil, nil
	})

	f.kubeactions = append(f.kubeactions, core.NewDeleteAction(podsGVR, cp.Namespace, "test-2")) // no event
	f.expectDeletePods(cp, "test-1")
	f.expectUpdateStatus(withStatus(cp, 1, metav1.ConditionTrue, ReasonPodsReady, "1 of 1 pods ready", "test-0"))
	if err := c.syncHandler(ctx, cache.MetaObjectToName(cp)); err != nil {
		t.Errorf("error syncing CustomPod: %v", err)
	}
	checkActions(t, "custompod client", f.actions, f.client.Actions())
	checkActions(t, "kube client", f.kubeactions, f.kubeclient.Actions())
	f.checkEvents()
}

func TestCreateErrorSetsReadyFalse(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t)
	f.createErr = errors.New("quota exceeded")
	cp := newCustomPod("test", ptr.To[int32](2))
	f.customPods = append(f.customPods, cp)
	f.pods = append(f.pods, ownedPod(cp, "test-0", time.Minute))

	f.expectCreateAttempt(cp, "test-1")
	f.events = append(f.events, "Warning FailedCreate Error creating pod: quota exceeded")
	f.expectUpdateStatus(withStatus(cp, 1, metav1.ConditionFalse, ReasonScaleFailed, "creating pod: quota exceeded", "test-0"))
	f.run(ctx, cp, true)
}

// TestFailedCreateEndsTheScaleUp: the first batch is one pod; when it fails,
// the other four are not tried.
func TestFailedCreateEndsTheScaleUp(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t)
	f.createErr = errors.New("quota exceeded")
	cp := newCustomPod("test", ptr.To[int32](5))
	f.customPods = append(f.customPods, cp)

	f.expectCreateAttempt(cp, "test-0")
	f.events = append(f.events, "Warning FailedCreate Error creating pod: quota exceeded")
	f.expectUpdateStatus(withStatus(cp, 0, metav1.ConditionFalse, ReasonScaleFailed, "creating pod: quota exceeded"))
	f.run(ctx, cp, true)
}

func TestDeletedCustomPodIsLeftToTheGarbageCollector(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t)
	// Not in the cache: no actions at all.
	f.run(ctx, newCustomPod("test", ptr.To[int32](1)), false)

	f = newFixture(t)
	cp := newCustomPod("test", ptr.To[int32](1))
	cp.DeletionTimestamp = &metav1.Time{Time: now}
	f.customPods = append(f.customPods, cp)
	f.run(ctx, cp, false)
}

// TestCustomPodUpdates checks which updates of a CustomPod queue it: a spec
// change (a new generation) does; its status, which syncHandler writes, does
// not.
func TestCustomPodUpdates(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	first, second := newCustomPod("first", ptr.To[int32](1)), newCustomPod("second", ptr.To[int32](1))
	first.ResourceVersion, second.ResourceVersion = "1", "1" // the fake clientset keeps what it is given
	client, kubeclient := fake.NewClientset(first, second), k8sfake.NewClientset()
	i := informers.NewSharedInformerFactory(client, 0)
	k8sI := kubeinformers.NewSharedInformerFactory(kubeclient, 0)
	c := NewController(ctx, kubeclient, client, kubeclient, k8sI.Core().V1().Pods(), i.Zhhnzw().V2().CustomPods())
	i.Start(ctx.Done())
	k8sI.Start(ctx.Done())
	i.WaitForCacheSync(ctx.Done())
	k8sI.WaitForCacheSync(ctx.Done())
	// served waits for n keys, takes them from the queue and returns them.
	served := func(n int) []string {
		t.Helper()
		if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
			return c.workqueue.Len() >= n, nil
		}); err != nil {
			t.Fatalf("%d keys queued, want %d", c.workqueue.Len(), n)
		}
		var names []string
		for c.workqueue.Len() > 0 {
			key, _ := c.workqueue.Get()
			names = append(names, key.Name)
			c.workqueue.Done(key)
		}
		slices.Sort(names)
		return names
	}
	if got := served(2); !slices.Equal(got, []string{"first", "second"}) {
		t.Fatalf("the informer's list queued %v, want both CustomPods", got)
	}

	status := first.DeepCopy()
	status.Status.Replicas, status.ResourceVersion = 1, "2"
	if _, err := client.ZhhnzwV2().CustomPods(status.Namespace).UpdateStatus(ctx, status, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The informer hands its events to the controller in order: once the
	// spec change below is queued, the status change above has been seen.
	spec := second.DeepCopy()
	spec.Spec.Replicas, spec.Generation, spec.ResourceVersion = ptr.To[int32](2), second.Generation+1, "2"
	if _, err := client.ZhhnzwV2().CustomPods(spec.Namespace).Update(ctx, spec, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := served(1); !slices.Equal(got, []string{"second"}) {
		t.Errorf("queued %v, want [second]: a status change queues nothing, a spec change queues its CustomPod", got)
	}
}

// TestHandleObject checks that pod events queue the owning CustomPod, and
// only that.
func TestHandleObject(t *testing.T) {
	logger, ctx := ktesting.NewTestContext(t)
	cp := newCustomPod("test", ptr.To[int32](1))

	renamed := ownedPod(cp, "p", 0)
	renamed.OwnerReferences[0].UID = "old-uid" // the owner was deleted and re-created
	otherKind := ownedPod(cp, "p", 0)
	otherKind.OwnerReferences[0].Kind = "ReplicaSet"
	otherKind.OwnerReferences[0].APIVersion = "apps/v1"
	missingOwner := ownedPod(newCustomPod("gone", ptr.To[int32](1)), "p", 0)
	notController := ownedPod(cp, "p", 0)
	notController.OwnerReferences[0].Controller = nil

	for _, tc := range []struct {
		name string
		obj  interface{}
		want bool
	}{
		{"owned pod", ownedPod(cp, "p", 0), true},
		{"tombstone of owned pod", cache.DeletedFinalStateUnknown{Key: "default/p", Obj: ownedPod(cp, "p", 0)}, true},
		{"pod without owner", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}}, false},
		{"owner re-created", renamed, false},
		{"owned by another kind", otherKind, false},
		{"owner not in cache", missingOwner, false},
		{"owner is not the controller", notController, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.customPods = append(f.customPods, cp)
			c, _ := f.newController(ctx)
			c.batchPeriod = 0 // TestPodEventsBatched checks the period
			c.handleObject(logger, "Update", tc.obj)
			if got := c.workqueue.Len() == 1; got != tc.want {
				t.Fatalf("queued = %v, want %v", got, tc.want)
			}
			if tc.want {
				if key, _ := c.workqueue.Get(); key != cache.MetaObjectToName(cp) {
					t.Errorf("queued %v, want %v", key, cache.MetaObjectToName(cp))
				}
			}
		})
	}
}

// TestPodEventsGoFirst checks the queue's order: a CustomPod whose pods
// changed is served once, after the batch period, and before CustomPods queued
// earlier by their own events, which wait for their first sync.
func TestPodEventsGoFirst(t *testing.T) {
	logger, ctx := ktesting.NewTestContext(t)
	started := newCustomPod("started", ptr.To[int32](2))
	f := newFixture(t)
	f.customPods = append(f.customPods, started)
	c, _ := f.newController(ctx)
	c.batchPeriod = 100 * time.Millisecond
	for _, name := range []string{"new-1", "new-2"} {
		c.enqueueCustomPod(logger, newCustomPod(name, ptr.To[int32](1)), 0, 0)
	}
	c.handleObject(logger, "Update", ownedPod(started, "started-0", 0))
	c.handleObject(logger, "Update", ownedPod(started, "started-1", 1))
	if got := c.workqueue.Len(); got != 2 {
		t.Fatalf("%d keys ready at once, want 2: the pods' events wait for the batch period", got)
	}
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		return c.workqueue.Len() == 3, nil
	}); err != nil {
		t.Fatalf("%d keys ready after the batch period, want 3 (the two new CustomPods, and one for both pods' events)", c.workqueue.Len())
	}

	var got []string
	for c.workqueue.Len() > 0 {
		key, _ := c.workqueue.Get()
		got = append(got, key.Name)
		c.workqueue.Done(key)
	}
	if want := []string{"started", "new-1", "new-2"}; !slices.Equal(got, want) {
		t.Errorf("served %v, want %v", got, want)
	}
}
