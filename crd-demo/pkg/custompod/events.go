package custompod

import (
	"context"
	"fmt"
	"strings"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"

	customscheme "example.com/k8s-demo/crd-demo/pkg/client/clientset/versioned/scheme"
)

// Event reasons: the ones a ReplicaSet uses, so `kubectl get events` reads the
// same.
const (
	ReasonSuccessfulCreate = "SuccessfulCreate"
	ReasonSuccessfulDelete = "SuccessfulDelete"
	ReasonFailedCreate     = "FailedCreate"
	ReasonFailedDelete     = "FailedDelete"
)

func init() {
	// Add our types to the scheme the event recorder uses, so that Events
	// can point at CustomPods.
	utilruntime.Must(customscheme.AddToScheme(scheme.Scheme))
}

// newRecorder returns the recorder of the controller's events. They go
// through a clientset of their own, as kube-scheduler's do: a clientset has
// one rate limit (--kube-api-qps) for all its requests, and an event for
// every pod would spend the budget of the writes that make the pods. They
// are events.k8s.io/v1 events, as the scaffolds' are (client-go's
// tools/events).
func newRecorder(ctx context.Context, eventclientset kubernetes.Interface) events.EventRecorder {
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: eventclientset.EventsV1()})
	broadcaster.StartStructuredLogging(0)
	if err := broadcaster.StartRecordingToSinkWithContext(ctx); err != nil {
		klog.FromContext(ctx).Error(err, "Events will not be recorded")
	}
	return broadcaster.NewRecorder(scheme.Scheme, controllerAgentName)
}

// podsNote is an event's note for what a sync did to its pods: "Created pod:
// test-0", "Created 3 pods: test-0, test-1, test-2". It names at most five,
// as an event's note is short (1 KB for events.k8s.io).
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
