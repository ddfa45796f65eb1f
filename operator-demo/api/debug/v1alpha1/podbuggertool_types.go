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

// PodBuggerToolSpec defines the desired state of PodBuggerTool: which pods
// get a debugger, and which one.
type PodBuggerToolSpec struct {
	// selector picks the pods to debug, in the PodBuggerTool's namespace: the
	// labels the article's operator compares with each pod's. It must require
	// a label, with matchLabels or an In or Exists expression: an empty
	// selector, or one of NotIn and DoesNotExist alone, matches every pod
	// that lacks the labels it names, so nearly every pod in the namespace.
	//
	// It is immutable, as a Deployment's selector is: an ephemeral container
	// can never be removed from a pod, so a changed selector would leave
	// debuggers in pods it no longer names. To debug other pods, make another
	// PodBuggerTool.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="field is immutable"
	// +kubebuilder:validation:XValidation:rule="(has(self.matchLabels) && size(self.matchLabels) > 0) || (has(self.matchExpressions) && self.matchExpressions.exists(e, e.operator in ['In', 'Exists']))",message="the selector must require a label (matchLabels, or a matchExpressions entry with In or Exists): without one it matches every pod that lacks the labels it names"
	// +kubebuilder:validation:XValidation:rule="!has(self.matchExpressions) || self.matchExpressions.all(e, e.operator in ['In', 'NotIn', 'Exists', 'DoesNotExist'])",message="a matchExpressions operator must be In, NotIn, Exists or DoesNotExist"
	// +kubebuilder:validation:XValidation:rule="!has(self.matchExpressions) || self.matchExpressions.all(e, e.operator in ['In', 'NotIn'] ? has(e.values) && size(e.values) > 0 : !(e.operator in ['Exists', 'DoesNotExist']) || !has(e.values) || size(e.values) == 0)",message="In and NotIn need values; Exists and DoesNotExist take none"
	// +k8s:required
	Selector metav1.LabelSelector `json:"selector"`

	// image is the debugger's container image, run as an ephemeral container
	// in each matching pod.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +required
	Image string `json:"image"`

	// targetContainer is the container whose processes the debugger sees
	// (its process namespace); by default, the pod's first container.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	TargetContainer string `json:"targetContainer,omitempty"`
}

// PodBuggerToolStatus defines the observed state of PodBuggerTool.
type PodBuggerToolStatus struct {
	// observedGeneration is the generation of the spec this status is about.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// debuggedPods is how many pods that match the selector have this
	// PodBuggerTool's debugger.
	// +optional
	DebuggedPods int32 `json:"debuggedPods,omitempty"`

	// conditions represent the current state of the PodBuggerTool resource.
	// "Ready" is True when every running pod that matches has the debugger,
	// and False with a reason when a pod could not get one.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Selector",type=string,JSONPath=`.spec.selector.matchLabels`
// +kubebuilder:printcolumn:name="Image",type=string,JSONPath=`.spec.image`
// +kubebuilder:printcolumn:name="Debugged",type=integer,JSONPath=`.status.debuggedPods`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// PodBuggerTool is the Schema for the podbuggertools API: article 004's
// debugging operator. Every running pod its selector matches gets one
// ephemeral container running spec.image, as `kubectl debug` adds one.
type PodBuggerTool struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is a standard object metadata
	// +optional
	metav1.ObjectMeta `json:"metadata,omitzero"`

	// spec defines the desired state of PodBuggerTool
	// +required
	Spec PodBuggerToolSpec `json:"spec"`

	// status defines the observed state of PodBuggerTool
	// +optional
	Status PodBuggerToolStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// PodBuggerToolList contains a list of PodBuggerTool
type PodBuggerToolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitzero"`
	Items           []PodBuggerTool `json:"items"`
}

func init() {
	SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(SchemeGroupVersion, &PodBuggerTool{}, &PodBuggerToolList{})
		return nil
	})
}
