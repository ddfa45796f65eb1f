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

package zhhnzw

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	zhhnzwv1 "example.com/k8s-demo/operator-demo/api/zhhnzw/v1"
	zhhnzwv2 "example.com/k8s-demo/operator-demo/api/zhhnzw/v2"
)

// These tests need no controller: the API server itself checks every CustomPod
// against the OpenAPI schema that controller-gen wrote from the markers in
// api/v1/custompod_types.go and api/v2/custompod_types.go. (A v1 CustomPod
// is stored as v2: the suite's manager serves the conversion webhook.)
var _ = Describe("CustomPod validation", func() {
	var namespace string

	BeforeEach(func() {
		namespace = newNamespace(ctx)
	})

	// create sends spec as-is (an unstructured object can carry values that
	// the Go type cannot, such as a string for replicas). It asks for strict
	// field validation, as kubectl does by default: without it the API server
	// drops unknown fields with a warning instead of refusing them.
	createAs := func(apiVersion string, spec map[string]any) (*unstructured.Unstructured, error) {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": apiVersion,
			"kind":       "CustomPod",
			"metadata":   map[string]any{"generateName": "validation-", "namespace": namespace},
			"spec":       spec,
		}}
		return u, k8sClient.Create(ctx, u, client.FieldValidation(metav1.FieldValidationStrict))
	}
	create := func(spec map[string]any) (*unstructured.Unstructured, error) {
		return createAs(zhhnzwv1.GroupVersion.String(), spec)
	}

	replicas := func(v any) map[string]any { return map[string]any{"replicas": v} }

	DescribeTable("should refuse a bad spec with a message naming the field",
		func(spec map[string]any, message string) {
			_, err := create(spec)
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring(message))
		},
		Entry("negative replicas", replicas(int64(-1)),
			"spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0"),
		Entry("replicas above the maximum", replicas(int64(101)),
			"spec.replicas: Invalid value: 101: spec.replicas in body should be less than or equal to 100"),
		Entry("replicas given as a string", replicas("three"),
			`spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"`),
		Entry("a misspelt field", map[string]any{"replica": 3},
			`unknown field "spec.replica"`),
	)

	template := func(t map[string]any) map[string]any { return map[string]any{"template": t} }
	// words is a command of n copies of w.
	words := func(n int, w string) []any {
		c := make([]any, n)
		for i := range c {
			c[i] = w
		}
		return c
	}

	DescribeTable("should refuse a bad v2 template with a message naming the field",
		func(spec map[string]any, message string) {
			_, err := createAs(zhhnzwv2.GroupVersion.String(), spec)
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring(message))
		},
		Entry("no template", map[string]any{"replicas": int64(1)},
			"spec.template: Required value"),
		Entry("a template without an image", template(map[string]any{"command": []any{"sleep", "60"}}),
			"spec.template.image: Required value"),
		Entry("an empty image", template(map[string]any{"image": ""}),
			"spec.template.image in body should be at least 1 chars long"),
		Entry("an image name too long", template(map[string]any{"image": strings.Repeat("a", 256)}),
			"spec.template.image: Too long: may not be more than 255 bytes"),
		Entry("a command that is no list", template(map[string]any{"image": "busybox:1.36", "command": "sleep 60"}),
			"spec.template.command in body must be of type array"),
		Entry("a misspelt template field", template(map[string]any{"image": "busybox:1.36", "args": []any{"60"}}),
			`unknown field "spec.template.args"`),
		// Images no pod can run: the API server refuses a pod whose image
		// starts or ends with whitespace, and the kubelet cannot parse the rest.
		Entry("an image with a leading space", template(map[string]any{"image": " busybox:1.36"}),
			`spec.template.image: Invalid value: " busybox:1.36": must be an image reference`),
		Entry("an image with a trailing space", template(map[string]any{"image": "busybox:1.36 "}),
			`spec.template.image: Invalid value: "busybox:1.36 ": must be an image reference`),
		Entry("an image with a space inside", template(map[string]any{"image": "busy box"}),
			`spec.template.image: Invalid value: "busy box": must be an image reference`),
		Entry("an upper-case repository", template(map[string]any{"image": "BusyBox:1.36"}),
			`spec.template.image: Invalid value: "BusyBox:1.36": must be an image reference`),
		Entry("an empty tag", template(map[string]any{"image": "busybox:"}),
			`spec.template.image: Invalid value: "busybox:": must be an image reference`),
		Entry("an empty path component", template(map[string]any{"image": "registry.example.com//busybox"}),
			`spec.template.image: Invalid value: "registry.example.com//busybox": must be an image reference`),
		Entry("a digest too short", template(map[string]any{"image": "busybox@sha256:abc"}),
			`spec.template.image: Invalid value: "busybox@sha256:abc": must be an image reference`),
		Entry("a command of 65 words", template(map[string]any{"image": "busybox:1.36", "command": words(65, "x")}),
			"spec.template.command: Too many: 65: must have at most 64 items"),
		Entry("a word of 4097 characters", template(map[string]any{"image": "busybox:1.36", "command": []any{"sh", "-c", strings.Repeat("x", 4097)}}),
			"spec.template.command[2]: Too long: may not be more than 4096 bytes"),
	)

	DescribeTable("should take any image reference",
		func(image string) {
			_, err := createAs(zhhnzwv2.GroupVersion.String(), template(map[string]any{"image": image}))
			Expect(err).NotTo(HaveOccurred())
		},
		Entry("a name", "busybox"),
		Entry("a registry with a port, a path and a tag", "localhost:5001/team/operator-demo:e2e"),
		Entry("an upper-case registry", "Registry.Example.com/app"),
		Entry("an IPv6 registry", "[fd00::1]:5000/busybox"),
		Entry("separators", "a.b_c__d---e/f:G_1.x-y"),
		Entry("a tag and a digest", "kindest/node:v1.37.0@sha256:a1ed56cfb0e7b93589bdf97c8cd566405a265939e3620fc4f5de89adff580ae5"),
	)

	It("should take a command at its bounds", func() {
		_, err := createAs(zhhnzwv2.GroupVersion.String(), template(map[string]any{"image": "busybox:1.36",
			"command": append(words(63, "x"), strings.Repeat("x", 4096))}))
		Expect(err).NotTo(HaveOccurred())
	})

	// The controller labels the pods with the CustomPod's name, and a label
	// value has at most 63 characters.
	It("should refuse a name longer than 63 characters, in either version", func() {
		for apiVersion, spec := range map[string]map[string]any{
			zhhnzwv1.GroupVersion.String(): {},
			zhhnzwv2.GroupVersion.String(): template(map[string]any{"image": "busybox:1.36"}),
		} {
			u := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": apiVersion,
				"kind":       "CustomPod",
				"metadata":   map[string]any{"name": strings.Repeat("c", 64), "namespace": namespace},
				"spec":       spec,
			}}
			Expect(k8sClient.Create(ctx, u, client.DryRunAll)).To(MatchError(ContainSubstring(
				"metadata.name must be at most 63 characters")), apiVersion)
			u.SetName(strings.Repeat("c", 63))
			Expect(k8sClient.Create(ctx, u, client.DryRunAll)).To(Succeed(), apiVersion)
		}
	})

	It("should default a v2 CustomPod's replicas to 1, and take a template with an image only", func() {
		u, err := createAs(zhhnzwv2.GroupVersion.String(), template(map[string]any{"image": "busybox:1.36"}))
		Expect(err).NotTo(HaveOccurred())
		replicas, found, err := unstructured.NestedInt64(u.Object, "spec", "replicas")
		Expect(err).NotTo(HaveOccurred())
		Expect(found).To(BeTrue())
		Expect(replicas).To(Equal(int64(1)))
	})

	It("should default replicas to 1", func() {
		u, err := create(map[string]any{})
		Expect(err).NotTo(HaveOccurred())
		replicas, found, err := unstructured.NestedInt64(u.Object, "spec", "replicas")
		Expect(err).NotTo(HaveOccurred())
		Expect(found).To(BeTrue())
		Expect(replicas).To(Equal(int64(1)))
	})

	It("should refuse a scale above the maximum through the scale subresource", func() {
		cp := &zhhnzwv1.CustomPod{
			ObjectMeta: metav1.ObjectMeta{Name: "scale-validation", Namespace: namespace},
			Spec:       zhhnzwv1.CustomPodSpec{Replicas: ptr.To[int32](0)},
		}
		Expect(k8sClient.Create(ctx, cp)).To(Succeed())
		scale := &autoscalingv1.Scale{
			ObjectMeta: metav1.ObjectMeta{Name: cp.Name, Namespace: cp.Namespace},
			Spec:       autoscalingv1.ScaleSpec{Replicas: 101},
		}
		err := k8sClient.SubResource("scale").Update(ctx, cp, client.WithSubResourceBody(scale))
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("spec.replicas in body should be less than or equal to 100"))
	})
})
