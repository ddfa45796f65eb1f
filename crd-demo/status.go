package main

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1apply "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/klog/v2"

	samplecrdv1 "example.com/k8s-demo/crd-demo/pkg/apis/samplecrd/v1"
	samplecrdv1apply "example.com/k8s-demo/crd-demo/pkg/client/applyconfiguration/samplecrd/v1"
)

// Reasons, for events and for the Ready condition.
const (
	// ReasonSynced: the backend network matches the spec.
	ReasonSynced = "Synced"
	// ReasonCreated, ReasonUpdated, ReasonDeleted: the controller changed the backend network.
	ReasonCreated = "Created"
	ReasonUpdated = "Updated"
	ReasonDeleted = "Deleted"
	// ReasonBackendError: the backend failed or refused; the controller retries.
	ReasonBackendError = "BackendError"
	// ReasonBackendNetworkConflict: the backend network of the Network's name
	// is not this Network's; the controller never changes or deletes it.
	ReasonBackendNetworkConflict = "BackendNetworkConflict"
)

// updateStatus sets the Ready condition, networkID and observedGeneration,
// and writes the status only if that changed it: a write per sync would wake
// every watcher of Networks, this controller included, for nothing.
func (c *Controller) updateStatus(ctx context.Context, network *samplecrdv1.Network, networkID string, status metav1.ConditionStatus, reason, message string) error {
	newStatus := network.Status.DeepCopy()
	newStatus.ObservedGeneration = network.Generation
	newStatus.NetworkID = networkID
	// SetStatusCondition keeps lastTransitionTime when the status stays the same.
	meta.SetStatusCondition(&newStatus.Conditions, metav1.Condition{
		Type:               samplecrdv1.ConditionReady,
		Status:             status,
		Reason:             reason,
		Message:            message,
		ObservedGeneration: network.Generation,
		LastTransitionTime: metav1.NewTime(c.clock.Now()),
	})
	if equality.Semantic.DeepEqual(network.Status, *newStatus) {
		return nil
	}

	// Server-side apply sends only the fields this controller sets, and the
	// API server records them as fieldManager's: a field left out that it
	// set before is removed (networkID, after a conflict), and fields others
	// set, such as another condition type, are kept. UpdateStatus would send
	// the whole status as the cache last saw it. Force: the status is this
	// controller's to write, even over a field someone else changed by hand.
	// The UID makes the apply fail if the Network was replaced by a namesake.
	ready := meta.FindStatusCondition(newStatus.Conditions, samplecrdv1.ConditionReady)
	statusApply := samplecrdv1apply.NetworkStatus().
		WithObservedGeneration(newStatus.ObservedGeneration).
		WithConditions(metav1apply.Condition().
			WithType(ready.Type).
			WithStatus(ready.Status).
			WithReason(ready.Reason).
			WithMessage(ready.Message).
			WithObservedGeneration(ready.ObservedGeneration).
			WithLastTransitionTime(ready.LastTransitionTime))
	if networkID != "" {
		statusApply.WithNetworkID(networkID)
	}
	apply := samplecrdv1apply.Network(network.Name, network.Namespace).WithUID(network.UID).WithStatus(statusApply)
	_, err := c.networkclientset.SamplecrdV1().Networks(network.Namespace).ApplyStatus(ctx, apply,
		metav1.ApplyOptions{FieldManager: fieldManager, Force: true})
	if err != nil {
		return fmt.Errorf("applying status: %w", err)
	}
	klog.FromContext(ctx).V(4).Info("Applied status", "ready", status, "reason", reason, "networkID", networkID)
	return nil
}

// backendFailed reports a backend error or a conflict on the Network, as a
// Warning event and as Ready=False, and returns it so that the key is retried
// with backoff: the backend cannot be watched, so a retry is how the
// controller sees the backend come back, or the conflicting network go.
func (c *Controller) backendFailed(ctx context.Context, network *samplecrdv1.Network, err error) error {
	reason, networkID := ReasonBackendError, network.Status.NetworkID
	var conflict *conflictError
	if errors.As(err, &conflict) {
		// The recorded ID, if any, names no network of this Network's.
		reason, networkID = ReasonBackendNetworkConflict, ""
	}
	c.recorder.Eventf(network, nil, corev1.EventTypeWarning, reason, "Sync", "%s", err)
	if statusErr := c.updateStatus(ctx, network, networkID, metav1.ConditionFalse, reason, err.Error()); statusErr != nil {
		klog.FromContext(ctx).Error(statusErr, "Could not report the backend error in the status")
	}
	return err
}
