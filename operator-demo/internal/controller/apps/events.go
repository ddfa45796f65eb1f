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

package apps

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	appsv1alpha1 "example.com/k8s-demo/operator-demo/api/apps/v1alpha1"
)

// Event reasons: the same as CustomPod's.
const (
	ReasonSuccessfulCreate = "SuccessfulCreate"
	ReasonSuccessfulDelete = "SuccessfulDelete"
	ReasonFailedCreate     = "FailedCreate"
	ReasonFailedDelete     = "FailedDelete"
)

// podsNote is an event's note for what a reconcile did to pods: "Created pod:
// web-x7k2p", "Created 3 pods: web-x7k2p, ...". It names at most five: an
// events.k8s.io note is at most 1 KB.
func podsNote(done string, names []string) string {
	if len(names) == 1 {
		return done + " pod: " + names[0]
	}
	shown := strings.Join(names[:min(len(names), 5)], ", ")
	if len(names) > 5 {
		shown += fmt.Sprintf(" and %d more", len(names)-5)
	}
	return fmt.Sprintf("%s %d pods: %s", done, len(names), shown)
}

// event records an event on ps, and does nothing without a Recorder, which
// is optional.
func (r *PodSetReconciler) event(ps *appsv1alpha1.PodSet, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(ps, related, eventtype, reason, action, note, args...)
	}
}
