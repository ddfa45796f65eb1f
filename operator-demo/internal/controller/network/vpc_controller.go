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

package network

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	networkv1 "example.com/k8s-demo/operator-demo/api/network/v1"
)

const (
	// VpcLabel marks the gateway pods of a Vpc; its value is the Vpc's name.
	VpcLabel = "network.mock.com/vpc"
	// ManagedByLabel is the recommended label naming the controller that
	// manages an object: cmd/main.go caches only the pods that carry it.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	// SubnetLabel holds a pod's subnet in a form a label value allows
	// ("/" and ":" replaced: 10.0.0.0_18, fd00-0-0-4000--_50), for selectors.
	SubnetLabel = "network.mock.com/subnet"
	// SubnetAnnotation holds the pod's subnet exactly; the controller reads
	// this one.
	SubnetAnnotation = "network.mock.com/subnet-cidr"
	// SubnetEnv gives the subnet to the gateway container.
	SubnetEnv = "SUBNET_CIDR"

	// ConditionReady is the condition type in status.conditions.
	ConditionReady = "Ready"

	// ControllerName names this controller wherever it leaves its mark: the
	// value of ManagedByLabel on its pods, the field manager of its writes
	// (`kubectl get -o yaml --show-managed-fields`; without one the API
	// server takes the binary's name from the user agent), and, in
	// cmd/main.go, the source of its events.
	ControllerName = "vpc-controller"

	// PodImage is the gateway pods' image: a tag, not :latest, which the
	// kubelet pulls on every start; IfNotPresent then runs the copy a node has.
	PodImage = "busybox:1.36"

	// Event reasons: the CustomPod ones, plus InvalidSubnetting.
	ReasonSuccessfulCreate = "SuccessfulCreate"
	ReasonSuccessfulDelete = "SuccessfulDelete"
	ReasonFailedCreate     = "FailedCreate"
	ReasonFailedDelete     = "FailedDelete"

	// Ready condition reasons.
	// ReasonProvisioned: every subnet has its gateway pod, and the pods are
	// ready (Ready=True).
	ReasonProvisioned = "Provisioned"
	// ReasonPodsNotReady: every subnet has its gateway pod, but not every pod
	// is ready yet (Ready=False).
	ReasonPodsNotReady = "PodsNotReady"
	// ReasonProvisionFailed: creating or deleting a pod failed (Ready=False).
	ReasonProvisionFailed = "ProvisionFailed"
	// ReasonInvalidSubnetting: cidrblock cannot be carved into subnetnum equal
	// subnets (Ready=False, also a Warning event). No pod is created or deleted.
	ReasonInvalidSubnetting = "InvalidSubnetting"
)

// VpcReconciler reconciles a Vpc object: it carves spec.cidrblock into
// spec.subnetnum equal subnets and keeps one gateway pod per subnet.
type VpcReconciler struct {
	client.Client
	Scheme *runtime.Scheme

	// APIReader reads straight from the API server: pods are listed through it
	// because the cache lags behind our own creates and deletes.
	// Required: SetupWithManager refuses to start without it.
	APIReader client.Reader

	// Recorder emits an event for every pod created or deleted, and for a spec
	// that cannot be carved. Optional.
	Recorder events.EventRecorder
}

