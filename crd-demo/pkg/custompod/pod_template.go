package custompod

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	zhhnzwv2 "example.com/k8s-demo/crd-demo/pkg/apis/zhhnzw/v2"
)

const controllerAgentName = "custompod-controller"

// fieldManager names this controller in the managedFields of what it writes
// (`kubectl get -o yaml --show-managed-fields`), rather than the binary's name
// the API server would take from the user agent.
const fieldManager = controllerAgentName

// The labels on every pod the controller creates.
const (
	// LabelManagedBy says which implementation made the pod.
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedBy      = "crd-demo"
	// LabelCustomPod names the CustomPod that owns the pod. Pod informers
	// filter on it: the controller caches no other pods.
	LabelCustomPod = "zhhnzw.mock.com/custompod"
)

// newPod returns a pod for cp, running its spec.template. The owner reference
// with controller=true makes cp the pod's one managing owner: the garbage
// collector deletes the pod with cp, and handleObject finds cp from the pod.
// A template changed later applies to the pods made after it, as a
// ReplicaSet's does: the pods already running are not replaced (that is a
// Deployment's job).
func newPod(cp *zhhnzwv2.CustomPod, name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: cp.Namespace,
			Labels: map[string]string{
				LabelManagedBy: ManagedBy,
				LabelCustomPod: cp.Name,
			},
			OwnerReferences: []metav1.OwnerReference{
				*metav1.NewControllerRef(cp, zhhnzwv2.SchemeGroupVersion.WithKind("CustomPod")),
			},
		},
		Spec: corev1.PodSpec{
			// What the "restricted" Pod Security Standard asks, so that a
			// namespace that enforces it admits the pods.
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot: ptr.To(true),
				// An image that runs as root (busybox's, nginx's) is refused
				// with runAsNonRoot unless a user is named: nobody. Whatever
				// user the template's image names, its pods run as nobody.
				RunAsUser:      ptr.To[int64](65534),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{
				// The name v1's pods had (v1 ran busybox only), kept whatever
				// the image.
				Name:  "busybox",
				Image: cp.Spec.Template.Image,
				// Pulled once per node, even an image without a tag (that is,
				// :latest, whose default policy, Always, would pull at every
				// start).
				ImagePullPolicy: corev1.PullIfNotPresent,
				Command:         cp.Spec.Template.Command,
				SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: ptr.To(false),
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
			}},
		},
	}
}
