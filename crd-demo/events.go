package main

import (
	"context"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"

	samplecrdscheme "example.com/k8s-demo/crd-demo/pkg/client/clientset/versioned/scheme"
)

const controllerAgentName = "network-controller"

// fieldManager names the controller in the managedFields of the objects it
// writes (`kubectl get network --show-managed-fields -o yaml`).
const fieldManager = controllerAgentName

func init() {
	// Add our types to the scheme the event recorder uses, so that it can
	// turn a *Network into the object reference an Event points at.
	utilruntime.Must(samplecrdscheme.AddToScheme(scheme.Scheme))
}

// newRecorder returns the recorder of the controller's Events on Networks,
// which `kubectl describe network` shows. They are also logged. It writes
// the events.k8s.io/v1 API, which replaced core/v1's events for
// controllers (client-go's tools/events, as controller-runtime's recorder
// and kube-scheduler use): an event says what the controller did (its
// action) beside why (its reason), and repeats of one are counted in a
// series instead of written again.
func newRecorder(ctx context.Context, kubeclientset kubernetes.Interface) events.EventRecorder {
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: kubeclientset.EventsV1()})
	broadcaster.StartStructuredLogging(0)
	if err := broadcaster.StartRecordingToSinkWithContext(ctx); err != nil {
		klog.FromContext(ctx).Error(err, "Events will not be recorded")
	}
	return broadcaster.NewRecorder(scheme.Scheme, controllerAgentName)
}
