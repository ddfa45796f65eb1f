package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The tags on Network drive code-generator:
//
//   - +genclient asks client-gen for a typed client (Create, Get, List, Watch,
//     Update, Patch, Apply, Delete, ...), and lister-gen and informer-gen for a
//     lister and an informer. It goes on Network only: NetworkList is just what
//     List returns.
//   - +k8s:deepcopy-gen:interfaces makes the generated DeepCopyObject satisfy
//     runtime.Object, which every type sent to or read from the API server must.
//
// There is no +genclient:noStatus: Network has a status, served by the CRD's
// status subresource. With the tag, client-gen would leave out UpdateStatus
// and ApplyStatus, and the only way to write .status would be gone: with the
// subresource enabled, the API server ignores .status in Create and Update.

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Network describes a network that the controller keeps in step with the
// network backend (the stand-in for OpenStack Neutron).
type Network struct {
	metav1.TypeMeta   `json:""`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state, written by the user.
	Spec NetworkSpec `json:"spec"`
	// Status is the observed state, written by the controller.
	Status NetworkStatus `json:"status,omitempty"`
}

// NetworkSpec is the spec for a Network resource.
//
// The CRD's schema (crd/network.yaml) checks both fields at admission: cidr
// must be a CIDR with no host bits set, and gateway an IP address inside it.
type NetworkSpec struct {
	// Cidr is the network's address range, for example 192.168.0.0/16.
	Cidr string `json:"cidr"`
	// Gateway is the network's gateway address, for example 192.168.0.1.
	Gateway string `json:"gateway"`
}

// NetworkStatus is the status for a Network resource.
type NetworkStatus struct {
	// ObservedGeneration is the metadata.generation the status describes.
	// It tells a reader whether the controller has seen the latest spec.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// NetworkID is the ID of the backend network this Network made. The
	// controller finds its backend network by this ID first, and by name
	// only when there is none.
	NetworkID string `json:"networkID,omitempty"`
	// Conditions holds the Ready condition: True once the backend network
	// matches the spec, False with a reason when the backend refused it or
	// its network of the same name belongs to someone else. A map keyed by
	// type, as in the CRD's schema: server-side apply merges each condition
	// on its own, so a writer owns only the conditions it sets.
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ConditionReady is the condition type the Network controller sets.
const ConditionReady = "Ready"

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// NetworkList is a list of Network resources.
type NetworkList struct {
	metav1.TypeMeta `json:""`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []Network `json:"items"`
}
