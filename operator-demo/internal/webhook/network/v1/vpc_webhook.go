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

package v1

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	networkv1 "example.com/k8s-demo/operator-demo/api/network/v1"
)

// nolint:unused
// log is for logging in this package.
var vpclog = logf.Log.WithName("vpc-resource")

// SetupVpcWebhookWithManager registers the webhook for Vpc in the manager.
func SetupVpcWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &networkv1.Vpc{}).
		WithValidator(&VpcValidator{Reader: mgr.GetClient()}).
		Complete()
}

// Deletion is not validated: a Vpc that goes away cannot overlap anything.
//
// timeoutSeconds=5: the check is one list from the manager's cache, answered
// in microseconds; a webhook that has not answered in 5s is in trouble, and
// failurePolicy=fail then refuses the write after 5s rather than the API
// server's default 10.
// +kubebuilder:webhook:path=/validate-network-mock-com-v1-vpc,mutating=false,failurePolicy=fail,sideEffects=None,groups=network.mock.com,resources=vpcs,verbs=create;update,versions=v1,name=vvpc-v1.kb.io,admissionReviewVersions=v1,timeoutSeconds=5

// This webhook's configuration is the one the certificate rotator
// (internal/webhook/certs, --webhook-cert-rotation) writes its CA into, beside
// the CustomPod CRD: its role may watch validating webhook configurations
// (a watch cannot be limited to one name) and update that one alone, after
// config/default's namePrefix. Under OLM neither is used: OLM issues the
// certificate and injects its CA itself (config/manifests turns the rotation
// off and leaves the role out).
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,roleName=webhook-cert-rotator,resources=validatingwebhookconfigurations,verbs=get;list;watch
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,roleName=webhook-cert-rotator,resources=validatingwebhookconfigurations,resourceNames=operator-demo-validating-webhook-configuration,verbs=update

// VpcValidator refuses a Vpc whose spec.cidrblock overlaps the cidrblock of
// another Vpc in its namespace: a rule about several objects, which the
// CRD's schema and CEL rules (one object at a time) cannot express.
//
// It reads the other Vpcs from the manager's cache (the Vpc controller
// watches them anyway), so it does not add a request to the API server per
// admission. The price is a known race: two overlapping Vpcs created at the
// same moment can both pass, each checked before the other reached the
// cache; admission is not a transaction. The controller cannot fix that
// either (it would have to pick a winner after both were accepted): the
// webhook narrows the window, it does not close it.
//
// +kubebuilder:object:generate=false
type VpcValidator struct {
	// Reader lists the other Vpcs: the manager's client, which reads its cache.
	Reader client.Reader
}

var _ admission.Validator[*networkv1.Vpc] = &VpcValidator{}

// ValidateCreate implements admission.Validator so a webhook will be registered for the type Vpc.
func (v *VpcValidator) ValidateCreate(ctx context.Context, obj *networkv1.Vpc) (admission.Warnings, error) {
	vpclog.V(1).Info("Validation for Vpc upon creation", "namespace", obj.GetNamespace(), "name", obj.GetName())
	return v.validateOverlap(ctx, obj)
}

// ValidateUpdate implements admission.Validator so a webhook will be registered for the type Vpc.
func (v *VpcValidator) ValidateUpdate(ctx context.Context, oldObj, newObj *networkv1.Vpc) (admission.Warnings, error) {
	vpclog.V(1).Info("Validation for Vpc upon update", "namespace", newObj.GetNamespace(), "name", newObj.GetName())
	// An update that keeps the range is let through unchecked: it cannot
	// make an overlap that was not there. Two Vpcs that do overlap (created
	// in the race above) can then still get finalizers, labels and their
	// deletion through.
	if oldObj.Spec.CidrBlock == newObj.Spec.CidrBlock {
		return nil, nil
	}
	return v.validateOverlap(ctx, newObj)
}

// ValidateDelete implements admission.Validator so a webhook will be registered for the type Vpc.
// The marker registers create and update only, so this is never called.
func (v *VpcValidator) ValidateDelete(_ context.Context, _ *networkv1.Vpc) (admission.Warnings, error) {
	return nil, nil
}

// validateOverlap compares vpc's range with every other Vpc of its
// namespace (others by name: an update compares it with the rest, not with
// its stored self).
func (v *VpcValidator) validateOverlap(ctx context.Context, vpc *networkv1.Vpc) (admission.Warnings, error) {
	path := field.NewPath("spec", "cidrblock")
	prefix, err := netip.ParsePrefix(vpc.Spec.CidrBlock)
	if err != nil {
		// The CRD's CEL rules refuse this before a webhook is called.
		return nil, invalid(vpc, field.Invalid(path, vpc.Spec.CidrBlock, "must be a CIDR such as 10.0.0.0/16 or fd00::/48"))
	}

	var list networkv1.VpcList
	if err := v.Reader.List(ctx, &list, client.InNamespace(vpc.Namespace)); err != nil {
		// A manager restricted to one namespace (--namespace) caches no
		// other: let the Vpc through, saying so, rather than refuse every
		// Vpc of namespaces this manager does not manage. Its webhook
		// configuration should not send them here (localwebhook's
		// namespaceSelector does not).
		if strings.Contains(err.Error(), "unknown namespace for the cache") {
			return admission.Warnings{fmt.Sprintf("not checked for overlaps with other Vpcs: this webhook's manager watches another namespace (%v)", err)}, nil
		}
		return nil, apierrors.NewInternalError(fmt.Errorf("listing the Vpcs of namespace %s: %w", vpc.Namespace, err))
	}

	var overlaps []networkv1.Vpc
	for _, other := range list.Items {
		if other.Name == vpc.Name {
			continue
		}
		p, err := netip.ParsePrefix(other.Spec.CidrBlock)
		// IPv4 and IPv6 prefixes never overlap (Overlaps says false).
		if err == nil && p.Overlaps(prefix) {
			overlaps = append(overlaps, other)
		}
	}
	if len(overlaps) == 0 {
		return nil, nil
	}
	// The same answer whatever order the cache lists them in.
	slices.SortFunc(overlaps, func(a, b networkv1.Vpc) int { return strings.Compare(a.Name, b.Name) })
	msg := fmt.Sprintf("overlaps %s, the cidrblock of Vpc %q", overlaps[0].Spec.CidrBlock, overlaps[0].Name)
	if n := len(overlaps) - 1; n == 1 {
		msg += " (and that of 1 other Vpc)"
	} else if n > 1 {
		msg += fmt.Sprintf(" (and those of %d other Vpcs)", n)
	}
	return nil, invalid(vpc, field.Invalid(path, vpc.Spec.CidrBlock, msg))
}

// invalid is the API's own refusal (422 Invalid, naming the field), as the
// schema's errors are: kubectl prints it the same way.
func invalid(vpc *networkv1.Vpc, errs ...*field.Error) error {
	return apierrors.NewInvalid(networkv1.GroupVersion.WithKind("Vpc").GroupKind(), vpc.Name, errs)
}
