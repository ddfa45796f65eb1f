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

// Package certs gives the webhook server its certificate in the cluster
// without cert-manager: github.com/open-policy-agent/cert-controller's
// rotator, run by the manager itself (--webhook-cert-rotation). It keeps a
// CA and a serving certificate for the webhook Service in a Secret, which
// the Deployment mounts at the webhook's certificate directory, renews them
// before they expire, and writes the CA into the caBundle of the webhook
// configurations and of the CustomPod CRD's conversion webhook, so the API
// server trusts the server.
//
// Not part of the scaffold, which installs cert-manager for this: cert-manager
// is a cluster-wide operator with its own images, which a registry-less
// cluster cannot pull. Under OLM neither is used: OLM issues the certificate
// and injects its CA itself (config/manifests turns the rotation off).
package certs

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
)

// The rotator reads and updates the Secret (in the manager's namespace only:
// a Role, not a ClusterRole, as no other Secret is its business), and writes
// the CA into the webhook configurations and the CRDs' conversion webhooks
// (cluster-scoped: a watch cannot be limited to some names, so get;list;watch
// on every one, though it updates only those of Options). The Secret is
// created empty by config/default: the rotator fills it, it never creates it.
// The roles are the rotator's own (roleName), not manager-role, so that
// config/manifests can leave them out of the bundle: under OLM nothing runs
// the rotator.
// +kubebuilder:rbac:groups="",namespace=system,roleName=webhook-cert-rotator,resources=secrets,verbs=get;list;watch;update
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,roleName=webhook-cert-rotator,resources=validatingwebhookconfigurations,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=apiextensions.k8s.io,roleName=webhook-cert-rotator,resources=customresourcedefinitions,verbs=get;list;watch;update;patch

// Options say where the certificate goes and who trusts it.
type Options struct {
	// Namespace holds the Secret and the Service: the manager's own.
	Namespace string
	// SecretName is the Secret the Deployment mounts at CertDir.
	SecretName string
	// ServiceName is the webhook Service: the certificate is for
	// <ServiceName>.<Namespace>.svc, the name the API server calls.
	ServiceName string
	// CertDir is the webhook server's certificate directory (tls.crt, tls.key).
	CertDir string
	// ValidatingWebhookConfigurations get the CA as their webhooks' caBundle.
	ValidatingWebhookConfigurations []string
	// ConversionCRDs are the CRDs (custompods.zhhnzw.mock.com) whose
	// conversion webhook gets the CA.
	ConversionCRDs []string
}

// Add adds the rotator to mgr. The returned channel is closed once the
// certificate is in CertDir (the kubelet has refreshed the mounted Secret,
// up to a minute or so after the rotator wrote it) and every configuration
// has the CA: register the webhooks then, as the webhook server cannot
// start without its certificate.
func Add(mgr ctrl.Manager, o Options) (<-chan struct{}, error) {
	if o.Namespace == "" || o.SecretName == "" || o.ServiceName == "" || o.CertDir == "" {
		return nil, errors.New("the webhook certificate's rotation needs a namespace, a Secret, a Service and a certificate directory")
	}
	var webhooks []rotator.WebhookInfo
	for _, name := range o.ValidatingWebhookConfigurations {
		webhooks = append(webhooks, rotator.WebhookInfo{Name: name, Type: rotator.Validating})
	}
	for _, name := range o.ConversionCRDs {
		webhooks = append(webhooks, rotator.WebhookInfo{Name: name, Type: rotator.CRDConversion})
	}
	ready := make(chan struct{})
	err := rotator.AddRotator(mgr, &rotator.CertRotator{
		SecretKey:      types.NamespacedName{Namespace: o.Namespace, Name: o.SecretName},
		CertDir:        o.CertDir,
		CAName:         o.ServiceName + "-ca",
		CAOrganization: "operator-demo",
		DNSName:        fmt.Sprintf("%s.%s.svc", o.ServiceName, o.Namespace),
		ExtraDNSNames:  []string{fmt.Sprintf("%s.%s.svc.cluster.local", o.ServiceName, o.Namespace)},
		IsReady:        ready,
		Webhooks:       webhooks,
		FieldOwner:     "operator-demo-cert-rotator",
		// Every replica serves webhooks, so every replica needs the
		// certificate, leader or not.
		RequireLeaderElection: false,
		// The webhook server reloads the files when the kubelet refreshes
		// the mounted Secret: no restart needed after a rotation.
		RestartOnSecretRefresh: false,
	})
	if err != nil {
		return nil, fmt.Errorf("adding the webhook certificate rotator: %w", err)
	}
	return ready, nil
}

// serviceAccountNamespace is where a pod's namespace is written.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// PodNamespace is the namespace the manager's pod runs in.
func PodNamespace() (string, error) {
	b, err := os.ReadFile(serviceAccountNamespace)
	if err != nil {
		return "", fmt.Errorf("reading the pod's namespace (outside a pod, give --webhook-cert-namespace): %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}