// The scaffold's markers grant every verb on vpcs and get;update;patch on
// their status; this controller reads its Vpcs (through the cache) and
// patches their status, so it is granted that and no more.
// +kubebuilder:rbac:groups=network.mock.com,resources=vpcs,verbs=get;list;watch
// +kubebuilder:rbac:groups=network.mock.com,resources=vpcs/status,verbs=patch
// +kubebuilder:rbac:groups=network.mock.com,resources=vpcs/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile carves the Vpc's block into subnets, deletes the gateway pods
// whose subnet is no longer one of them (after a change of cidrblock or
// subnetnum) and creates a gateway pod for every subnet that has none.
//
// vpcs/finalizers is granted because SetControllerReference sets
// blockOwnerDeletion, which the OwnerReferencesPermissionEnforcement admission
// plugin only allows to whoever may update the owner's finalizers.
func (r *VpcReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var vpc networkv1.Vpc
	if err := r.Get(ctx, req.NamespacedName, &vpc); err != nil {
		// NotFound: the garbage collector removes the pods through their
		// owner references. There is nothing to retry.
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !vpc.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}

	pods, err := r.activePods(ctx, &vpc)
	if err != nil {
		return ctrl.Result{}, err
	}

	subnets, err := carve(vpc.Spec)
	if err != nil {
		// A spec problem: retrying cannot help, the next spec change requeues.
		// The existing gateway pods are left alone (a typo must not tear down
		// a working network) and stay in the status. One event per spec
		// generation: the reconciles that pod or status changes trigger
		// would otherwise repeat it.
		if old := meta.FindStatusCondition(vpc.Status.Conditions, ConditionReady); old == nil ||
			old.Reason != ReasonInvalidSubnetting || old.ObservedGeneration != vpc.Generation {
			r.event(&vpc, nil, corev1.EventTypeWarning, ReasonInvalidSubnetting, "Carve", "%v", err)
		}
		return ctrl.Result{}, r.updateStatus(ctx, &vpc, pods, metav1.Condition{
			Status: metav1.ConditionFalse, Reason: ReasonInvalidSubnetting, Message: err.Error(),
		})
	}

	pods, syncErr := r.syncPods(ctx, &vpc, subnets, pods)
	readyPods := 0
	for i := range pods {
		if isPodReady(&pods[i]) {
			readyPods++
		}
	}
	ready := metav1.Condition{
		Status:  metav1.ConditionTrue,
		Reason:  ReasonProvisioned,
		Message: fmt.Sprintf("%d of %d subnets have a ready gateway pod", readyPods, len(subnets)),
	}
	switch {
	case syncErr != nil:
		ready.Status, ready.Reason, ready.Message = metav1.ConditionFalse, ReasonProvisionFailed, syncErr.Error()
	case readyPods != len(subnets):
		ready.Status, ready.Reason = metav1.ConditionFalse, ReasonPodsNotReady
	}
	if err := r.updateStatus(ctx, &vpc, pods, ready); err != nil {
		return ctrl.Result{}, err
	}
	// A failed create or delete is retried with backoff.
	return ctrl.Result{}, syncErr
}

// carve parses the spec's block and splits it. The API server checks all of
// this for every Vpc written since the CRD has its rules (vpc_types.go), but a
// Vpc stored before them keeps its spec: the controller checks again.
func carve(spec networkv1.VpcSpec) ([]netip.Prefix, error) {
	prefix, err := netip.ParsePrefix(spec.CidrBlock)
	if err != nil {
		return nil, fmt.Errorf("cidrblock %q: %w", spec.CidrBlock, err)
	}
	subnets, err := SplitPrefix(prefix, int(spec.SubnetNum))
	if err != nil {
		return nil, fmt.Errorf("cannot carve cidrblock %s into subnetnum %d equal subnets: %w",
			spec.CidrBlock, spec.SubnetNum, err)
	}
	return subnets, nil
}

// activePods returns the gateway pods this Vpc controls that are not being
// deleted and not finished.
func (r *VpcReconciler) activePods(ctx context.Context, vpc *networkv1.Vpc) ([]corev1.Pod, error) {
	var list corev1.PodList
	if err := r.APIReader.List(ctx, &list,
		client.InNamespace(vpc.Namespace),
		client.MatchingLabels{VpcLabel: vpc.Name},
	); err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	pods := make([]corev1.Pod, 0, len(list.Items))
	for _, pod := range list.Items {
		if !pod.DeletionTimestamp.IsZero() || !metav1.IsControlledBy(&pod, vpc) {
			continue
		}
		if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			continue
		}
		pods = append(pods, pod)
	}
	return pods, nil
}

