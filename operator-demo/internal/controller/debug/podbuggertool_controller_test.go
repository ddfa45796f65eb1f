/*
Copyright 2026.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package debug

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	debugv1alpha1 "example.com/k8s-demo/operator-demo/api/debug/v1alpha1"
)

const debugLabel = "debug.mock.com/debug"

var _ = Describe("PodBuggerTool Controller", func() {
	SetDefaultEventuallyTimeout(10 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)

	var namespace string
	var tool types.NamespacedName

	BeforeEach(func() {
		// envtest has no namespace controller: a fresh namespace per test.
		namespace = newNamespace(ctx)
		tool = types.NamespacedName{Namespace: namespace, Name: "bugger"}
	})

	It("should refuse to be set up without the pods' metadata cache and the API reader", func() {
		r := &PodBuggerToolReconciler{Client: k8sClient, Scheme: k8sClient.Scheme(), APIReader: k8sClient}
		Expect(r.SetupWithManager(nil)).To(MatchError(ContainSubstring("needs PodMetadata")))
	})

	It("should add one debugger to a running pod that matches, and leave the others alone", func() {
		matching := runningPod(namespace, "web", map[string]string{debugLabel: "true"}, "app", "sidecar")
		other := runningPod(namespace, "db", map[string]string{debugLabel: "false"}, "app")
		pending := newPod(namespace, "pending", map[string]string{debugLabel: "true"}, "app")
		createTool(tool, "busybox:1.36", "")

		Eventually(func(g Gomega) {
			g.Expect(getPod(g, matching).Spec.EphemeralContainers).To(HaveLen(1))
		}).Should(Succeed())
		ec := getPod(Default, matching).Spec.EphemeralContainers[0]
		Expect(ec.Name).To(Equal("debugger-bugger"))
		Expect(ec.Image).To(Equal("busybox:1.36"))
		Expect(ec.TargetContainerName).To(Equal("app"), "by default, the pod's first container")
		Expect(ec.Stdin && ec.TTY).To(BeTrue(), "as kubectl debug -it: a shell that waits on its terminal")
		Expect(getPod(Default, matching).ManagedFields).To(ContainElement(And(
			HaveField("Manager", ControllerName), HaveField("Subresource", "ephemeralcontainers"))),
			"the debugger is written under the controller's field manager")

		expectStatus(tool, 1, metav1.ConditionTrue, ReasonDebugging)
		Consistently(func(g Gomega) {
			g.Expect(getPod(g, other).Spec.EphemeralContainers).To(BeEmpty(), "a pod that does not match")
			g.Expect(getPod(g, pending).Spec.EphemeralContainers).To(BeEmpty(), "a pod that is not running")
		}, time.Second).Should(Succeed())

		By("events on the pod and on the PodBuggerTool")
		Eventually(func(g Gomega) {
			g.Expect(eventNotes(g, namespace, "Pod", matching.Name)).To(ContainElement(
				"Added ephemeral container debugger-bugger (busybox:1.36), sharing container app's processes, for PodBuggerTool bugger"))
			g.Expect(eventNotes(g, namespace, "PodBuggerTool", tool.Name)).To(ContainElement("Added debugger debugger-bugger to pod web"))
		}).Should(Succeed())

		By("the pending pod starts running: it gets its debugger then")
		setRunning(pending)
		Eventually(func(g Gomega) {
			g.Expect(getPod(g, pending).Spec.EphemeralContainers).To(HaveLen(1))
		}).Should(Succeed())
		expectStatus(tool, 2, metav1.ConditionTrue, ReasonDebugging)
	})

	It("should give the debugger kubectl debug --profile=restricted's securityContext, which PodSecurity restricted admits", func() {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			GenerateName: "podbuggertool-restricted-",
			Labels:       map[string]string{"pod-security.kubernetes.io/enforce": "restricted"},
		}}
		Expect(k8sClient.Create(ctx, ns)).To(Succeed())
		tool = types.NamespacedName{Namespace: ns.Name, Name: "bugger"}
		// A pod the namespace admits: restricted, and a user that is not
		// root, which the debugger then runs as too.
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "restricted", Namespace: ns.Name, Labels: map[string]string{debugLabel: "true"}},
			Spec: corev1.PodSpec{
				SecurityContext: &corev1.PodSecurityContext{
					RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65534),
					SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
				},
				Containers: []corev1.Container{{Name: "app", Image: "busybox", Command: []string{"sleep", "3600"},
					SecurityContext: &corev1.SecurityContext{
						AllowPrivilegeEscalation: ptr.To(false),
						Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
					}}},
			},
		}
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		setRunning(pod)
		createTool(tool, "busybox", "")

		expectStatus(tool, 1, metav1.ConditionTrue, ReasonDebugging)
		ecs := getPod(Default, pod).Spec.EphemeralContainers
		Expect(ecs).To(HaveLen(1))
		Expect(ecs[0].SecurityContext).To(Equal(&corev1.SecurityContext{
			RunAsNonRoot:             ptr.To(true),
			AllowPrivilegeEscalation: ptr.To(false),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		}))
	})

	It("should debug a pod that starts matching, and leave its debugger when it stops", func() {
		pod := runningPod(namespace, "later", map[string]string{"app": "web"}, "app")
		createTool(tool, "busybox", "")
		expectStatus(tool, 0, metav1.ConditionTrue, ReasonDebugging)

		By("labelling the pod")
		patchLabels(pod, map[string]any{debugLabel: "true"})
		Eventually(func(g Gomega) {
			g.Expect(getPod(g, pod).Spec.EphemeralContainers).To(HaveLen(1))
		}).Should(Succeed())
		expectStatus(tool, 1, metav1.ConditionTrue, ReasonDebugging)

		By("taking the label off: ephemeral containers cannot be removed, so it stays")
		patchLabels(pod, map[string]any{debugLabel: nil})
		expectStatus(tool, 0, metav1.ConditionTrue, ReasonDebugging)
		Expect(getPod(Default, pod).Spec.EphemeralContainers).To(HaveLen(1))

		By("labelling it again: it already has this PodBuggerTool's debugger")
		patchLabels(pod, map[string]any{debugLabel: "true"})
		expectStatus(tool, 1, metav1.ConditionTrue, ReasonDebugging)
		Expect(getPod(Default, pod).Spec.EphemeralContainers).To(HaveLen(1))
	})

	It("should share the processes of spec.targetContainer, and say so when a pod has none", func() {
		withSidecar := runningPod(namespace, "with-sidecar", map[string]string{debugLabel: "true"}, "app", "sidecar")
		without := runningPod(namespace, "without", map[string]string{debugLabel: "true"}, "app")
		createTool(tool, "busybox", "sidecar")

		Eventually(func(g Gomega) {
			ecs := getPod(g, withSidecar).Spec.EphemeralContainers
			g.Expect(ecs).To(HaveLen(1))
			g.Expect(ecs[0].TargetContainerName).To(Equal("sidecar"))
		}).Should(Succeed())
		expectStatus(tool, 1, metav1.ConditionFalse, ReasonNoTargetContainer)
		Expect(meta.FindStatusCondition(getTool(tool).Status.Conditions, ConditionReady).Message).To(
			Equal(`no container "sidecar" in pods without`))
		Expect(getPod(Default, without).Spec.EphemeralContainers).To(BeEmpty())
		Eventually(func(g Gomega) {
			g.Expect(eventNotes(g, namespace, "Pod", without.Name)).To(ContainElement(`No container "sidecar" to debug, for PodBuggerTool bugger`))
		}).Should(Succeed())
	})

	It("should never add a second debugger: not after a restart, not from a stale cache", func() {
		pod := runningPod(namespace, "once", map[string]string{debugLabel: "true"}, "app")
		// The pod as a cache that lags behind would still hold it.
		stale := getPod(Default, pod)
		createTool(tool, "busybox", "")
		Eventually(func(g Gomega) {
			g.Expect(getPod(g, pod).Spec.EphemeralContainers).To(HaveLen(1))
		}).Should(Succeed())

		By("a controller started afresh reconciles the PodBuggerTool again")
		restarted := &PodBuggerToolReconciler{Client: k8sClient, Scheme: k8sClient.Scheme(), APIReader: k8sClient}
		for range 3 {
			_, err := restarted.Reconcile(ctx, reconcile.Request{NamespacedName: tool})
			Expect(err).NotTo(HaveOccurred())
		}
		Expect(getPod(Default, pod).Spec.EphemeralContainers).To(HaveLen(1))

		By("adding the debugger to the pod as a stale cache saw it, before it had one")
		Expect(stale.Spec.EphemeralContainers).To(BeEmpty())
		err := restarted.addDebugger(ctx, getTool(tool), stale, DebuggerName(tool.Name), "app")
		Expect(apierrors.IsConflict(err)).To(BeTrue(), "the update carries the stale resourceVersion; got %v", err)
		Expect(getPod(Default, pod).Spec.EphemeralContainers).To(HaveLen(1))
	})

	It("should keep of a pod's metadata its labels, and drop its annotations and managedFields", func() {
		pod := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "ns", Labels: map[string]string{debugLabel: "true"},
			Annotations:   map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{}"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
		}}
		out, err := TransformPodMetadata(pod)
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(BeIdenticalTo(pod))
		Expect(pod.Labels).To(Equal(map[string]string{debugLabel: "true"}))
		Expect(pod.Annotations).To(BeNil())
		Expect(pod.ManagedFields).To(BeNil())
		_, err = TransformPodMetadata(pod)
		Expect(err).NotTo(HaveOccurred(), "an object already transformed")
	})

	It("should name debuggers after their PodBuggerTool, as container names may be", func() {
		Expect(DebuggerName("bugger")).To(Equal("debugger-bugger"))
		for _, name := range []string{"bugger", "a.b", "a-b", strings.Repeat("x", 60), strings.Repeat("y.", 120) + "z"} {
			got := DebuggerName(name)
			Expect(validation.IsDNS1123Label(got)).To(BeEmpty(), "DebuggerName(%q) = %q", name, got)
			Expect(DebuggerName(name)).To(Equal(got), "the same name every time")
		}
		Expect(DebuggerName("a.b")).NotTo(Equal(DebuggerName("a-b")), "two PodBuggerTools of one namespace")
		Expect(DebuggerName(strings.Repeat("x", 60) + "1")).NotTo(Equal(DebuggerName(strings.Repeat("x", 60) + "2")))
	})
})

func newNamespace(ctx context.Context) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "podbuggertool-test-"}}
	Expect(k8sClient.Create(ctx, ns)).To(Succeed())
	return ns.Name
}

func createTool(key types.NamespacedName, image, target string) {
	ExpectWithOffset(1, k8sClient.Create(ctx, &debugv1alpha1.PodBuggerTool{
		ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace},
		Spec: debugv1alpha1.PodBuggerToolSpec{
			Selector:        metav1.LabelSelector{MatchLabels: map[string]string{debugLabel: "true"}},
			Image:           image,
			TargetContainer: target,
		},
	})).To(Succeed())
}

func getTool(key types.NamespacedName) *debugv1alpha1.PodBuggerTool {
	var tool debugv1alpha1.PodBuggerTool
	ExpectWithOffset(1, k8sClient.Get(ctx, key, &tool)).To(Succeed())
	return &tool
}

// newPod creates a pod with the given containers; envtest has no kubelet,
// so it stays Pending until setRunning.
func newPod(namespace, name string, labels map[string]string, containers ...string) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels}}
	for _, c := range containers {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: c, Image: "busybox", Command: []string{"sleep", "3600"}})
	}
	ExpectWithOffset(1, k8sClient.Create(ctx, pod)).To(Succeed())
	return pod
}

func runningPod(namespace, name string, labels map[string]string, containers ...string) *corev1.Pod {
	pod := newPod(namespace, name, labels, containers...)
	setRunning(pod)
	return pod
}

// setRunning does the kubelet's part: the pod's phase becomes Running.
func setRunning(pod *corev1.Pod) {
	p := getPod(Default, pod)
	p.Status.Phase = corev1.PodRunning
	ExpectWithOffset(1, k8sClient.Status().Update(ctx, p)).To(Succeed())
}

func getPod(g Gomega, pod *corev1.Pod) *corev1.Pod {
	var p corev1.Pod
	g.ExpectWithOffset(1, k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), &p)).To(Succeed())
	return &p
}

// patchLabels sets labels, or removes those set to nil.
func patchLabels(pod *corev1.Pod, labels map[string]any) {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": labels}})
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	ExpectWithOffset(1, k8sClient.Patch(ctx, getPod(Default, pod), client.RawPatch(types.MergePatchType, patch))).To(Succeed())
}

func expectStatus(key types.NamespacedName, debugged int32, ready metav1.ConditionStatus, reason string) {
	EventuallyWithOffset(1, func(g Gomega) {
		tool := getTool(key)
		g.Expect(tool.Status.ObservedGeneration).To(Equal(tool.Generation))
		g.Expect(tool.Status.DebuggedPods).To(Equal(debugged))
		cond := meta.FindStatusCondition(tool.Status.Conditions, ConditionReady)
		g.Expect(cond).NotTo(BeNil())
		g.Expect(cond.Status).To(Equal(ready))
		g.Expect(cond.Reason).To(Equal(reason))
	}).Should(Succeed())
}

// eventNotes lists the notes of the events about one object.
func eventNotes(g Gomega, namespace, kind, name string) []string {
	var list eventsv1.EventList
	g.ExpectWithOffset(1, k8sClient.List(ctx, &list, client.InNamespace(namespace))).To(Succeed())
	var notes []string
	for _, e := range list.Items {
		if e.Regarding.Kind == kind && e.Regarding.Name == name {
			notes = append(notes, e.Note)
		}
	}
	return notes
}
