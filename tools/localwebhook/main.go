// Command localwebhook lets a scaffold's `make run` serve the webhooks from
// this machine: the scaffold's `make run` serves none, as the cluster's webhook
// configuration (config/default) names a Service in the cluster, with a
// certificate the cluster issues. `make tools` builds it into the repository's
// bin/, as it builds controller-gen and kustomize, and kubebuilder-demo's and
// operator-demo's `make run` run it there, in the module's directory (the
// paths below are relative to it), with -name-prefix set to the module's
// config/default namePrefix. Before the manager starts, it
//
//   - creates a CA and a serving certificate for -host in -dir (tls.crt,
//     tls.key: the manager's --webhook-cert-path), or reuses them while they
//     are valid for that host;
//   - server-side applies a copy of each webhook configuration of
//     config/webhook/manifests.yaml, if there is one, named
//     <prefix><name>-local, whose webhooks call https://<host>:<port><path>
//     and trust that CA. With -namespace (default $WATCH_NAMESPACE, as the
//     manager), the copy is named <prefix><name>-local-<namespace> and
//     matches that namespace only, so that managers watching different
//     namespaces each validate their own;
//   - points the conversion webhook of each CRD that config/crd/patches
//     gives one (webhook_in_*.yaml) at https://<host>:<port><path>, with that
//     CA. The CRD must be installed (`make install`). A CRD has one
//     conversion webhook for the whole cluster, whatever -namespace says: the
//     last manager started converts for all (any of them converts alike).
//
// With -delete it deletes those copies instead (`make uninstall-local-webhook`
// in a module that has some).
// The copies stay when the manager stops: every write they match is then
// refused (failurePolicy: Fail) until the manager runs again or they are
// deleted. The CRDs' conversion is left pointing here: with no webhook, the
// API server serves a CustomPod only in the version it is stored in, and
// `make install` (or `make deploy`) points the conversion at the in-cluster
// Service again.
//
// The host must be this machine as the API server reaches it: 127.0.0.1 for
// a kwok cluster, whose API server is a process on this machine.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"
)

func main() {
	var o options
	flag.StringVar(&o.host, "host", "127.0.0.1", "this machine's address or name, as the API server reaches it")
	flag.IntVar(&o.port, "port", 9443, "the port the manager's webhook server listens on (--webhook-port)")
	flag.StringVar(&o.dir, "dir", "bin/localwebhook", "where the CA and the serving certificate are kept (--webhook-cert-path)")
	flag.StringVar(&o.manifests, "manifests", "config/webhook/manifests.yaml", "the webhook configurations controller-gen generated, if any")
	flag.StringVar(&o.crdPatches, "crd-patches", "config/crd/patches", "the CRD patches that enable conversion webhooks (webhook_in_*.yaml)")
	flag.StringVar(&o.prefix, "name-prefix", "", "config/default's namePrefix (e.g. kubebuilder-demo-): it starts the copies' names, this program's field manager and its CA's name (required)")
	flag.StringVar(&o.namespace, "namespace", os.Getenv("WATCH_NAMESPACE"), "if set, the copies match this namespace only (default $WATCH_NAMESPACE)")
	flag.StringVar(&o.kubeconfig, "kubeconfig", "", "the cluster's kubeconfig (default $KUBECONFIG or ~/.kube/config)")
	flag.BoolVar(&o.delete, "delete", false, "delete the copies instead")
	flag.Parse()
	if o.prefix == "" {
		fmt.Fprintln(os.Stderr, "localwebhook: -name-prefix is required: the module's namePrefix (config/default/kustomization.yaml), e.g. kubebuilder-demo-")
		os.Exit(2)
	}
	if err := run(context.Background(), o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "localwebhook:", err)
		os.Exit(1)
	}
}

type options struct {
	host, dir, manifests, crdPatches, prefix, namespace, kubeconfig string
	port                                                            int
	delete                                                          bool
}

