package conversionwebhook

import (
	"context"
	"encoding/json"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	patch, err := json.Marshal(map[string]any{
		"spec": map[string]any{
			"conversion": map[string]any{
				"strategy": apiextensionsv1.WebhookConverter,
				"webhook": map[string]any{
					"clientConfig":             clientConfig,
					"conversionReviewVersions": []string{"v1"},
				},
			},
		},
	})
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
