// Command models-schema prints the OpenAPI schemas that openapi-gen wrote in
// pkg/client/openapi as one OpenAPI v2 document, on stdout.
// hack/update-codegen.sh passes it to applyconfiguration-gen, which embeds
// the schemas in the apply configurations for the fake clientset.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"example.com/k8s-demo/crd-demo/pkg/client/openapi"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "models-schema: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	ref := func(name string) spec.Ref { return spec.MustCreateRef("#/definitions/" + name) }
	definitions := map[string]spec.Schema{}
	for name, def := range openapi.GetOpenAPIDefinitions(ref) {
		// A type may carry a v2 schema of its own beside its v3 one (the
		// extension says so); the document is v2, so prefer that one.
		if v2, ok := def.Schema.Extensions[common.ExtensionV2Schema].(spec.Schema); ok {
			definitions[name] = v2
			continue
		}
		definitions[name] = def.Schema
	}
	doc := spec.Swagger{SwaggerProps: spec.SwaggerProps{
		Swagger:     "2.0",
		Info:        &spec.Info{InfoProps: spec.InfoProps{Title: "crd-demo", Version: "unversioned"}},
		Definitions: definitions,
	}}
	data, err := json.Marshal(&doc)
	if err != nil {
		return fmt.Errorf("encoding the schemas: %w", err)
	}
	_, err = os.Stdout.Write(data)
	return err
}
