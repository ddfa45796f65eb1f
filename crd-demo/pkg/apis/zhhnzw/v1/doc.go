// Package v1 is version v1 of the zhhnzw.mock.com API group: the CustomPod type,
// the resource the articles build with operator-sdk and kubebuilder, here
// served by a controller written with client-go alone.
//
// +k8s:deepcopy-gen=package
// +groupName=zhhnzw.mock.com
package v1
