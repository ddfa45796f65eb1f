package v2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// CustomPod keeps spec.replicas pods running from spec.template, like a tiny
// ReplicaSet. v1 had no template: its pods always ran busybox. Its name has
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
	// schema enforces the range and applies the default), as in v1.
	Replicas *int32 `json:"replicas,omitempty"`
	// Template is what each pod runs. Required: the CRD's schema refuses a
	// v2 CustomPod without it, or with an empty image.
	Template CustomPodTemplate `json:"template"`
}

// CustomPodTemplate is the part of a pod a CustomPod lets its user choose:
// the one container's image and command. The rest (labels, owner reference,
// the "restricted" security context) is the controller's.
type CustomPodTemplate struct {
	// Image is the container image, such as busybox:1.36. Required, 1 to 255
	// characters of an image reference, [host[:port]/]path[:tag][@digest]
	// with a lower-case path: the CRD's schema refuses what no pod could run.
	Image string `json:"image"`
	// Command replaces the image's entrypoint; left out, the image's own
	// runs. At most 64 words of at most 4096 characters.
	// +listType=atomic
	Command []string `json:"command,omitempty"`
}

// CustomPodStatus is the observed state of a CustomPod: the same fields as
// v1's.
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
	// or deleting pods fails. Unlike v1's, this field says how the list
	// merges (the CRD's schema says so for both versions): by type.
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
