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

package zhhnzw

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	zhhnzwv2 "example.com/k8s-demo/operator-demo/api/zhhnzw/v2"
)

const (
	// CustomPodLabel marks the pods of a CustomPod; its value is the CustomPod's
	// name.
	CustomPodLabel = "zhhnzw.mock.com/custompod"
	// ManagedByLabel is the recommended label naming the controller that
	// manages an object: cmd/main.go caches only the pods that carry it.
	ManagedByLabel = "app.kubernetes.io/managed-by"

	// ControllerName names this controller wherever it leaves its mark: the
	// value of ManagedByLabel on its pods, the field manager of its writes
	// (`kubectl get -o yaml --show-managed-fields`; without one the API
	// server takes the binary's name from the user agent), and, in
	// cmd/main.go, the source of its events.
	ControllerName = "custompod-controller"
)

// newPod builds the pod called name, owned by cp, running cp's spec.template. The
// controller reads v2, the stored version: a v1 CustomPod reaches it
// converted, with v1's template (busybox:1.36, sleep 3600). A template
// changed later applies to the pods made after it, as a ReplicaSet's does:
// the pods already running are not replaced.
func (r *CustomPodReconciler) newPod(cp *zhhnzwv2.CustomPod, name string) (*corev1.Pod, error) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: cp.Namespace,
			Labels:    map[string]string{CustomPodLabel: cp.Name, ManagedByLabel: ControllerName},
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
				// The name v1's pods had (v1 ran busybox), whatever the image.
				Name:  "busybox",
				Image: cp.Spec.Template.Image,
				// Pulled once per node, even an image without a tag (that
				// is, :latest, whose default policy, Always, would pull at
				// every start).
				ImagePullPolicy: corev1.PullIfNotPresent,
				Command:         cp.Spec.Template.Command,
				SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: ptr.To(false),
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
			}},
		},
	}
	// The owner reference lets pod events find cp (pod_events.go), and lets
	// the garbage collector delete the pods when cp is deleted.
	if err := controllerutil.SetControllerReference(cp, pod, r.Scheme); err != nil {
		return nil, err
	}
	return pod, nil
}