// fieldManager owns the copies' fields, and labels them: the module's
// localwebhook (kubebuilder-demo-localwebhook).
func (o options) fieldManager() string { return o.prefix + "localwebhook" }

func run(ctx context.Context, o options, out io.Writer) error {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, nil).ClientConfig()
	if err != nil {
		return fmt.Errorf("loading the kubeconfig: %w", err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	configs, err := readConfigs(o.manifests)
	if err != nil {
		return err
	}
	conversions, err := readConversions(o.crdPatches)
	if err != nil {
		return err
	}
	if len(configs) == 0 && len(conversions) == 0 {
		return fmt.Errorf("no webhook: %s holds no webhook configuration, and %s no conversion webhook", o.manifests, o.crdPatches)
	}
	if o.delete {
		if err := deleteCopies(ctx, client, configs, o, out); err != nil {
			return err
		}
		for _, c := range conversions {
			fmt.Fprintf(out, "CustomResourceDefinition %s: conversion left as is (make install points it at the cluster's Service)\n", c.crd)
		}
		return nil
	}

	ca, err := ensureCerts(o.dir, o.host, strings.TrimSuffix(o.prefix, "-"), out)
	if err != nil {
		return err
	}
	for _, c := range configs {
		if err := applyCopy(ctx, client, c, ca, o, out); err != nil {
			return err
		}
	}
	if len(conversions) > 0 {
		dyn, err := dynamic.NewForConfig(cfg)
		if err != nil {
			return err
		}
		for _, c := range conversions {
			if err := pointConversion(ctx, dyn, c, ca, o, out); err != nil {
				return err
			}
		}
	}
	return nil
}

// conversion is a CRD whose conversion webhook a patch of config/crd/patches
// enables, and the path the webhook serves.
type conversion struct {
	crd, path string
}

// readConversions reads the conversion webhook patches the scaffold writes
// (`kubebuilder create webhook --conversion`).
func readConversions(dir string) ([]conversion, error) {
	files, err := filepath.Glob(filepath.Join(dir, "webhook_in_*.yaml"))
	if err != nil {
		return nil, err
	}
	var conversions []conversion
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var patch struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Spec struct {
				Conversion struct {
					Strategy string `json:"strategy"`
					Webhook  struct {
						ClientConfig struct {
							Service struct {
								Path string `json:"path"`
							} `json:"service"`
						} `json:"clientConfig"`
					} `json:"webhook"`
				} `json:"conversion"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(b, &patch); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		c := patch.Spec.Conversion
		if c.Strategy != "Webhook" || patch.Metadata.Name == "" || c.Webhook.ClientConfig.Service.Path == "" {
			return nil, fmt.Errorf("%s: not a conversion webhook patch (metadata.name, strategy Webhook, a service path)", f)
		}
		conversions = append(conversions, conversion{crd: patch.Metadata.Name, path: c.Webhook.ClientConfig.Service.Path})
	}
	return conversions, nil
}

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// pointConversion points the CRD's conversion webhook at this machine. A
// merge patch: the rest of the CRD stays as `make install` applied it, and
// the service is removed (a clientConfig has a URL or a service, not both).
// The URL also goes into the copy of the CRD kubectl apply keeps in an
// annotation (forApply), so that a later `make install` or `make deploy`
// swaps it back for the service rather than failing with both.
func pointConversion(ctx context.Context, dyn dynamic.Interface, c conversion, ca []byte, o options, out io.Writer) error {
	url := "https://" + net.JoinHostPort(o.host, strconv.Itoa(o.port)) + c.path
	body := map[string]any{"spec": map[string]any{"conversion": map[string]any{
		"strategy": "Webhook",
		"webhook": map[string]any{
			"conversionReviewVersions": []string{"v1"},
			"clientConfig":             map[string]any{"url": url, "caBundle": ca, "service": nil},
		},
	}}}
	live, err := dyn.Resource(crdResource).Get(ctx, c.crd, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("CustomResourceDefinition %s is not installed: run `make install` first", c.crd)
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", c.crd, err)
	}
	if applied, ok := live.GetAnnotations()[lastApplied]; ok {
		applied, err := forApply(applied, url)
		if err != nil {
			return fmt.Errorf("%s: %w", c.crd, err)
		}
		body["metadata"] = map[string]any{"annotations": map[string]any{lastApplied: applied}}
	}
	patch, err := json.Marshal(body)
	if err != nil {
		return err
	}
	_, err = dyn.Resource(crdResource).Patch(ctx, c.crd, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: o.fieldManager()})
	if err != nil {
		return fmt.Errorf("pointing the conversion webhook of %s here: %w", c.crd, err)
	}
	fmt.Fprintf(out, "CustomResourceDefinition %s: conversion webhook -> %s\n", c.crd, url)
	return nil
}

// lastApplied is where kubectl apply keeps the object as it last applied it.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// forApply returns applied, the CRD as kubectl last applied it, with the
// conversion's clientConfig set to url alone. kubectl computes its next patch
// from that copy: a field in it and not in the file is deleted, so the URL
// goes and the file's service comes back. The caBundle is left out, so that
// apply keeps the one on the server.
func forApply(applied, url string) (string, error) {
	var obj map[string]any
	if err := json.Unmarshal([]byte(applied), &obj); err != nil {
		return "", fmt.Errorf("reading %s: %w", lastApplied, err)
	}
	m := obj
	for _, key := range []string{"spec", "conversion", "webhook"} {
		next, ok := m[key].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[key] = next
		}
		m = next
	}
	m["clientConfig"] = map[string]any{"url": url}
	out, err := json.Marshal(obj)
	return string(out), err
}

// webhookConfig is a ValidatingWebhookConfiguration or a
// MutatingWebhookConfiguration of the manifests, as plain JSON.
type webhookConfig struct {
	kind, name string
	obj        map[string]any
}

func readConfigs(path string) ([]webhookConfig, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil // only conversion webhooks: controller-gen writes no file
	}
	if err != nil {
		return nil, err
	}
	var configs []webhookConfig
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		var obj map[string]any
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		kind, _ := obj["kind"].(string)
		if kind != "ValidatingWebhookConfiguration" && kind != "MutatingWebhookConfiguration" {
			continue
		}
		meta, _ := obj["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		configs = append(configs, webhookConfig{kind: kind, name: name, obj: obj})
	}
	return configs, nil
}

// copyName is the name of a configuration's local copy.
func copyName(c webhookConfig, o options) string {
	name := o.prefix + c.name + "-local"
	if o.namespace != "" {
		name += "-" + o.namespace
	}
	return name
}

// applyCopy server-side applies the copy of c whose webhooks call this
// machine.
func applyCopy(ctx context.Context, client kubernetes.Interface, c webhookConfig, ca []byte, o options, out io.Writer) error {
	name := copyName(c, o)
	webhooks, _ := c.obj["webhooks"].([]any)
	var urls []string
	for _, w := range webhooks {
		webhook := w.(map[string]any)
		cc, _ := webhook["clientConfig"].(map[string]any)
		svc, _ := cc["service"].(map[string]any)
		path, _ := svc["path"].(string)
		url := "https://" + net.JoinHostPort(o.host, strconv.Itoa(o.port)) + path
		webhook["clientConfig"] = map[string]any{"url": url, "caBundle": ca}
		if o.namespace != "" {
			webhook["namespaceSelector"] = metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
				Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpIn, Values: []string{o.namespace},
			}}}
		}
		urls = append(urls, fmt.Sprintf("%v -> %s", webhook["name"], url))
	}
	c.obj["metadata"] = map[string]any{
		"name":   name,
		"labels": map[string]string{"app.kubernetes.io/managed-by": o.fieldManager()},
	}
	data, err := json.Marshal(c.obj)
	if err != nil {
		return err
	}
	opts := metav1.PatchOptions{FieldManager: o.fieldManager(), Force: ptrTo(true)}
	adm := client.AdmissionregistrationV1()
	switch c.kind {
	case "ValidatingWebhookConfiguration":
		_, err = adm.ValidatingWebhookConfigurations().Patch(ctx, name, types.ApplyPatchType, data, opts)
	default:
		_, err = adm.MutatingWebhookConfigurations().Patch(ctx, name, types.ApplyPatchType, data, opts)
	}
	if err != nil {
		return fmt.Errorf("applying %s %s: %w", c.kind, name, err)
	}
	scope := "all namespaces"
	if o.namespace != "" {
		scope = "namespace " + o.namespace
	}
	for _, u := range urls {
		fmt.Fprintf(out, "%s %s applied (%s): %s\n", c.kind, name, scope, u)
	}
	return nil
}

func deleteCopies(ctx context.Context, client kubernetes.Interface, configs []webhookConfig, o options, out io.Writer) error {
	adm := client.AdmissionregistrationV1()
	for _, c := range configs {
		name := copyName(c, o)
		var err error
		switch c.kind {
		case "ValidatingWebhookConfiguration":
			err = adm.ValidatingWebhookConfigurations().Delete(ctx, name, metav1.DeleteOptions{})
		default:
			err = adm.MutatingWebhookConfigurations().Delete(ctx, name, metav1.DeleteOptions{})
		}
		switch {
		case apierrors.IsNotFound(err):
			fmt.Fprintf(out, "%s %s not found: nothing to delete\n", c.kind, name)
		case err != nil:
			return fmt.Errorf("deleting %s %s: %w", c.kind, name, err)
		default:
			fmt.Fprintf(out, "%s %s deleted\n", c.kind, name)
		}
	}
	return nil
}

// The certificates: a CA, kept so that the copies' caBundle stays the same
// from one run to the next, and a serving certificate for the host, both
// ECDSA P-256 (quick to make) and valid for a year. They are made again
// when missing, expiring within a day, or not for this host.
const validity = 365 * 24 * time.Hour

// ensureCerts returns the CA's PEM, making the files if needed; a new CA is
// named for the module (kubebuilder-demo local webhook CA).
func ensureCerts(dir, host, module string, out io.Writer) ([]byte, error) {
	caPath, certPath, keyPath := filepath.Join(dir, "ca.crt"), filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if notAfter, err := validFor(caPath, certPath, keyPath, host); err == nil {
		fmt.Fprintf(out, "Reusing the webhook server's certificate for %s in %s (valid until %s)\n", host, dir, notAfter.Format(time.DateOnly))
		return os.ReadFile(caPath)
	}

	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: module + " local webhook CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	caCert, _ := x509.ParseCertificate(caDER)

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: host},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(validity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if ip := net.ParseIP(host); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	} else {
		tmpl.DNSNames = []string{host}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	for path, data := range map[string][]byte{
		caPath:   caPEM,
		certPath: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPath:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(out, "Created a CA and a webhook server certificate for %s in %s (valid until %s)\n", host, dir, tmpl.NotAfter.Format(time.DateOnly))
	return caPEM, nil
}

// validFor checks that the files hold a certificate for host, signed by the
// CA, matching the key and valid for at least a day more.
func validFor(caPath, certPath, keyPath, host string) (time.Time, error) {
	caPEM, err := os.ReadFile(caPath)
	if err != nil {
		return time.Time{}, err
	}
	certPEM, err := os.ReadFile(certPath)
	if err != nil {
		return time.Time{}, err
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return time.Time{}, err
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return time.Time{}, err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		return time.Time{}, errors.New("no CA certificate")
	}
	at := time.Now().Add(24 * time.Hour)
	if _, err := pair.Leaf.Verify(x509.VerifyOptions{DNSName: host, Roots: roots, CurrentTime: at}); err != nil {
		return time.Time{}, err
	}
	return pair.Leaf.NotAfter, nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n
}

func ptrTo[T any](v T) *T { return &v }
