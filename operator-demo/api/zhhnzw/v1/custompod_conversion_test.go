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
package v1_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "example.com/k8s-demo/operator-demo/api/zhhnzw/v1"
	v2 "example.com/k8s-demo/operator-demo/api/zhhnzw/v2"
	"example.com/k8s-demo/operator-demo/internal/conversionfuzz"
)

var (
	v1Type = metav1.TypeMeta{APIVersion: "zhhnzw.mock.com/v1", Kind: "CustomPod"}
	v2Type = metav1.TypeMeta{APIVersion: "zhhnzw.mock.com/v2", Kind: "CustomPod"}
	meta   = metav1.ObjectMeta{
		Name: "sample", Namespace: "demo", UID: "uid-1", ResourceVersion: "42", Generation: 3,
		Labels: map[string]string{"app": "demo"},
	}
	status = v1.CustomPodStatus{
		Replicas: 2, ReadyReplicas: 1, PodNames: []string{"sample-a", "sample-b"},
		Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "PodsNotReady", Message: "1 of 2 pods ready"}},
	}
	nginx = v2.CustomPodTemplate{Image: "nginx:1.27", Command: []string{"nginx", "-g", "daemon off;"}}
)

// convertToV2 and convertFromV2 call the methods the conversion webhook
// calls, as crd-demo's functions of the same rules.
func convertToV2(in *v1.CustomPod, out *v2.CustomPod) error   { return in.ConvertTo(out) }
func convertFromV2(in *v2.CustomPod, out *v1.CustomPod) error { return out.ConvertFrom(in) }

// withAnnotations returns meta with annotations added.
func withAnnotations(kv ...string) metav1.ObjectMeta {
	m := *meta.DeepCopy()
	m.Annotations = map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m.Annotations[kv[i]] = kv[i+1]
	}
	return m
}

func TestConvertToV2(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      v1.CustomPod
		want    v2.CustomPod
		wantErr string
	}{{
		name: "no annotation: the busybox every v1 CustomPod runs",
		in:   v1.CustomPod{TypeMeta: v1Type, ObjectMeta: meta, Spec: v1.CustomPodSpec{Replicas: ptr.To[int32](2)}, Status: status},
		want: v2.CustomPod{TypeMeta: v2Type, ObjectMeta: meta,
			Spec:   v2.CustomPodSpec{Replicas: ptr.To[int32](2), Template: v2.CustomPodTemplate{Image: "busybox:1.36", Command: []string{"sleep", "3600"}}},
			Status: v2.CustomPodStatus(status)},
	}, {
		name: "no replicas stays no replicas",
		in:   v1.CustomPod{TypeMeta: v1Type, ObjectMeta: meta},
		want: v2.CustomPod{TypeMeta: v2Type, ObjectMeta: meta, Spec: v2.CustomPodSpec{Template: v1.DefaultTemplate()}},
	}, {
		name: "the annotation is the template, and goes; the other annotations stay",
		in: v1.CustomPod{TypeMeta: v1Type, ObjectMeta: withAnnotations(v1.TemplateAnnotation, `{"image":"nginx:1.27","command":["nginx","-g","daemon off;"]}`, "note", "kept"),
			Spec: v1.CustomPodSpec{Replicas: ptr.To[int32](1)}},
		want: v2.CustomPod{TypeMeta: v2Type, ObjectMeta: withAnnotations("note", "kept"),
			Spec: v2.CustomPodSpec{Replicas: ptr.To[int32](1), Template: nginx}},
	}, {
		name: "the annotation alone: no annotations left",
		in:   v1.CustomPod{TypeMeta: v1Type, ObjectMeta: withAnnotations(v1.TemplateAnnotation, `{"image":"nginx:1.27"}`)},
		want: v2.CustomPod{TypeMeta: v2Type, ObjectMeta: meta, Spec: v2.CustomPodSpec{Template: v2.CustomPodTemplate{Image: "nginx:1.27"}}},
	}, {
		name:    "not JSON",
		in:      v1.CustomPod{ObjectMeta: withAnnotations(v1.TemplateAnnotation, `nginx`)},
		wantErr: "annotation zhhnzw.mock.com/v2-template: not a template: invalid character",
	}, {
		name:    "an unknown field",
		in:      v1.CustomPod{ObjectMeta: withAnnotations(v1.TemplateAnnotation, `{"image":"nginx","args":["-g"]}`)},
		wantErr: `annotation zhhnzw.mock.com/v2-template: not a template: unknown field "args"`,
	}, {
		name:    "a field twice",
		in:      v1.CustomPod{ObjectMeta: withAnnotations(v1.TemplateAnnotation, `{"image":"nginx","image":"busybox"}`)},
		wantErr: `annotation zhhnzw.mock.com/v2-template: not a template: duplicate field "image"`,
	}, {
		name:    "no image",
		in:      v1.CustomPod{ObjectMeta: withAnnotations(v1.TemplateAnnotation, `{"command":["sh"]}`)},
		wantErr: "annotation zhhnzw.mock.com/v2-template: the template has no image",
	}, {
		name:    "null",
		in:      v1.CustomPod{ObjectMeta: withAnnotations(v1.TemplateAnnotation, `null`)},
		wantErr: "annotation zhhnzw.mock.com/v2-template: the template has no image",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.in.DeepCopy()
			var got v2.CustomPod
			err := convertToV2(&tc.in, &got)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("v2 (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, &tc.in); diff != "" {
				t.Errorf("the v1 object was modified (-before +after):\n%s", diff)
			}
		})
	}
}

