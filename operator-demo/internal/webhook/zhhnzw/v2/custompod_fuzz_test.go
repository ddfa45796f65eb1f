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

package v2

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	zhhnzwv1 "example.com/k8s-demo/operator-demo/api/zhhnzw/v1"
	zhhnzwv2 "example.com/k8s-demo/operator-demo/api/zhhnzw/v2"
	"example.com/k8s-demo/operator-demo/internal/conversionfuzz"
)

// The round trips through what the manager's /convert does with the API
// server's JSON: controller-runtime's handler decodes each object into the
// scheme's type, calls ConvertTo or ConvertFrom, and encodes the result.
// Besides the methods (api/v1 fuzzes them alone), this checks that every
// field survives that JSON, metadata included.

// convertHandler is the handler SetupCustomPodWebhookWithManager registers,
// without a manager: the hub and the spoke found through the scheme.
var convertHandler = func() http.Handler {
	scheme := runtime.NewScheme()
	if err := zhhnzwv1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	if err := zhhnzwv2.AddToScheme(scheme); err != nil {
		panic(err)
	}
	return conversion.NewWebhookHandler(scheme, conversion.NewRegistry())
}()

// convertJSON converts obj to version through the handler, as a
// ConversionReview of one object, and decodes the result into out.
func convertJSON(t *testing.T, obj any, version string, out any) {
	t.Helper()
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	review, err := json.Marshal(&apiextensionsv1.ConversionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "ConversionReview"},
		Request: &apiextensionsv1.ConversionRequest{UID: "fuzz", DesiredAPIVersion: "zhhnzw.mock.com/" + version,
			Objects: []runtime.RawExtension{{Raw: raw}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	convertHandler.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/convert", bytes.NewReader(review)))
	var resp apiextensionsv1.ConversionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || resp.Response == nil {
		t.Fatalf("to %s: HTTP %d, %s (%v)", version, rec.Code, rec.Body, err)
	}
	if resp.Response.Result.Status != metav1.StatusSuccess {
		t.Fatalf("to %s: %s\nobject: %s", version, resp.Response.Result.Message, raw)
	}
	if err := json.Unmarshal(resp.Response.ConvertedObjects[0].Raw, out); err != nil {
		t.Fatal(err)
	}
}

// FuzzReviewV1RoundTrip: go test -run '^$' -fuzz FuzzReviewV1RoundTrip -fuzztime 30s ./internal/webhook/zhhnzw/v2
func FuzzReviewV1RoundTrip(f *testing.F) {
	for _, s := range conversionfuzz.Seeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var in, out zhhnzwv1.CustomPod
		conversionfuzz.Filler(data).Fill(&in)
		var mid zhhnzwv2.CustomPod
		convertJSON(t, &in, "v2", &mid)
		convertJSON(t, &mid, "v1", &out)
		if !apiequality.Semantic.DeepEqual(&in, &out) {
			t.Errorf("v1 → v2 → v1 through the webhook lost data (-v1 +after):\n%s", cmp.Diff(&in, &out))
		}
	})
}

// FuzzReviewV2RoundTrip: go test -run '^$' -fuzz FuzzReviewV2RoundTrip -fuzztime 30s ./internal/webhook/zhhnzw/v2
func FuzzReviewV2RoundTrip(f *testing.F) {
	for _, s := range conversionfuzz.Seeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var in, out zhhnzwv2.CustomPod
		conversionfuzz.Filler(data).Fill(&in)
		var mid zhhnzwv1.CustomPod
		convertJSON(t, &in, "v1", &mid)
		convertJSON(t, &mid, "v2", &out)
		if !apiequality.Semantic.DeepEqual(&in, &out) {
			t.Errorf("v2 → v1 → v2 through the webhook lost data (-v2 +after):\n%s", cmp.Diff(&in, &out))
		}
	})
}
