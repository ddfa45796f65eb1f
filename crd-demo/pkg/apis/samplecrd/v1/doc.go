// Package v1 is version v1 of the samplecrd.k8s.io API group: the Network type.
//
// The comments below are package-wide ("global") tags for code-generator:
// deepcopy-gen writes DeepCopy methods for every type in this package;
// openapi-gen writes their OpenAPI schemas, named after openapi-model-package,
// which applyconfiguration-gen and the fake clientset need to merge apply
// configurations as the API server does; client-gen, lister-gen and
// informer-gen read the group name from groupName.
//
// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
// +k8s:openapi-model-package=com.example.k8s-demo.crd-demo.pkg.apis.samplecrd.v1
// +groupName=samplecrd.k8s.io
package v1
