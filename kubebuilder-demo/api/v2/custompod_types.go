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

package v2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// CustomPodSpec defines the desired state of CustomPod
type CustomPodSpec struct {
	// A pointer, so that Go clients send an explicit 0 rather than dropping it
	// (omitempty) and getting the default instead.

	// replicas is the number of pods to keep running, as in v1.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// template is what each pod runs. v1 had no template: its pods always ran
	// busybox:1.36 with `sleep 3600`, which a v1 CustomPod reads as in v2.
	// +required
	Template CustomPodTemplate `json:"template"`
}

// CustomPodTemplate is the part of a pod a CustomPod lets its user choose:
// the one container's image and command. The rest (labels, owner reference,
// the "restricted" security context) is the controller's.
type CustomPodTemplate struct {
	// image is the container image, such as busybox:1.36:
	// [host[:port]/]path[:tag][@digest], with a lower-case path.
	//
	// The rule is docker/distribution's reference grammar, which the kubelet
	// parses an image with. host: DNS labels joined by dots, or [an IPv6
	// address]; path: lower-case components joined by /, in one, letters and
	// digits joined by one . or _, two _, or dashes; tag: up to 128 letters,
	// digits, _ . -, not first . or -; digest: algorithm:hex, such as
	// sha256:<64 hex digits>. Whatever else is written here never runs: the
	// API server refuses a pod whose image starts or ends with whitespace, and
	// the kubelet cannot pull the rest (the pod waits in InvalidImageName
	// forever).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule=`self.matches(r'^(([a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?(\.[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\[[0-9a-fA-F:]+\])(:[0-9]+)?/)?[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*(/[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*)*(:[a-zA-Z0-9_][a-zA-Z0-9_.-]{0,127})?(@[A-Za-z][A-Za-z0-9]*([-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?$')`,message="must be an image reference, [host[:port]/]path[:tag][@digest], with a lower-case path and no spaces, such as busybox:1.36 or registry.example.com:5000/team/app:v1"
	// +required
	Image string `json:"image"`

	// command replaces the image's entrypoint; left out, the image's own runs.
	// A sleeper or a short script: a longer one belongs in the image. The
	// bounds keep every CustomPod small.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=4096
	// +optional
	Command []string `json:"command,omitempty"`
}

// CustomPodStatus defines the observed state of CustomPod: the same fields
// as v1's.
type CustomPodStatus struct {
	// replicas and readyReplicas are always serialized (no omitempty), so that
	// the Current and Ready columns show 0 rather than nothing.

	// replicas is the number of pods this CustomPod controls that are pending
	// or running and not being deleted, as a ReplicaSet's status.replicas.
	// +optional
	Replicas int32 `json:"replicas"`

	// readyReplicas is the number of those pods whose Ready condition is
	// True, as a ReplicaSet's status.readyReplicas.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas"`

	// podNames lists those pods, sorted by name.
	// +optional
	PodNames []string `json:"podNames,omitempty"`

	// conditions represent the current state of the CustomPod resource.
	// "Ready" is True when readyReplicas equals spec.replicas; False with
	// reason PodsNotReady while pods start, or ScaleFailed while creating or
	// deleting a pod fails.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +genclient
// +kubebuilder:ac:generate=true
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=`.spec.replicas`
// +kubebuilder:printcolumn:name="Current",type=integer,JSONPath=`.status.replicas`
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name="Image",type=string,JSONPath=`.spec.template.image`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// Field selectors, as v1's, and the image (kubectl get custompods
// --field-selector spec.template.image=busybox:1.36).
// +kubebuilder:selectablefield:JSONPath=`.spec.replicas`
// +kubebuilder:selectablefield:JSONPath=`.spec.template.image`
// As v1's (see there): the name is the object's, whatever the version.
// +kubebuilder:validation:XValidation:rule="oldSelf.hasValue() || size(self.metadata.name) <= 63",optionalOldSelf=true,message="metadata.name must be at most 63 characters: it labels the CustomPod's pods, and a label value has at most 63"

// CustomPod is the Schema for the custompods API. v2 is the version the API
// server stores (the conversion's hub); v1 is served too, converted by the
// manager's conversion webhook. Its name has at most 63 characters: the
// controller labels the pods with it.
type CustomPod struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is a standard object metadata
	// +optional
	metav1.ObjectMeta `json:"metadata,omitzero"`

	// spec defines the desired state of CustomPod
	// +required
	Spec CustomPodSpec `json:"spec"`

	// status defines the observed state of CustomPod
	// +optional
	Status CustomPodStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// CustomPodList contains a list of CustomPod
type CustomPodList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitzero"`
	Items           []CustomPod `json:"items"`
}

func init() {
	SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(SchemeGroupVersion, &CustomPod{}, &CustomPodList{})
		return nil
	})
}