// syncPods keeps exactly one pod per subnet: it deletes the pods of subnets
// that are gone (and any second pod of a subnet, keeping the oldest), then
// creates the missing ones. It returns the pods that are left, and the
// first error; it goes on past a failure so that one bad pod does not hold
// up the other subnets.
func (r *VpcReconciler) syncPods(ctx context.Context, vpc *networkv1.Vpc, subnets []netip.Prefix,
	pods []corev1.Pod) ([]corev1.Pod, error) {
	wanted := make(map[netip.Prefix]bool, len(subnets))
	for _, s := range subnets {
		wanted[s] = true
	}

	// Oldest first, so that the pod kept for a subnet is the one that has run
	// the longest.
	sort.Slice(pods, func(i, j int) bool {
		ti, tj := pods[i].CreationTimestamp, pods[j].CreationTimestamp
		if !ti.Equal(&tj) {
			return ti.Before(&tj)
		}
		return pods[i].Name < pods[j].Name
	})
	var errs []error
	kept := make([]corev1.Pod, 0, len(subnets))
	served := make(map[netip.Prefix]bool, len(subnets))
	for i := range pods {
		pod := &pods[i]
		subnet, ok := podSubnet(pod)
		if ok && wanted[subnet] && !served[subnet] {
			served[subnet] = true
			kept = append(kept, *pod)
			continue
		}
		if err := r.deletePod(ctx, vpc, pod); err != nil {
			errs = append(errs, err)
			kept = append(kept, *pod) // still there
		}
	}

	for _, subnet := range subnets {
		if served[subnet] {
			continue
		}
		pod, err := r.createPod(ctx, vpc, subnet)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		kept = append(kept, *pod)
	}
	return kept, errors.Join(errs...)
}

func (r *VpcReconciler) deletePod(ctx context.Context, vpc *networkv1.Vpc, pod *corev1.Pod) error {
	err := r.Delete(ctx, pod, client.Preconditions{UID: &pod.UID})
	if apierrors.IsNotFound(err) {
		// Someone else deleted it: gone, as wanted, but not by this
		// controller, so no "Deleted gateway pod" log line or event.
		logf.FromContext(ctx).V(1).Info("Gateway pod already gone", "pod", pod.Name)
		return nil
	}
	if err != nil {
		r.event(vpc, pod, corev1.EventTypeWarning, ReasonFailedDelete, "Delete", "Error deleting pod %s: %v", pod.Name, err)
		return fmt.Errorf("deleting pod %s: %w", pod.Name, err)
	}
	logf.FromContext(ctx).Info("Deleted gateway pod", "pod", pod.Name, "subnet", pod.Annotations[SubnetAnnotation])
	r.event(vpc, pod, corev1.EventTypeNormal, ReasonSuccessfulDelete, "Delete",
		"Deleted gateway pod %s of subnet %s", pod.Name, pod.Annotations[SubnetAnnotation])
	return nil
}

func (r *VpcReconciler) createPod(ctx context.Context, vpc *networkv1.Vpc, subnet netip.Prefix) (*corev1.Pod, error) {
	pod, err := r.newPod(vpc, subnet)
	if err != nil {
		return nil, err
	}
	if err := r.Create(ctx, pod, client.FieldOwner(ControllerName)); err != nil {
		r.event(vpc, nil, corev1.EventTypeWarning, ReasonFailedCreate, "Create",
			"Error creating gateway pod for subnet %s: %v", subnet, err)
		return nil, fmt.Errorf("creating gateway pod for subnet %s: %w", subnet, err)
	}
	logf.FromContext(ctx).Info("Created gateway pod", "pod", pod.Name, "subnet", subnet.String())
	r.event(vpc, pod, corev1.EventTypeNormal, ReasonSuccessfulCreate, "Create",
		"Created gateway pod %s for subnet %s", pod.Name, subnet)
	return pod, nil
}

