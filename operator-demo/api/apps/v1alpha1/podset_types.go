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

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// EDIT THIS FILE!  THIS IS SCAFFOLDING FOR YOU TO OWN!
// NOTE: json tags are required.  Any new fields you add must have json tags for the fields to be serialized.

// PodSetSpec defines the desired state of PodSet
type PodSetSpec struct {
	// size is the number of busybox pods to keep running. Required, as in the
	// article: unlike CustomPod's replicas it has no default.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +required
	Size int32 `json:"size"`
}

// PodSetStatus defines the observed state of PodSet.
type PodSetStatus struct {
	// replicas and readyReplicas are always serialized (no omitempty), so that
	// the Current and Ready columns show 0 rather than nothing.

	// replicas is the number of pods this PodSet controls that are pending or
	// running and not being deleted, as a ReplicaSet's status.replicas.
	// +optional
	Replicas int32 `json:"replicas"`

	// readyReplicas is the number of those pods whose Ready condition is
	// True, as a ReplicaSet's status.readyReplicas.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas"`

	// nodes are the names of the PodSet's pods (the article's name for them),
	// pending or running and not being deleted, sorted.
	// +optional
	Nodes []string `json:"nodes,omitempty"`

	// conditions represent the current state of the PodSet resource.
	// "Ready" is True when readyReplicas equals spec.size; False with reason
	// PodsNotReady while pods start, or ScaleFailed while creating or deleting
	// a pod fails.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=`.spec.size`
// +kubebuilder:printcolumn:name="Current",type=integer,JSONPath=`.status.replicas`
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// The controller labels the pods with the PodSet's name
// (apps.mock.com/podset), and a label value has at most 63 characters: with
// a longer name every pod would be refused. Checked on create only, as
// CustomPod's name is (see api/zhhnzw/v1/custompod_types.go).
// +kubebuilder:validation:XValidation:rule="oldSelf.hasValue() || size(self.metadata.name) <= 63",optionalOldSelf=true,message="metadata.name must be at most 63 characters: it labels the PodSet's pods, and a label value has at most 63"

// PodSet is the Schema for the podsets API. Its name has at most 63
// characters: the controller labels the pods with it.
type PodSet struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is a standard object metadata
	// +optional
	metav1.ObjectMeta `json:"metadata,omitzero"`

	// spec defines the desired state of PodSet
	// +required
	Spec PodSetSpec `json:"spec"`

	// status defines the observed state of PodSet
	// +optional
	Status PodSetStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// PodSetList contains a list of PodSet
type PodSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitzero"`
	Items           []PodSet `json:"items"`
}

func init() {
	SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(SchemeGroupVersion, &PodSet{}, &PodSetList{})
		return nil
	})
}
