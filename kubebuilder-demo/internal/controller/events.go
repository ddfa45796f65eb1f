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
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	zhhnzwv2 "example.com/k8s-demo/kubebuilder-demo/api/v2"
)

// Event reasons: the ones a ReplicaSet uses, so `kubectl events` reads the
// same.
const (
	ReasonSuccessfulCreate = "SuccessfulCreate"
	ReasonSuccessfulDelete = "SuccessfulDelete"
	ReasonFailedCreate     = "FailedCreate"
	ReasonFailedDelete     = "FailedDelete"
)

// podsNote is an event's note for what a reconcile did to pods: "Created pod:
// sample-0", "Created 3 pods: sample-0, sample-1, sample-2". It names at most
// five: an events.k8s.io note is at most 1 KB.
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

// event records an event about cp, when the reconciler has a recorder.
func (r *CustomPodReconciler) event(cp *zhhnzwv2.CustomPod, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(cp, related, eventtype, reason, action, note, args...)
	}
}