// newPod builds the gateway pod of one subnet (a busybox sleeper standing in
// for a real gateway), owned by vpc.
func (r *VpcReconciler) newPod(vpc *networkv1.Vpc, subnet netip.Prefix) (*corev1.Pod, error) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: vpc.Name + "-",
			Namespace:    vpc.Namespace,
			Labels: map[string]string{
				VpcLabel:       vpc.Name,
				SubnetLabel:    SubnetLabelValue(subnet),
				ManagedByLabel: ControllerName,
			},
			Annotations: map[string]string{SubnetAnnotation: subnet.String()},
		},
		Spec: corev1.PodSpec{
			// The "restricted" Pod Security Standard, as CustomPod's pods.
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot: ptr.To(true),
				// busybox's image runs as root, and the kubelet refuses to
				// start it with runAsNonRoot unless a user is named: nobody.
				RunAsUser:      ptr.To[int64](65534),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{
				Name:            "gateway",
				Image:           PodImage,
				ImagePullPolicy: corev1.PullIfNotPresent,
				Command:         []string{"sleep", "3600"},
				Env:             []corev1.EnvVar{{Name: SubnetEnv, Value: subnet.String()}},
				SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: ptr.To(false),
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
			}},
		},
	}
	if err := controllerutil.SetControllerReference(vpc, pod, r.Scheme); err != nil {
		return nil, err
	}
	return pod, nil
}

// SubnetLabelValue writes a subnet in the characters a label value allows.
func SubnetLabelValue(subnet netip.Prefix) string {
	return strings.NewReplacer("/", "_", ":", "-").Replace(subnet.String())
}

// isPodReady says whether a pod's Ready condition is True, as a ReplicaSet's
// readyReplicas counts.
func isPodReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podSubnet reads a gateway pod's subnet from its annotation.
func podSubnet(pod *corev1.Pod) (netip.Prefix, bool) {
	subnet, err := netip.ParsePrefix(pod.Annotations[SubnetAnnotation])
	return subnet, err == nil
}

// updateStatus records the gateway pods, their subnets and the Ready
// condition ready, only when something changed.
func (r *VpcReconciler) updateStatus(ctx context.Context, vpc *networkv1.Vpc, pods []corev1.Pod, ready metav1.Condition) error {
	names := make([]string, 0, len(pods))
	subnets := make([]netip.Prefix, 0, len(pods))
	for i := range pods {
		names = append(names, pods[i].Name)
		if subnet, ok := podSubnet(&pods[i]); ok {
			subnets = append(subnets, subnet)
		}
	}
	sort.Strings(names)
	// Address order; a block's subnets all have the same length.
	sort.Slice(subnets, func(i, j int) bool {
		if c := subnets[i].Addr().Compare(subnets[j].Addr()); c != 0 {
			return c < 0
		}
		return subnets[i].Bits() < subnets[j].Bits()
	})
	subnetStrings := make([]string, 0, len(subnets))
	for _, s := range subnets {
		subnetStrings = append(subnetStrings, s.String())
	}

	status := vpc.Status.DeepCopy()
	status.PodNames = names
	status.Subnets = subnetStrings
	status.SubnetNum = int32(len(subnetStrings))
	ready.Type, ready.ObservedGeneration = ConditionReady, vpc.Generation
	meta.SetStatusCondition(&status.Conditions, ready)

	if equality.Semantic.DeepEqual(&vpc.Status, status) {
		return nil
	}
	patch := client.MergeFrom(vpc.DeepCopy())
	vpc.Status = *status
	if err := r.Status().Patch(ctx, vpc, patch, client.FieldOwner(ControllerName)); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("updating status: %w", err)
	}
	return nil
}

func (r *VpcReconciler) event(vpc *networkv1.Vpc, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(vpc, related, eventtype, reason, action, note, args...)
	}
}

// SetupWithManager sets up the controller with the Manager.
func (r *VpcReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.APIReader == nil {
		// Counting pods from the cache, which lags behind this controller's
		// own writes, would create or delete one pod too many.
		return errors.New("VpcReconciler needs APIReader (mgr.GetAPIReader()): it lists pods from the API server, not from the cache")
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&networkv1.Vpc{}).
		// A deleted or failed gateway pod requeues its Vpc and is replaced.
		Owns(&corev1.Pod{}).
		Named("network-vpc").
		Complete(r)
}
