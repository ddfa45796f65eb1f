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

package apps

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "example.com/k8s-demo/operator-demo/api/apps/v1alpha1"
)

// The API server checks every PodSet against the schema controller-gen wrote
// from the markers in api/apps/v1alpha1/podset_types.go; no controller needed.
var _ = Describe("PodSet validation", func() {
	var namespace string

	BeforeEach(func() {
		namespace = newNamespace(ctx)
	})

	// create sends spec as-is, with strict field validation as kubectl does,
	// as a dry run: the API server validates it but stores nothing (and the
	// controller creates no pods).
	createNamed := func(metadata, spec map[string]any) error {
		metadata["namespace"] = namespace
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": appsv1alpha1.GroupVersion.String(),
			"kind":       "PodSet",
			"metadata":   metadata,
			"spec":       spec,
		}}
		return k8sClient.Create(ctx, u, client.FieldValidation(metav1.FieldValidationStrict), client.DryRunAll)
	}
	create := func(spec map[string]any) error {
		return createNamed(map[string]any{"generateName": "validation-"}, spec)
	}

	size := func(v any) map[string]any { return map[string]any{"size": v} }

	DescribeTable("should refuse a bad spec with a message naming the field",
		func(spec map[string]any, message string) {
			err := create(spec)
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring(message))
		},
		Entry("negative size", size(int64(-1)),
			"spec.size: Invalid value: -1: spec.size in body should be greater than or equal to 0"),
		Entry("size above the maximum", size(int64(101)),
			"spec.size: Invalid value: 101: spec.size in body should be less than or equal to 100"),
		Entry("size given as a string", size("three"),
			`spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"`),
		Entry("no size", map[string]any{},
			"spec.size: Required value"),
		Entry("an unknown field", map[string]any{"size": int64(1), "image": "nginx"},
			`unknown field "spec.image"`),
	)

	It("should accept sizes 0 and 100", func() {
		Expect(create(size(int64(0)))).To(Succeed())
		Expect(create(size(int64(100)))).To(Succeed())
	})

	// The controller labels the pods with the PodSet's name, and a label
	// value has at most 63 characters.
	It("should refuse a name longer than 63 characters", func() {
		Expect(createNamed(map[string]any{"name": strings.Repeat("p", 64)}, size(int64(1)))).To(MatchError(ContainSubstring(
			"metadata.name must be at most 63 characters: it labels the PodSet's pods")))
		Expect(createNamed(map[string]any{"name": strings.Repeat("p", 63)}, size(int64(1)))).To(Succeed())
	})
})
