package main

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"

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
// which `kubectl describe network` shows. They are also logged.
func newRecorder(ctx context.Context, kubeclientset kubernetes.Interface) record.EventRecorder {
	eventBroadcaster := record.NewBroadcaster(record.WithContext(ctx))
	eventBroadcaster.StartStructuredLogging(0)
	eventBroadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kubeclientset.CoreV1().Events("")})
	return eventBroadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: controllerAgentName})
}
