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

// VpcSpec defines the desired state of Vpc. The JSON names are the article's.
//
// cidrblock and subnetnum together: each of the subnetnum subnets has a prefix
// log2(subnetnum) bits longer than cidrblock's, which must fit in the
// address. CEL has no logarithm: the map gives it for the powers of two that
// subnetnum's own rule admits, and the rule leaves the other values to that
// rule (and a bad cidrblock to cidrblock's).
// +kubebuilder:validation:XValidation:rule="!isCIDR(self.cidrblock) || !(self.subnetnum in [1, 2, 4, 8, 16, 32, 64, 128, 256]) || cidr(self.cidrblock).prefixLength() + {1: 0, 2: 1, 4: 2, 8: 3, 16: 4, 32: 5, 64: 6, 128: 7, 256: 8}[self.subnetnum] <= (cidr(self.cidrblock).ip().family() == 4 ? 32 : 128)",fieldPath=".subnetnum",message="is too many subnets for cidrblock: each would have a prefix longer than the address (32 bits for IPv4, 128 for IPv6)"
type VpcSpec struct {
	// vpcname is a display name for the VPC.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	VpcName string `json:"vpcname"`

	// cidrblock is the VPC's address range, IPv4 or IPv6, in canonical form
	// (no bits set after the prefix length), e.g. 10.0.0.0/16.
	// The maximum length (an IPv6 address and /128) bounds the cost of the CEL rules.
	// +kubebuilder:validation:MaxLength=43
	// +kubebuilder:validation:XValidation:rule="isCIDR(self)",message="must be a CIDR such as 10.0.0.0/16 or fd00::/48"
	// +kubebuilder:validation:XValidation:rule="!isCIDR(self) || cidr(self).ip() == cidr(self).masked().ip()",message="must have no bits set after the prefix length, e.g. 10.0.0.0/16 rather than 10.0.0.1/16"
	// +required
	CidrBlock string `json:"cidrblock"`

	// subnetnum is how many equal subnets cidrblock is carved into, each with
	// its own gateway pod. It must be a power of two, and the subnets' prefix
	// length must not exceed 32 (IPv4) or 128 (IPv6): the API server refuses
	// other values. (A Vpc stored before these rules existed can still hold
	// one: the controller then says so with Ready=False, reason
	// InvalidSubnetting, and creates no pods.)
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=256
	// +kubebuilder:validation:XValidation:rule="self in [1, 2, 4, 8, 16, 32, 64, 128, 256]",message="must be a power of two (1, 2, 4, ..., 256): only those split cidrblock into equal subnets"
	// +required
	SubnetNum int32 `json:"subnetnum"`
}

// VpcStatus defines the observed state of Vpc.
type VpcStatus struct {
	// podNames are the names of the gateway pods, sorted.
	// +optional
	PodNames []string `json:"podNames,omitempty"`

	// subnetnum is the number of subnets that have a gateway pod. Always
	// serialized, so that 0 shows.
	// +optional
	SubnetNum int32 `json:"subnetnum"`

	// subnets are the subnets that have a gateway pod, in address order.
	// +optional
	Subnets []string `json:"subnets,omitempty"`

	// conditions represent the current state of the Vpc resource.
	// "Ready" is True when every subnet of spec has its gateway pod and the
	// pods are ready; False with reason PodsNotReady while they start, with
	// reason InvalidSubnetting when spec cannot be carved as asked, or with
	// reason ProvisionFailed while creating or deleting a pod fails.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="VPC",type=string,JSONPath=`.spec.vpcname`
// +kubebuilder:printcolumn:name="CIDR",type=string,JSONPath=`.spec.cidrblock`
// +kubebuilder:printcolumn:name="Subnets",type=integer,JSONPath=`.status.subnetnum`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// The controller labels the pods with the Vpc's name
// (network.mock.com/vpc), and a label value has at most 63 characters: with
// a longer name every pod would be refused. Checked on create only, as
// CustomPod's name is (see api/zhhnzw/v1/custompod_types.go).
// +kubebuilder:validation:XValidation:rule="oldSelf.hasValue() || size(self.metadata.name) <= 63",optionalOldSelf=true,message="metadata.name must be at most 63 characters: it labels the Vpc's pods, and a label value has at most 63"

// Vpc is the Schema for the vpcs API. Its name has at most 63 characters:
// the controller labels the gateway pods with it.
type Vpc struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is a standard object metadata
	// +optional
	metav1.ObjectMeta `json:"metadata,omitzero"`

	// spec defines the desired state of Vpc
	// +required
	Spec VpcSpec `json:"spec"`

	// status defines the observed state of Vpc
	// +optional
	Status VpcStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// VpcList contains a list of Vpc
type VpcList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitzero"`
	Items           []Vpc `json:"items"`
}

func init() {
	SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(SchemeGroupVersion, &Vpc{}, &VpcList{})
		return nil
	})
}
