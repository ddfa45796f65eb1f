// Package v1 is version v1 of the zhhnzw.mock.com API group: the CustomPod type,
// the resource the articles build with operator-sdk and kubebuilder, here
// served by a controller written with client-go alone.
//
// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
// +k8s:openapi-model-package=com.example.k8s-demo.crd-demo.pkg.apis.zhhnzw.v1
// +groupName=zhhnzw.mock.com
package v1
