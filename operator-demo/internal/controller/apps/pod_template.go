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

package apps

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	appsv1alpha1 "example.com/k8s-demo/operator-demo/api/apps/v1alpha1"
)

const (
	// PodSetLabel marks the pods of a PodSet; its value is the PodSet's name.
	PodSetLabel = "apps.mock.com/podset"
	// ManagedByLabel is the recommended label naming the controller that
	// manages an object: cmd/main.go caches only the pods that carry it.
	ManagedByLabel = "app.kubernetes.io/managed-by"

	// ControllerName names this controller wherever it leaves its mark: the
	// value of ManagedByLabel on its pods, the field manager of its writes
	// (`kubectl get -o yaml --show-managed-fields`; without one the API
	// server takes the binary's name from the user agent), and, in
	// cmd/main.go, the source of its events.
	ControllerName = "podset-controller"

	// PodImage is the pods' image: a tag, not :latest, which the kubelet
	// pulls on every start; IfNotPresent then runs the copy a node has.
	PodImage = "busybox:1.36"
)

// newPod builds one busybox pod, the article's sleeper, owned by ps.
func (r *PodSetReconciler) newPod(ps *appsv1alpha1.PodSet) (*corev1.Pod, error) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: ps.Name + "-",
			Namespace:    ps.Namespace,
			Labels:       map[string]string{PodSetLabel: ps.Name, ManagedByLabel: ControllerName},
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
				Name:            "busybox",
				Image:           PodImage,
				ImagePullPolicy: corev1.PullIfNotPresent,
				Command:         []string{"sleep", "3600"},
				SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: ptr.To(false),
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
			}},
		},
	}
	if err := controllerutil.SetControllerReference(ps, pod, r.Scheme); err != nil {
		return nil, err
	}
	return pod, nil
}
