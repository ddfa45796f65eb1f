// Package zhhnzw holds the names shared by every version of the
// zhhnzw.mock.com API group, the group of the articles' CustomPod.
package zhhnzw

const (
	// GroupName is the API group of CustomPod.
	GroupName = "zhhnzw.mock.com"
	// Version is the only version of the group.
	Version = "v1"
)
