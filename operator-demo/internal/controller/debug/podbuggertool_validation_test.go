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

package debug

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	debugv1alpha1 "example.com/k8s-demo/operator-demo/api/debug/v1alpha1"
)

// The API server checks every PodBuggerTool against the schema and the CEL
// rules controller-gen wrote from the markers in
// api/debug/v1alpha1/podbuggertool_types.go; no controller needed.
var _ = Describe("PodBuggerTool validation", func() {
	var namespace string

	BeforeEach(func() {
		namespace = newNamespace(ctx)
	})

	// create sends spec as-is, with strict field validation as kubectl does,
	// as a dry run: the API server validates it but stores nothing.
	create := func(spec map[string]any) error {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": debugv1alpha1.GroupVersion.String(),
			"kind":       "PodBuggerTool",
			"metadata":   map[string]any{"generateName": "validation-", "namespace": namespace},
			"spec":       spec,
		}}
		return k8sClient.Create(ctx, u, client.FieldValidation(metav1.FieldValidationStrict), client.DryRunAll)
	}
	labels := map[string]any{"matchLabels": map[string]any{"app": "web"}}
	expr := func(op string, values ...any) map[string]any {
		e := map[string]any{"key": "app", "operator": op}
		if values != nil {
			e["values"] = values
		}
		return map[string]any{"matchExpressions": []any{e}}
	}

	DescribeTable("should refuse a bad spec with a message naming the field",
		func(spec map[string]any, message string) {
			err := create(spec)
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring(message))
		},
		Entry("no image", map[string]any{"selector": labels},
			"spec.image: Required value"),
		Entry("an empty image", map[string]any{"selector": labels, "image": ""},
			"spec.image: Invalid value: \"\": spec.image in body should be at least 1 chars long"),
		Entry("no selector", map[string]any{"image": "busybox"},
			"spec.selector: Required value"),
		Entry("an empty selector, which would match every pod", map[string]any{"selector": map[string]any{}, "image": "busybox"},
			"spec.selector: Invalid value: an empty selector would match every pod in the namespace"),
		Entry("an unknown operator", map[string]any{"selector": expr("Equals", "web"), "image": "busybox"},
			"spec.selector: Invalid value: a matchExpressions operator must be In, NotIn, Exists or DoesNotExist"),
		Entry("In without values", map[string]any{"selector": expr("In"), "image": "busybox"},
			"spec.selector: Invalid value: In and NotIn need values; Exists and DoesNotExist take none"),
		Entry("Exists with values", map[string]any{"selector": expr("Exists", "web"), "image": "busybox"},
			"spec.selector: Invalid value: In and NotIn need values; Exists and DoesNotExist take none"),
		Entry("an unknown field", map[string]any{"selector": labels, "image": "busybox", "command": "sh"},
			`unknown field "spec.command"`),
	)

	It("should accept matchLabels, and each operator used as it must be", func() {
		Expect(create(map[string]any{"selector": labels, "image": "busybox"})).To(Succeed())
		Expect(create(map[string]any{"selector": expr("In", "web", "db"), "image": "busybox", "targetContainer": "app"})).To(Succeed())
		Expect(create(map[string]any{"selector": expr("NotIn", "web"), "image": "busybox"})).To(Succeed())
		Expect(create(map[string]any{"selector": expr("Exists"), "image": "busybox"})).To(Succeed())
		Expect(create(map[string]any{"selector": expr("DoesNotExist"), "image": "busybox"})).To(Succeed())
	})
})
