package conversionwebhook

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// CRDName is the CustomResourceDefinition whose conversion this webhook does.
const CRDName = "custompods.zhhnzw.mock.com"

// ClientConfig is where the API server finds the webhook: exactly one of URL
// (a process outside the cluster, such as `go run` on your machine, or
// envtest's) and Service (a Service in the cluster, on port 443 unless Port
// says otherwise).
type ClientConfig struct {
	URL     string
	Service *apiextensionsv1.ServiceReference
}

// PatchCRD points the CRD's conversion webhook at cc, trusting caBundle (PEM).
// It is a JSON merge patch of spec.conversion alone, so that nothing else of
// the CRD (its schemas, installed by kubectl apply) is touched; the one of
// url and service not used is set to null, which removes it. The field
// manager names the controller in the CRD's managedFields.
//
// A URL is also written into the copy of the CRD that `kubectl apply` keeps
// in an annotation (see ForApply), so that applying crd/custompod.yaml
// again later swaps it back for the file's service: kubectl would otherwise
// keep the URL, a field it never applied, beside the service, and the API
// server refuses a clientConfig with both.
func PatchCRD(ctx context.Context, client apiextensionsclient.Interface, caBundle []byte, cc ClientConfig, fieldManager string) error {
	if (cc.URL == "") == (cc.Service == nil) {
		return fmt.Errorf("the webhook's client config needs exactly one of a URL and a service")
	}
	clientConfig := map[string]any{
		"caBundle": caBundle, // []byte: JSON writes it in base64, as the API wants
		"url":      nil,
		"service":  nil,
	}
	if cc.URL != "" {
		clientConfig["url"] = cc.URL
	} else {
		svc := *cc.Service
		if svc.Path == nil {
			svc.Path = ptr.To(Path)
		}
		clientConfig["service"] = svc
	}
	body := map[string]any{
		"spec": map[string]any{
			"conversion": map[string]any{
				"strategy": apiextensionsv1.WebhookConverter,
				"webhook": map[string]any{
					"clientConfig":             clientConfig,
					"conversionReviewVersions": []string{"v1"},
				},
			},
		},
	}
	if cc.URL != "" {
		crd, err := client.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, CRDName, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("reading CRD %s: %w", CRDName, err)
		}
		if applied, ok := crd.Annotations[corev1.LastAppliedConfigAnnotation]; ok {
			applied, err := ForApply(applied, cc.URL)
			if err != nil {
				return fmt.Errorf("CRD %s: %w", CRDName, err)
			}
			body["metadata"] = map[string]any{"annotations": map[string]any{corev1.LastAppliedConfigAnnotation: applied}}
		}
	}
	patch, err := json.Marshal(body)
	if err != nil {
		return err
	}
	_, err = client.ApiextensionsV1().CustomResourceDefinitions().Patch(ctx, CRDName, types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: fieldManager})
	if err != nil {
		return fmt.Errorf("pointing CRD %s at the conversion webhook: %w", CRDName, err)
	}
	return nil
}

// ForApply returns lastApplied, the CRD as `kubectl apply` last applied it
// (its last-applied-configuration annotation), with the conversion webhook's
// clientConfig set to url alone. kubectl computes its next patch from that
// copy: a field in it and not in the file is deleted, so the URL goes and
// the file's service comes back. The caBundle is left out, so that apply
// keeps the one on the server.
func ForApply(lastApplied, url string) (string, error) {
	var obj map[string]any
	if err := json.Unmarshal([]byte(lastApplied), &obj); err != nil {
		return "", fmt.Errorf("reading %s: %w", corev1.LastAppliedConfigAnnotation, err)
	}
	// apimachinery's helper makes the maps on the way that are missing.
	if err := unstructured.SetNestedField(obj, map[string]any{"url": url}, "spec", "conversion", "webhook", "clientConfig"); err != nil {
		return "", fmt.Errorf("%s: %w", corev1.LastAppliedConfigAnnotation, err)
	}
	out, err := json.Marshal(obj)
	return string(out), err
}
