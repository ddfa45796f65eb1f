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

// Package conversionfuzz makes random CustomPods, v1 and v2, for the tests
// of the conversion: the round trips of ConvertTo and ConvertFrom (v1's
// custompod_conversion_test.go) and of the webhook's JSON (the v2 webhook's
// custompod_fuzz_test.go). Both scaffolds hold this file, the same but for
// the module path (scripts/compare-scaffolds.sh checks it). crd-demo's
// internal/conversionfuzz does the same for its own types: each module
// builds on its own.
//
// randfill fills every field, nested ones included, so that a field added to
// either version and forgotten by the conversion shows up as a difference.
// The fill functions keep the objects to what the API server can hold
// (apimachinery's metadata fuzzer: times in whole seconds, no empty label
// keys, ...), and to the two exceptions TemplateAnnotation's comment gives:
// v2 objects without the reserved key, v1 objects whose annotation, when
// present, is a template in the form json.Marshal writes.
package conversionfuzz

import (
	"encoding/json"

	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"sigs.k8s.io/randfill"

	zhhnzwv1 "example.com/k8s-demo/kubebuilder-demo/api/v1"
	zhhnzwv2 "example.com/k8s-demo/kubebuilder-demo/api/v2"
)

// Filler returns a randfill.Filler that takes its randomness from data: the
// bytes `go test -fuzz` mutates.
func Filler(data []byte) *randfill.Filler {
	codecs := serializer.NewCodecFactory(runtime.NewScheme())
	return randfill.NewFromGoFuzz(data).NilChance(0.2).NumElements(0, 3).
		Funcs(metafuzzer.Funcs(codecs)...).
		Funcs(
			func(t *zhhnzwv2.CustomPodTemplate, c randfill.Continue) {
				c.FillNoCustom(t)
				if t.Image == "" {
					t.Image = "image" // required by the schema
				}
			},
			func(cp *zhhnzwv1.CustomPod, c randfill.Continue) {
				c.FillNoCustom(cp)
				cp.TypeMeta = metav1.TypeMeta{APIVersion: zhhnzwv1.GroupVersion.String(), Kind: "CustomPod"}
				if c.Bool() {
					var t zhhnzwv2.CustomPodTemplate
					c.Fill(&t)
					raw, _ := json.Marshal(t)
					if string(raw) != `{"image":"busybox:1.36","command":["sleep","3600"]}` {
						metav1.SetMetaDataAnnotation(&cp.ObjectMeta, zhhnzwv1.TemplateAnnotation, string(raw))
					}
				}
			},
			func(cp *zhhnzwv2.CustomPod, c randfill.Continue) {
				c.FillNoCustom(cp)
				cp.TypeMeta = metav1.TypeMeta{APIVersion: zhhnzwv2.GroupVersion.String(), Kind: "CustomPod"}
				delete(cp.Annotations, zhhnzwv1.TemplateAnnotation)
				if c.Intn(4) == 0 {
					cp.Spec.Template = zhhnzwv1.DefaultTemplate() // the common case
				}
			},
		)
}

// Seeds are the fuzz targets' seed corpus, and so the random objects a plain
// `go test` checks: 500 inputs, a few milliseconds.
func Seeds() [][]byte {
	const n = 500
	s := make([][]byte, 0, n)
	r := randfill.NewWithSeed(1).NumElements(64, 1024)
	for range n {
		var b []byte
		r.Fill(&b)
		s = append(s, b)
	}
	return s
}
