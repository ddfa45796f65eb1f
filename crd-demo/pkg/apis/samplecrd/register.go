// Package samplecrd holds the names shared by every version of the
// samplecrd.k8s.io API group, as in the article.
package samplecrd

const (
	// GroupName is the API group of Network. Groups ending in .k8s.io are
	// protected: the CRD needs the api-approved.kubernetes.io annotation.
	GroupName = "samplecrd.k8s.io"
	// Version is the only version of the group.
	Version = "v1"
)
