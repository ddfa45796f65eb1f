package conversionwebhook_test

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"
)

// TestSelfSignedDeploymentRecreates: a Deployment that serves the webhook in
// self-signed mode (--conversion-port without --tls-cert-file) is rolled out
// with Recreate. Each start writes a new CA into the CRD; under RollingUpdate
// the old pod, still behind the Service, would fail the API server's TLS.
func TestSelfSignedDeploymentRecreates(t *testing.T) {
	const path = "../../config/manager/manager.yaml"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, doc := range bytes.Split(b, []byte("\n---\n")) {
		var d appsv1.Deployment
		if err := yaml.Unmarshal(doc, &d); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if d.Kind != "Deployment" || !servesSelfSigned(d) {
			continue
		}
		found++
		if got := d.Spec.Strategy.Type; got != appsv1.RecreateDeploymentStrategyType {
			t.Errorf("%s: Deployment %s serves the conversion webhook with a self-signed CA: strategy.type must be %s, got %q",
				path, d.Name, appsv1.RecreateDeploymentStrategyType, got)
		}
	}
	if found == 0 {
		t.Fatalf("%s: no Deployment runs a container with --conversion-port and no --tls-cert-file; has the flag moved?", path)
	}
}

func servesSelfSigned(d appsv1.Deployment) bool {
	for _, c := range d.Spec.Template.Spec.Containers {
		args := append(slices.Clone(c.Command), c.Args...)
		has := func(flag string) bool {
			return slices.ContainsFunc(args, func(a string) bool { return a == flag || strings.HasPrefix(a, flag+"=") })
		}
		if has("--conversion-port") && !has("--tls-cert-file") {
			return true
		}
	}
	return false
}