func TestConvertFromV2(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   v2.CustomPod
		want v1.CustomPod
	}{{
		name: "the default template: no annotation",
		in: v2.CustomPod{TypeMeta: v2Type, ObjectMeta: meta,
			Spec:   v2.CustomPodSpec{Replicas: ptr.To[int32](2), Template: v1.DefaultTemplate()},
			Status: v2.CustomPodStatus(status)},
		want: v1.CustomPod{TypeMeta: v1Type, ObjectMeta: meta, Spec: v1.CustomPodSpec{Replicas: ptr.To[int32](2)}, Status: status},
	}, {
		name: "another template: in the annotation, as JSON",
		in: v2.CustomPod{TypeMeta: v2Type, ObjectMeta: withAnnotations("note", "kept"),
			Spec: v2.CustomPodSpec{Template: nginx}},
		want: v1.CustomPod{TypeMeta: v1Type,
			ObjectMeta: withAnnotations("note", "kept", v1.TemplateAnnotation, `{"image":"nginx:1.27","command":["nginx","-g","daemon off;"]}`)},
	}, {
		name: "busybox:1.36 with its own entrypoint is not the default",
		in:   v2.CustomPod{ObjectMeta: meta, Spec: v2.CustomPodSpec{Template: v2.CustomPodTemplate{Image: "busybox:1.36"}}},
		want: v1.CustomPod{TypeMeta: v1Type, ObjectMeta: withAnnotations(v1.TemplateAnnotation, `{"image":"busybox:1.36"}`)},
	}, {
		name: "the reserved key on a v2 object is the conversion's: replaced",
		in:   v2.CustomPod{ObjectMeta: withAnnotations(v1.TemplateAnnotation, "mine"), Spec: v2.CustomPodSpec{Template: nginx}},
		want: v1.CustomPod{TypeMeta: v1Type,
			ObjectMeta: withAnnotations(v1.TemplateAnnotation, `{"image":"nginx:1.27","command":["nginx","-g","daemon off;"]}`)},
	}, {
		name: "... or removed, with the default template",
		in:   v2.CustomPod{ObjectMeta: withAnnotations(v1.TemplateAnnotation, "mine"), Spec: v2.CustomPodSpec{Template: v1.DefaultTemplate()}},
		want: v1.CustomPod{TypeMeta: v1Type, ObjectMeta: meta},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.in.DeepCopy()
			var got v1.CustomPod
			if err := convertFromV2(&tc.in, &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("v1 (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, &tc.in); diff != "" {
				t.Errorf("the v2 object was modified (-before +after):\n%s", diff)
			}
		})
	}
}

// The round trips, over random objects (internal/conversionfuzz says which).

// checkV1RoundTrip converts a random v1 object to v2 and back.
func checkV1RoundTrip(t *testing.T, data []byte) {
	var in v1.CustomPod
	conversionfuzz.Filler(data).Fill(&in)
	var mid v2.CustomPod
	if err := convertToV2(&in, &mid); err != nil {
		t.Fatalf("v1 → v2: %v\nv1: %#v", err, in)
	}
	var out v1.CustomPod
	if err := convertFromV2(&mid, &out); err != nil {
		t.Fatalf("v2 → v1: %v\nv2: %#v", err, mid)
	}
	// Semantic.DeepEqual: a nil map or slice and an empty one are the same
	// (JSON writes neither).
	if !apiequality.Semantic.DeepEqual(&in, &out) {
		t.Errorf("v1 → v2 → v1 lost data (-v1 +after the round trip):\n%s", cmp.Diff(&in, &out))
	}
}

// checkV2RoundTrip converts a random v2 object to v1 and back.
func checkV2RoundTrip(t *testing.T, data []byte) {
	var in v2.CustomPod
	conversionfuzz.Filler(data).Fill(&in)
	var mid v1.CustomPod
	if err := convertFromV2(&in, &mid); err != nil {
		t.Fatalf("v2 → v1: %v\nv2: %#v", err, in)
	}
	var out v2.CustomPod
	if err := convertToV2(&mid, &out); err != nil {
		t.Fatalf("v1 → v2: %v\nv1: %#v", err, mid)
	}
	if !apiequality.Semantic.DeepEqual(&in, &out) {
		t.Errorf("v2 → v1 → v2 lost data (-v2 +after the round trip):\n%s", cmp.Diff(&in, &out))
	}
}

// FuzzV1RoundTrip: go test -run '^$' -fuzz FuzzV1RoundTrip -fuzztime 30s ./api/zhhnzw/v1
func FuzzV1RoundTrip(f *testing.F) {
	for _, s := range conversionfuzz.Seeds() {
		f.Add(s)
	}
	f.Fuzz(checkV1RoundTrip)
}

// FuzzV2RoundTrip: go test -run '^$' -fuzz FuzzV2RoundTrip -fuzztime 30s ./api/zhhnzw/v1
func FuzzV2RoundTrip(f *testing.F) {
	for _, s := range conversionfuzz.Seeds() {
		f.Add(s)
	}
	f.Fuzz(checkV2RoundTrip)
}
