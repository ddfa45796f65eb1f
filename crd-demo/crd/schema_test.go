// Package crd_test checks the hand-written CRDs in this directory: that their
// schemas match the Go types (this file, no server needed) and that the API
// server enforces them (validation_test.go, against a real kube-apiserver).
package crd_test

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	samplecrdv1 "example.com/k8s-demo/crd-demo/pkg/apis/samplecrd/v1"
	zhhnzwv1 "example.com/k8s-demo/crd-demo/pkg/apis/zhhnzw/v1"
	zhhnzwv2 "example.com/k8s-demo/crd-demo/pkg/apis/zhhnzw/v2"
)

// TestSchemasMatchGoTypes walks each Go type and its CRD schema side by side.
// The CRDs are written by hand, as in the article, so nothing else keeps a
// field added to types.go from being pruned by the API server, or a field
// renamed in the YAML from silently never reaching the controller.
func TestSchemasMatchGoTypes(t *testing.T) {
	for _, tc := range []struct {
		file string
		objs map[string]any // by version
	}{
		{"network.yaml", map[string]any{"v1": samplecrdv1.Network{}}},
		{"custompod.yaml", map[string]any{"v1": zhhnzwv1.CustomPod{}, "v2": zhhnzwv2.CustomPod{}}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			crd := readCRD(t, tc.file)
			if len(crd.Spec.Versions) != len(tc.objs) {
				t.Fatalf("%d versions, want %d", len(crd.Spec.Versions), len(tc.objs))
			}
			for _, v := range crd.Spec.Versions {
				obj, ok := tc.objs[v.Name]
				if !ok {
					t.Errorf("version %s has no Go type", v.Name)
					continue
				}
				compare(t, v.Name, reflect.TypeOf(obj), *v.Schema.OpenAPIV3Schema)
			}
		})
	}
}

// TestCustomPodVersions checks what the conversion webhook relies on: v1 and
// v2 both served, v2 stored, and conversion by a webhook that speaks
// ConversionReview v1 at pkg/conversionwebhook's path.
func TestCustomPodVersions(t *testing.T) {
	crd := readCRD(t, "custompod.yaml")
	var served, stored []string
	for _, v := range crd.Spec.Versions {
		if v.Served {
			served = append(served, v.Name)
		}
		if v.Storage {
			stored = append(stored, v.Name)
		}
	}
	if !slices.Equal(served, []string{"v1", "v2"}) || !slices.Equal(stored, []string{"v2"}) {
		t.Errorf("served %v, stored %v; want [v1 v2] and [v2]", served, stored)
	}
	c := crd.Spec.Conversion
	if c == nil || c.Strategy != apiextensionsv1.WebhookConverter || c.Webhook == nil ||
		!slices.Equal(c.Webhook.ConversionReviewVersions, []string{"v1"}) ||
		c.Webhook.ClientConfig == nil || c.Webhook.ClientConfig.Service == nil ||
		c.Webhook.ClientConfig.Service.Path == nil || *c.Webhook.ClientConfig.Service.Path != "/convert" {
		t.Errorf("conversion %+v; want strategy Webhook, conversionReviewVersions [v1], a service with path /convert", c)
	}
}

func readCRD(t *testing.T, file string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(data, &crd); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return &crd
}

var (
	timeType       = reflect.TypeOf(metav1.Time{})
	objectMetaType = reflect.TypeOf(metav1.ObjectMeta{})
	listMetaType   = reflect.TypeOf(metav1.ListMeta{})
)

// compare checks that schema describes the JSON form of typ.
func compare(t *testing.T, path string, typ reflect.Type, schema apiextensionsv1.JSONSchemaProps) {
	t.Helper()
	if typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	want := func(typeName, format string) {
		t.Helper()
		if schema.Type != typeName || schema.Format != format {
			t.Errorf("%s: schema type %q format %q, want %q %q (Go %s)", path, schema.Type, schema.Format, typeName, format, typ)
		}
	}
	switch {
	case typ == timeType:
		want("string", "date-time")
	case typ == objectMetaType || typ == listMetaType:
		want("object", "") // the API server validates metadata itself
	case typ.Kind() == reflect.Struct:
		want("object", "")
		fields := jsonFields(typ)
		var names, props []string
		for name := range fields {
			names = append(names, name)
		}
		for name := range schema.Properties {
			props = append(props, name)
		}
		slices.Sort(names)
		slices.Sort(props)
		if !slices.Equal(names, props) {
			t.Errorf("%s: Go fields %v, schema properties %v", path, names, props)
		}
		for name, field := range fields {
			if prop, ok := schema.Properties[name]; ok {
				compare(t, path+"."+name, field, prop)
			}
		}
	case typ.Kind() == reflect.Slice:
		want("array", "")
		if schema.Items == nil || schema.Items.Schema == nil {
			t.Errorf("%s: array without items", path)
			return
		}
		compare(t, path+"[]", typ.Elem(), *schema.Items.Schema)
	case typ.Kind() == reflect.String:
		want("string", "")
	case typ.Kind() == reflect.Int32:
		want("integer", "int32")
	case typ.Kind() == reflect.Int64:
		want("integer", "int64")
	case typ.Kind() == reflect.Bool:
		want("boolean", "")
	default:
		t.Errorf("%s: Go type %s not handled by this test", path, typ)
	}
}

// jsonFields returns the JSON names of a struct's fields and their types,
// flattening the embedded ",inline" ones as encoding/json does.
func jsonFields(typ reflect.Type) map[string]reflect.Type {
	fields := map[string]reflect.Type{}
	for f := range typ.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-" || !f.IsExported():
		case name == "" && f.Anonymous:
			for n, ft := range jsonFields(f.Type) {
				fields[n] = ft
			}
		case name == "":
			fields[f.Name] = f.Type
		default:
			fields[name] = f.Type
		}
	}
	return fields
}
