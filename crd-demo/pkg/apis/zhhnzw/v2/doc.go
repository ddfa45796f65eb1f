// Package v2 is version v2 of the zhhnzw.mock.com API group: CustomPod with a
// pod template (image and command), where v1 always runs busybox. v2 is the
// version the API server stores; v1 is still served, and the conversion
// webhook (pkg/conversionwebhook) converts between the two with the functions
// in ../v1/conversion.go.
//
// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
// +k8s:openapi-model-package=com.example.k8s-demo.crd-demo.pkg.apis.zhhnzw.v2
// +groupName=zhhnzw.mock.com
package v2
