package main

import (
	"context"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	samplecrdv1 "example.com/k8s-demo/crd-demo/pkg/apis/samplecrd/v1"
	"example.com/k8s-demo/crd-demo/pkg/backend"
)

// syncBackend creates the Network's backend network if it has none, updates
// it if its cidr or gateway differ from the spec, and returns its ID. A
// backend network of the same name that is not this Network's is a
// *conflictError, and is left as it is.
func (c *Controller) syncBackend(ctx context.Context, network *samplecrdv1.Network, name string) (string, error) {
	logger := klog.FromContext(ctx)

	actual, err := c.findBackendNetwork(ctx, network, name)
	switch {
	case errors.Is(err, backend.ErrNotFound):
		// The description marks the network as this Network's: the ID is
		// known only once Create returns, and if the controller stops before
		// the status records it, the next sync finds the network by name and
		// knows it by its description.
		created, err := c.backend.Create(ctx, backend.Network{
			Name: name, CIDR: network.Spec.Cidr, GatewayIP: network.Spec.Gateway, Description: string(network.UID),
		})
		if err != nil {
			return "", fmt.Errorf("creating backend network: %w", err)
		}
		logger.Info("Created backend network", "id", created.ID, "cidr", created.CIDR, "gateway", created.GatewayIP)
		c.recorder.Eventf(network, nil, corev1.EventTypeNormal, ReasonCreated, "Create", "Created backend network %s", created.ID)
		return created.ID, nil
	case err != nil:
		return "", err
	case actual.CIDR != network.Spec.Cidr || actual.GatewayIP != network.Spec.Gateway:
		updated := actual
		updated.CIDR, updated.GatewayIP = network.Spec.Cidr, network.Spec.Gateway
		if _, err := c.backend.Update(ctx, updated); err != nil {
			return "", fmt.Errorf("updating backend network %s: %w", actual.ID, err)
		}
		logger.Info("Updated backend network", "id", actual.ID, "cidr", updated.CIDR, "gateway", updated.GatewayIP)
		c.recorder.Eventf(network, nil, corev1.EventTypeNormal, ReasonUpdated, "Update",
			"Updated backend network %s: cidr %s → %s, gateway %s → %s",
			actual.ID, actual.CIDR, updated.CIDR, actual.GatewayIP, updated.GatewayIP)
	default:
		logger.V(4).Info("Backend network is up to date", "id", actual.ID)
	}
	return actual.ID, nil
}

// findBackendNetwork returns the Network's backend network: the one whose ID
// the status records, or else the one named name, since a controller stopped
// between Create and the status write has made one and not recorded it. It
// returns an error wrapping backend.ErrNotFound if there is none, and a
// *conflictError if the network found is not this Network's.
//
// Names do not prove ownership: anyone may have made a network of that name
// before the Network existed, or a Network of the same name deleted earlier
// may have left one behind. Only the description written at Create does.
func (c *Controller) findBackendNetwork(ctx context.Context, network *samplecrdv1.Network, name string) (backend.Network, error) {
	if id := network.Status.NetworkID; id != "" {
		actual, err := c.backend.Get(ctx, id)
		switch {
		case err == nil:
			return actual, checkOwner(network, actual)
		case !errors.Is(err, backend.ErrNotFound):
			return backend.Network{}, fmt.Errorf("getting backend network %s: %w", id, err)
		}
		// Deleted behind the controller's back: look for it by name, as for
		// a Network that has none recorded; if there is none, make it again.
		klog.FromContext(ctx).Info("Backend network in the status is gone", "id", id)
	}
	actual, err := backend.FindByName(ctx, c.backend, name)
	if errors.Is(err, backend.ErrNotFound) {
		return backend.Network{}, err
	}
	if err != nil {
		return backend.Network{}, fmt.Errorf("looking up backend network: %w", err)
	}
	return actual, checkOwner(network, actual)
}

// checkOwner returns a *conflictError if actual's description is not the
// Network's UID.
func checkOwner(network *samplecrdv1.Network, actual backend.Network) error {
	if actual.Description != string(network.UID) {
		return &conflictError{backendNetwork: actual, uid: network.UID}
	}
	return nil
}

// conflictError is a backend network that the controller found where the
// Network's would be, and that is not the Network's.
type conflictError struct {
	backendNetwork backend.Network
	uid            types.UID
}

func (e *conflictError) Error() string {
	owner := "no owner"
	if e.backendNetwork.Description != "" {
		owner = fmt.Sprintf("owner %q", e.backendNetwork.Description)
	}
	return fmt.Sprintf("backend network %s named %q has %s, not this Network (UID %s); it is left as it is",
		e.backendNetwork.ID, e.backendNetwork.Name, owner, e.uid)
}

// finalize deletes the backend network of a deleted Network, then removes
// the finalizer, which lets the API server remove the Network. A backend
// network that is not the Network's is left, and the Network goes all the same.
func (c *Controller) finalize(ctx context.Context, network *samplecrdv1.Network, name string) error {
	logger := klog.FromContext(ctx)
	if !slices.Contains(network.Finalizers, finalizerName) {
		return nil // done already; other finalizers hold the Network
	}

	actual, err := c.findBackendNetwork(ctx, network, name)
	var conflict *conflictError
	switch {
	case errors.Is(err, backend.ErrNotFound):
		logger.V(4).Info("Backend network already gone")
	case errors.As(err, &conflict):
		logger.Info("Not deleting a backend network that is not this Network's", "id", actual.ID, "owner", actual.Description)
		c.recorder.Eventf(network, nil, corev1.EventTypeWarning, ReasonBackendNetworkConflict, "Delete", "%s", err)
	case err != nil:
		return c.backendFailed(ctx, network, err)
	default:
		if err := c.backend.Delete(ctx, actual.ID); err != nil && !errors.Is(err, backend.ErrNotFound) {
			return c.backendFailed(ctx, network, fmt.Errorf("deleting backend network %s: %w", actual.ID, err))
		}
		logger.Info("Deleted backend network", "id", actual.ID)
		c.recorder.Eventf(network, nil, corev1.EventTypeNormal, ReasonDeleted, "Delete", "Deleted backend network %s", actual.ID)
	}

	networkCopy := network.DeepCopy()
	networkCopy.Finalizers = slices.DeleteFunc(networkCopy.Finalizers, func(f string) bool { return f == finalizerName })
	if _, err := c.networkclientset.SamplecrdV1().Networks(network.Namespace).Update(ctx, networkCopy, metav1.UpdateOptions{FieldManager: fieldManager}); err != nil {
		return fmt.Errorf("removing finalizer: %w", err)
	}
	logger.V(4).Info("Removed finalizer", "finalizer", finalizerName)
	return nil
}
