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

package v1

// Conversion between v1 and v2, the version the API server stores: the same
// rules as crd-demo's pkg/apis/zhhnzw/v1/conversion.go, written as
// controller-runtime's conversion.Convertible. v2 is the hub (the v2
// package's custompod_conversion.go); v1, a spoke, converts to and from it,
// and the manager's conversion webhook (/convert, registered by v2's webhook
// package) calls these two methods.
//
// v1 has no pod template: every v1 CustomPod runs DefaultTemplate(). For a
// v2 object to survive a read and a write through v1, the template goes to
// an annotation on the v1 object:
//
//   - v2 → v1: a template other than DefaultTemplate() is written, as JSON,
//     to TemplateAnnotation; the default one is not written.
//   - v1 → v2: the annotation, when present, is the template, and is
//     removed; without it, the template is DefaultTemplate(), what the v1
//     object always ran.
//
// So v2 → v1 → v2 gives back the same v2 object, and v1 → v2 → v1 the same
// v1 object (with the two caveats TemplateAnnotation's comment gives).

import (
	"encoding/json"
	"fmt"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/conversion"
	sigsjson "sigs.k8s.io/json"

	zhhnzwv2 "example.com/k8s-demo/kubebuilder-demo/api/v2"
)

// TemplateAnnotation holds, on a v1 CustomPod, the v2 template that v1 has
// no field for, as JSON: {"image":"busybox:1.36","command":["sleep","60"]}.
//
// The key is reserved: on a v2 object it is not kept through v1 (v2 → v1
// writes the template there, or removes it when the template is the
// default). On a v1 object it must hold a valid template with an image, or
// the conversion to v2, and with it every write through v1, fails with a
// message naming the annotation. A hand-written value is written back in the
// form json.Marshal gives it (or not at all, if it is the default template).
const TemplateAnnotation = "zhhnzw.mock.com/v2-template"

// PodImage is the image every v1 CustomPod's pods run.
const PodImage = "busybox:1.36"

// DefaultTemplate is what a v1 CustomPod runs, written as a v2 template:
// busybox, sleeping for an hour.
func DefaultTemplate() zhhnzwv2.CustomPodTemplate {
	return zhhnzwv2.CustomPodTemplate{Image: PodImage, Command: []string{"sleep", "3600"}}
}

// isDefaultTemplate says whether t is DefaultTemplate(). A nil command and an
// empty one are the same (both are left out of the JSON).
func isDefaultTemplate(t zhhnzwv2.CustomPodTemplate) bool {
	d := DefaultTemplate()
	return t.Image == d.Image && slices.Equal(t.Command, d.Command)
}

var _ conversion.Convertible = &CustomPod{}

// ConvertTo converts this CustomPod (v1) to the Hub version (v2). src is not
// modified; dst shares nothing with it.
func (src *CustomPod) ConvertTo(dstRaw conversion.Hub) error {
	dst, ok := dstRaw.(*zhhnzwv2.CustomPod)
	if !ok {
		return fmt.Errorf("converting a v1 CustomPod to %T: not a v2 CustomPod", dstRaw)
	}
	in := src.DeepCopy()

	// The object's identity and metadata go across unchanged: the API server
	// refuses a converted object whose metadata (but labels and annotations)
	// differ.
	dst.APIVersion = zhhnzwv2.GroupVersion.String()
	dst.Kind = "CustomPod"
	dst.ObjectMeta = in.ObjectMeta

	// The fields both versions have.
	dst.Spec.Replicas = in.Spec.Replicas
	dst.Status = zhhnzwv2.CustomPodStatus(in.Status) // the same fields: a Go conversion does it

	// The field only v2 has.
	dst.Spec.Template = DefaultTemplate()
	if raw, ok := in.Annotations[TemplateAnnotation]; ok {
		t, err := decodeTemplate(raw)
		if err != nil {
			return fmt.Errorf("annotation %s: %w", TemplateAnnotation, err)
		}
		dst.Spec.Template = t
		delete(dst.Annotations, TemplateAnnotation)
		if len(dst.Annotations) == 0 {
			dst.Annotations = nil
		}
	}
	return nil
}

// ConvertFrom converts from the Hub version (v2) to this version (v1).
// srcRaw is not modified; dst shares nothing with it.
func (dst *CustomPod) ConvertFrom(srcRaw conversion.Hub) error {
	src, ok := srcRaw.(*zhhnzwv2.CustomPod)
	if !ok {
		return fmt.Errorf("converting %T to a v1 CustomPod: not a v2 CustomPod", srcRaw)
	}
	in := src.DeepCopy()

	dst.APIVersion = GroupVersion.String()
	dst.Kind = "CustomPod"
	dst.ObjectMeta = in.ObjectMeta

	dst.Spec.Replicas = in.Spec.Replicas
	dst.Status = CustomPodStatus(in.Status)

	// The template has no v1 field: keep it in the annotation, unless it is
	// what a v1 object runs anyway. Either way, a value the v2 object itself
	// carried under the reserved key is replaced.
	if dst.Annotations != nil {
		delete(dst.Annotations, TemplateAnnotation)
		if len(dst.Annotations) == 0 {
			dst.Annotations = nil
		}
	}
	if !isDefaultTemplate(in.Spec.Template) {
		raw, err := json.Marshal(in.Spec.Template)
		if err != nil {
			return fmt.Errorf("encoding spec.template: %w", err)
		}
		if dst.Annotations == nil {
			dst.Annotations = map[string]string{}
		}
		dst.Annotations[TemplateAnnotation] = string(raw)
	}
	return nil
}

// decodeTemplate reads the annotation's value. It is strict: an unknown or
// repeated field, or a template without an image, is an error, not a
// template silently different from what was meant. No schema checks the
// annotation: the v1 schema knows nothing of it, and the API server does not
// validate the v2 object a conversion returns.
func decodeTemplate(raw string) (zhhnzwv2.CustomPodTemplate, error) {
	var t zhhnzwv2.CustomPodTemplate
	strict, err := sigsjson.UnmarshalStrict([]byte(raw), &t, sigsjson.DisallowDuplicateFields, sigsjson.DisallowUnknownFields)
	if err != nil {
		return t, fmt.Errorf("not a template: %w", err)
	}
	if len(strict) > 0 {
		return t, fmt.Errorf("not a template: %w", strict[0])
	}
	if t.Image == "" {
		return t, fmt.Errorf("the template has no image")
	}
	return t, nil
}
