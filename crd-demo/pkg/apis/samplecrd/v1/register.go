package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"example.com/k8s-demo/crd-demo/pkg/apis/samplecrd"
)

// SchemeGroupVersion is the group and version of the objects in this package.
var SchemeGroupVersion = schema.GroupVersion{Group: samplecrd.GroupName, Version: samplecrd.Version}

// Kind takes an unqualified kind and returns a group-qualified GroupKind.
func Kind(kind string) schema.GroupKind {
	return SchemeGroupVersion.WithKind(kind).GroupKind()
}

// Resource takes an unqualified resource and returns a group-qualified GroupResource.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

var (
	// SchemeBuilder collects the functions that add this package's types to a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds Network and NetworkList to a scheme. The generated
	// clientset calls it; so does main, so that events can refer to Networks.
	AddToScheme = SchemeBuilder.AddToScheme
)

// addKnownTypes adds our types to the API scheme by registering
// Network and NetworkList.
//
// The API server learns about Network from the CRD; this is the client's side:
// it tells the clientset's decoder which Go type to build for
// samplecrd.k8s.io/v1, Kind=Network.
func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(
		SchemeGroupVersion,
		&Network{},
		&NetworkList{},
	)

	// register the type in the scheme
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
