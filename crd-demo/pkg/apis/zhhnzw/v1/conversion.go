package v1

// Conversion between v1 and v2, the version the API server stores.
//
// Where these functions live: in the older version's package, converting to
// and from the newer one. That is controller-runtime's layout: the storage
// version is the "hub" every version converts to and from, and each other
// version (a "spoke") carries ConvertTo and ConvertFrom next to its types.
// The kubebuilder and operator-sdk demos will have these two functions as
// those methods. Here nothing calls them for us: the conversion webhook in
// pkg/conversionwebhook decodes what the API server sends, calls them, and
// encodes the result.
//
// v1 has no pod template: every v1 CustomPod runs DefaultTemplate(). For a
// v2 object to survive a read and a write through v1 (kubectl, an old
// client, the v1 controller of an earlier release), the template has to go
// somewhere in the v1 object, and the one place v1 has room for it is an
// annotation:
//
//   - v2 → v1: a template other than DefaultTemplate() is written, as JSON,
//     to the annotation TemplateAnnotation; the default one is not written.
//   - v1 → v2: the annotation, when present, is the template, and is removed
//     (it is v1's stand-in for a field v2 has); without it, the template is
//     DefaultTemplate(), what the v1 object always ran.
//
// So v2 → v1 → v2 gives back the same v2 object, and v1 → v2 → v1 the same
// v1 object. Two caveats, which TemplateAnnotation's comment spells out: the
// annotation's key belongs to the conversion, and a hand-written value is
// read, checked and written back in the form json.Marshal gives it (or not
// at all, if it is the default template).
//
// The functions work on the Go types, as controller-runtime's do. Through
// JSON, that has one visible effect: status.replicas and
// status.readyReplicas have no omitempty, so a CustomPod with no status yet
// comes out of a conversion with both at 0.

import (
	"encoding/json"
	"fmt"
	"slices"

	sigsjson "sigs.k8s.io/json"

	v2 "example.com/k8s-demo/crd-demo/pkg/apis/zhhnzw/v2"
)

// TemplateAnnotation holds, on a v1 CustomPod, the v2 template that v1 has
// no field for, as JSON: {"image":"nginx:1.27","command":["nginx"]}.
//
// The key is reserved: on a v2 object it is not kept through v1 (v2 → v1
// writes the template there, or removes it when the template is the
// default). On a v1 object it must hold a valid template with an image, or
// the conversion to v2, and with it every write through v1, fails with a
// message naming the annotation.
const TemplateAnnotation = "zhhnzw.mock.com/v2-template"

// PodImage is the image every v1 CustomPod's pods run. A tag, not :latest,
// which the kubelet pulls on every start.
const PodImage = "busybox:1.36"

// DefaultTemplate is what a v1 CustomPod runs, written as a v2 template:
// busybox, sleeping for an hour.
func DefaultTemplate() v2.CustomPodTemplate {
	return v2.CustomPodTemplate{Image: PodImage, Command: []string{"sleep", "3600"}}
}

// isDefaultTemplate says whether t is DefaultTemplate(). A nil command and an
// empty one are the same (both are left out of the JSON).
func isDefaultTemplate(t v2.CustomPodTemplate) bool {
	d := DefaultTemplate()
	return t.Image == d.Image && slices.Equal(t.Command, d.Command)
}

// ConvertToV2 converts a v1 CustomPod to v2 (controller-runtime's
// ConvertTo). in is not modified; out shares nothing with it.
func ConvertToV2(in *CustomPod, out *v2.CustomPod) error {
	in = in.DeepCopy()

	// The object's identity and metadata go across unchanged: the API server
	// refuses a converted object whose name, namespace, UID, resourceVersion
	// (... anything in metadata but labels and annotations) differ.
	out.TypeMeta.APIVersion = v2.SchemeGroupVersion.String()
	out.TypeMeta.Kind = "CustomPod"
	out.ObjectMeta = in.ObjectMeta

	// The fields both versions have.
	out.Spec.Replicas = in.Spec.Replicas
	out.Status = v2.CustomPodStatus(in.Status) // the same fields: a Go conversion does it

	// The field only v2 has.
	out.Spec.Template = DefaultTemplate()
	if raw, ok := in.Annotations[TemplateAnnotation]; ok {
		t, err := decodeTemplate(raw)
		if err != nil {
			return fmt.Errorf("annotation %s: %w", TemplateAnnotation, err)
		}
		out.Spec.Template = t
		delete(out.Annotations, TemplateAnnotation)
		if len(out.Annotations) == 0 {
			out.Annotations = nil
		}
	}
	return nil
}

// ConvertFromV2 converts a v2 CustomPod to v1 (controller-runtime's
// ConvertFrom). in is not modified; out shares nothing with it.
func ConvertFromV2(in *v2.CustomPod, out *CustomPod) error {
	in = in.DeepCopy()

	out.TypeMeta.APIVersion = SchemeGroupVersion.String()
	out.TypeMeta.Kind = "CustomPod"
	out.ObjectMeta = in.ObjectMeta

	out.Spec.Replicas = in.Spec.Replicas
	out.Status = CustomPodStatus(in.Status)

	// The template has no v1 field: keep it in the annotation, unless it is
	// what a v1 object runs anyway. Either way, a value the v2 object itself
	// carried under the reserved key is replaced.
	if out.Annotations != nil {
		delete(out.Annotations, TemplateAnnotation)
		if len(out.Annotations) == 0 {
			out.Annotations = nil
		}
	}
	if !isDefaultTemplate(in.Spec.Template) {
		raw, err := json.Marshal(in.Spec.Template)
		if err != nil {
			return fmt.Errorf("encoding spec.template: %w", err)
		}
		if out.Annotations == nil {
			out.Annotations = map[string]string{}
		}
		out.Annotations[TemplateAnnotation] = string(raw)
	}
	return nil
}

// decodeTemplate reads the annotation's value. It is strict: an unknown or
// repeated field ("imag", say), or a template without an image, is an error,
// not a template silently different from what was meant. No schema checks
// the annotation: the v1 schema knows nothing of it, and the API server does
// not validate the v2 object a conversion returns.
func decodeTemplate(raw string) (v2.CustomPodTemplate, error) {
	var t v2.CustomPodTemplate
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
