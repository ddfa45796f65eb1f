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

package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// EDIT THIS FILE!  THIS IS SCAFFOLDING FOR YOU TO OWN!
// NOTE: json tags are required.  Any new fields you add must have json tags for the fields to be serialized.

// CustomPodSpec defines the desired state of CustomPod
type CustomPodSpec struct {
	// INSERT ADDITIONAL SPEC FIELDS - desired state of cluster
	// Important: Run "make" to regenerate code after modifying this file
	// The following markers will use OpenAPI v3 schema to validate the value
	// More info: https://book.kubebuilder.io/reference/markers/crd-validation.html

	// A pointer, so that Go clients send an explicit 0 rather than dropping it
	// (omitempty) and getting the default instead.

	// replicas is the number of busybox pods to keep running (busybox:1.36,
	// `sleep 3600`; v2 lets the pods run another template).
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
}

// CustomPodStatus defines the observed state of CustomPod.
type CustomPodStatus struct {
	// INSERT ADDITIONAL STATUS FIELD - define observed state of cluster
	// Important: Run "make" to regenerate code after modifying this file

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

	// For Kubernetes API conventions, see:
	// https://github.com/kubernetes/community/blob/master/contributors/devel/sig-architecture/api-conventions.md#typical-status-properties

	// conditions represent the current state of the CustomPod resource.
	// "Ready" is True when readyReplicas equals spec.replicas; False with
	// reason PodsNotReady while pods start, or ScaleFailed while creating or
	// deleting a pod fails.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=`.spec.replicas`
// +kubebuilder:printcolumn:name="Current",type=integer,JSONPath=`.status.replicas`
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// spec.replicas is a field selector: the API server filters the list, as it
// filters pods by spec.nodeName (kubectl get custompods --field-selector
// spec.replicas=0).
// +kubebuilder:selectablefield:JSONPath=`.spec.replicas`
// The controller labels the pods with the CustomPod's name
// (zhhnzw.mock.com/custompod), and a label value has at most 63 characters:
// with a longer name every pod would be refused. A CRD can check
// metadata.name only in a rule at the root. Checked on create only (oldSelf
// has no value then): a name never changes, and an object stored before the
// rule must stay updatable, or its finalizers could never be removed.
// +kubebuilder:validation:XValidation:rule="oldSelf.hasValue() || size(self.metadata.name) <= 63",optionalOldSelf=true,message="metadata.name must be at most 63 characters: it labels the CustomPod's pods, and a label value has at most 63"

// CustomPod is the Schema for the custompods API. Its name has at most 63
// characters: the controller labels the pods with it.
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
