package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// CustomPod keeps spec.replicas busybox pods running, like a tiny ReplicaSet.
// The same API is served by the kubebuilder and operator-sdk demos; this one
// is reconciled by a controller written with client-go only. Its name has
// at most 63 characters, as the pods' label value (the CRD checks it).
type CustomPod struct {
	metav1.TypeMeta   `json:""`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   CustomPodSpec   `json:"spec"`
	Status CustomPodStatus `json:"status,omitempty"`
}

// CustomPodSpec is the desired state of a CustomPod.
type CustomPodSpec struct {
	// Replicas is how many pods to run: 0 to 100, 1 when left out (the CRD's
	// schema enforces the range and applies the default). A pointer, so that
	// "not set" and 0 stay apart in Go.
	Replicas *int32 `json:"replicas,omitempty"`
}

// CustomPodStatus is the observed state of a CustomPod.
type CustomPodStatus struct {
	// Replicas is how many of the CustomPod's pods exist and are not being
	// deleted, as a ReplicaSet's status.replicas. Always written, so that the
	// Current column shows 0 rather than nothing.
	Replicas int32 `json:"replicas"`
	// ReadyReplicas is how many of those pods have their Ready condition
	// True, as a ReplicaSet's status.readyReplicas. Always written, too.
	ReadyReplicas int32 `json:"readyReplicas"`
	// PodNames lists those pods, sorted by name.
	// +listType=atomic
	PodNames []string `json:"podNames,omitempty"`
	// Conditions holds the Ready condition: True when ReadyReplicas equals
	// spec.replicas; False while pods start, or with a reason while creating
	// or deleting pods fails. A map keyed by type, as in the CRD's schema.
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ConditionReady is the condition type the CustomPod controller sets.
const ConditionReady = "Ready"

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// CustomPodList is a list of CustomPods.
type CustomPodList struct {
	metav1.TypeMeta `json:""`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []CustomPod `json:"items"`
}
