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

package certs

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// TestCertFilesFollowSecret checks that the certificate reaches CertDir
// from the Secret within seconds, when the rotator first fills the Secret
// and when it rotates it, with no kubelet to copy it.
func TestCertFilesFollowSecret(t *testing.T) {
	dir := os.Getenv("KUBEBUILDER_ASSETS") // `make test` sets it
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "..", "bin") // the monorepo's pinned binaries
	}
	env := &envtest.Environment{BinaryAssetsDirectory: dir}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting envtest (kube-apiserver and etcd from %s): %v", dir, err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kubebuilder-demo-system"}}
	// Created empty, as config/default does; another Secret beside it.
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "webhook-server-cert"}}
	other := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "other"},
		Data: map[string][]byte{corev1.TLSCertKey: []byte("other"), corev1.TLSPrivateKeyKey: []byte("other")}}
	for _, obj := range []client.Object{ns, secret, other} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}

	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: scheme.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	certDir := t.TempDir()
	if err := writeCertFiles(mgr, Options{Namespace: ns.Name, SecretName: secret.Name, CertDir: certDir}); err != nil {
		t.Fatal(err)
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()

	// Within seconds: the kubelet would take up to a minute or more.
	expectFiles := func(what, crt, key string) {
		t.Helper()
		var got map[string]string
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			got = map[string]string{}
			for _, name := range []string{corev1.TLSCertKey, corev1.TLSPrivateKeyKey} {
				b, _ := os.ReadFile(filepath.Join(certDir, name))
				got[name] = string(b)
			}
			if got[corev1.TLSCertKey] == crt && got[corev1.TLSPrivateKeyKey] == key {
				return
			}
		}
		t.Fatalf("%s: %s holds %q, want tls.crt %q and tls.key %q", what, certDir, got, crt, key)
	}
	fill := func(crt, key string) {
		t.Helper()
		secret.Data = map[string][]byte{corev1.TLSCertKey: []byte(crt), corev1.TLSPrivateKeyKey: []byte(key), "ca.crt": []byte("ca")}
		if err := c.Update(ctx, secret); err != nil {
			t.Fatal(err)
		}
	}

	// An empty Secret writes nothing, and another Secret is not the certificate.
	time.Sleep(time.Second)
	expectFiles("with the Secret empty", "", "")

	fill("crt-1", "key-1")
	expectFiles("once the rotator fills the Secret", "crt-1", "key-1")

	fill("crt-2", "key-2")
	expectFiles("after a rotation", "crt-2", "key-2")
}
