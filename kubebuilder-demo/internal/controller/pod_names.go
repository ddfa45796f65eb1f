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

package controller

import (
	"math"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	zhhnzwv2 "example.com/k8s-demo/kubebuilder-demo/api/v2"
)

// sortPods sorts cp's pods into the active ones, which count towards
// spec.replicas; the names of the pods to create, ordinals 0 to desired-1
// that no pod holds; and the pods to delete, in deleteRank's order: pods
// beyond desired, pods whose name has no ordinal, and finished pods, whose
// names a replacement needs. A terminating pod holds its name until it is
// gone: its replacement is created then.
func sortPods(cp *zhhnzwv2.CustomPod, pods []corev1.Pod, desired int32) (active []corev1.Pod, missing []string, surplus []corev1.Pod) {
	held := map[string]bool{}
	for _, pod := range pods {
		held[pod.Name] = true
		i := ordinal(cp, pod.Name)
		switch {
		case !pod.DeletionTimestamp.IsZero():
		case i < 0 || i >= int(desired) || isPodFinished(&pod):
			surplus = append(surplus, pod)
		default:
			active = append(active, pod)
		}
	}
	for i := range int(desired) {
		if name := podName(cp, i); !held[name] {
			missing = append(missing, name)
		}
	}
	sort.Slice(surplus, func(i, j int) bool {
		return deleteRank(cp, surplus[i].Name) > deleteRank(cp, surplus[j].Name)
	})
	return active, missing, surplus
}

// podName is the name of cp's pod with ordinal i.
func podName(cp *zhhnzwv2.CustomPod, i int) string {
	return cp.Name + "-" + strconv.Itoa(i)
}

// deleteRank orders the pods to delete, the highest rank first: names without
// an ordinal (made by another version of this controller, say), then the
// highest ordinal.
func deleteRank(cp *zhhnzwv2.CustomPod, name string) int {
	if i := ordinal(cp, name); i >= 0 {
		return i
	}
	return math.MaxInt
}

// ordinal is i for a pod named podName(cp, i), and -1 for any other name.
func ordinal(cp *zhhnzwv2.CustomPod, name string) int {
	suffix, ok := strings.CutPrefix(name, cp.Name+"-")
	if !ok {
		return -1
	}
	i, err := strconv.Atoi(suffix)
	if err != nil || i < 0 || strconv.Itoa(i) != suffix {
		return -1
	}
	return i
}
