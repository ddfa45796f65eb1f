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
// CA and a serving certificate for the webhook Service in a Secret, renews
// them before they expire, and writes the CA into the caBundle of the webhook
// configurations and CRD conversion webhooks it is given (Options), so the
// API server trusts the server. The manager copies the certificate from the
// Secret into the webhook's certificate directory (an emptyDir) itself, at
// once: the kubelet refreshes a mounted Secret only when it next syncs the
// pod, up to a minute or more later.
//
// Not part of the scaffold, which installs cert-manager for this: cert-manager
// is a cluster-wide operator with its own images, which a registry-less
// cluster cannot pull. Both scaffolds hold this file, the same but for the
// module path (scripts/compare-scaffolds.sh checks it), as each module builds
// on its own.
package certs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// The rotator reads and updates the Secret (in the manager's namespace only:
// a Role, not a ClusterRole, as no other Secret is its business), and writes
// the CA into the CRDs' conversion webhooks (cluster-scoped: a watch cannot
// be limited to one name, so get;list;watch on every CRD). Writes are
// limited to the objects it is given (resourceNames, after config/default's
// namePrefix): without them, its token could rewrite every CRD's conversion
// webhook in the cluster. A module whose rotator also writes a webhook
// configuration grants that beside the webhook's own marker. The Secret is
// created empty by config/default: the rotator fills it, it never creates it.
// The roles are the rotator's own (roleName), not manager-role: a manager
// whose certificate something else issues (cert-manager, OLM) needs neither,
// and its manifests can leave them out. The Role and the ClusterRole have
// names of their own: a Helm chart keeps one object per name.
// +kubebuilder:rbac:groups="",namespace=system,roleName=webhook-cert-secret,resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups="",namespace=system,roleName=webhook-cert-secret,resources=secrets,resourceNames=operator-demo-webhook-server-cert,verbs=update
// +kubebuilder:rbac:groups=apiextensions.k8s.io,roleName=webhook-cert-rotator,resources=customresourcedefinitions,verbs=get;list;watch
// +kubebuilder:rbac:groups=apiextensions.k8s.io,roleName=webhook-cert-rotator,resources=customresourcedefinitions,resourceNames=custompods.zhhnzw.mock.com,verbs=update

// Options say where the certificate goes and who trusts it.
type Options struct {
	// Namespace holds the Secret and the Service: the manager's own.
	Namespace string
	// SecretName is the Secret the rotator keeps the certificate in.
	SecretName string
	// ServiceName is the webhook Service: the certificate is for
	// <ServiceName>.<Namespace>.svc, the name the API server calls.
	ServiceName string
	// CertDir is the webhook server's certificate directory, where the
	// manager writes tls.crt and tls.key from the Secret.
	CertDir string
	// ValidatingWebhookConfigurations get the CA as their webhooks' caBundle.
	ValidatingWebhookConfigurations []string
	// ConversionCRDs are the CRDs (custompods.zhhnzw.mock.com) whose
	// conversion webhook gets the CA.
	ConversionCRDs []string
}

// Add adds the rotator to mgr, and the copy of its certificate into CertDir.
// The returned channel is closed once the certificate is in CertDir and
// every configuration has the CA: start the webhook server then, as it
// cannot start without its certificate.
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
		// The webhook server reloads the files when writeCertFiles
		// rewrites them: no restart needed after a rotation.
		RestartOnSecretRefresh: false,
	})
	if err != nil {
		return nil, fmt.Errorf("adding the webhook certificate rotator: %w", err)
	}
	if err := writeCertFiles(mgr, o); err != nil {
		return nil, fmt.Errorf("adding the webhook certificate's copy: %w", err)
	}
	return ready, nil
}

// writeCertFiles writes the Secret's tls.key and tls.crt into CertDir as
// soon as the rotator fills the Secret, and again whenever it changes. It
// watches that Secret alone (the rotator's RBAC), on every replica.
func writeCertFiles(mgr ctrl.Manager, o Options) error {
	secrets, err := cluster.New(mgr.GetConfig(), func(co *cluster.Options) {
		co.Scheme = mgr.GetScheme()
		co.Cache = cache.Options{
			DefaultNamespaces: map[string]cache.Config{o.Namespace: {}},
			ByObject: map[client.Object]cache.ByObject{
				&corev1.Secret{}: {Field: fields.OneTermEqualSelector("metadata.name", o.SecretName)},
			},
		}
	})
	if err != nil {
		return err
	}
	// A cluster is started with the caches, leader or not.
	if err := mgr.Add(secrets); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).Named("webhook-cert-files").
		WithOptions(controller.Options{NeedLeaderElection: ptr.To(false)}).
		WatchesRawSource(source.Kind(secrets.GetCache(), &corev1.Secret{}, &handler.TypedEnqueueRequestForObject[*corev1.Secret]{})).
		Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			var secret corev1.Secret
			if err := secrets.GetCache().Get(ctx, req.NamespacedName, &secret); err != nil {
				return reconcile.Result{}, client.IgnoreNotFound(err)
			}
			key, crt := secret.Data[corev1.TLSPrivateKeyKey], secret.Data[corev1.TLSCertKey]
			if len(key) == 0 || len(crt) == 0 {
				return reconcile.Result{}, nil // not issued yet
			}
			// The key first: the rotator waits for tls.crt, then the
			// server reads both.
			if err := writeFileAtomic(filepath.Join(o.CertDir, corev1.TLSPrivateKeyKey), key); err != nil {
				return reconcile.Result{}, err
			}
			return reconcile.Result{}, writeFileAtomic(filepath.Join(o.CertDir, corev1.TLSCertKey), crt)
		}))
}

// writeFileAtomic replaces path with data by a rename, so that no reader
// (the rotator, the server's certificate watcher) sees half a file.
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path))
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(f.Name()) }() // once renamed, a no-op
	if _, err := f.Write(data); err != nil {
		_ = f.Close() // the write's error is the one to return
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
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
