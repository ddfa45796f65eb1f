// Package v1 is version v1 of the samplecrd.k8s.io API group: the Network type.
//
// The comments below are package-wide ("global") tags for code-generator:
// deepcopy-gen writes DeepCopy methods for every type in this package, and
// client-gen, lister-gen and informer-gen read the group name from groupName.
//
// +k8s:deepcopy-gen=package
// +groupName=samplecrd.k8s.io
package v1
