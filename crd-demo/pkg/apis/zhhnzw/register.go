// Package zhhnzw holds the names shared by every version of the
// zhhnzw.mock.com API group, the group of the articles' CustomPod.
//
// The group has two versions: v1 (pkg/apis/zhhnzw/v1), the articles' API,
// and v2 (pkg/apis/zhhnzw/v2), which adds the pod template. Both are served;
// v2 is the one stored in etcd. The API server asks a conversion webhook
// (pkg/conversion) to convert between them.
package zhhnzw

// GroupName is the API group of CustomPod.
const GroupName = "zhhnzw.mock.com"
