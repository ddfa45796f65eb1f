package conversionwebhook

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"example.com/k8s-demo/crd-demo/internal/conversionfuzz"
	zhhnzwv1 "example.com/k8s-demo/crd-demo/pkg/apis/zhhnzw/v1"
	zhhnzwv2 "example.com/k8s-demo/crd-demo/pkg/apis/zhhnzw/v2"
)

// The round trips again, through what the webhook does with the API
// server's JSON: decode (strictly), convert, encode. Besides the conversion
// functions, this checks that every field survives the webhook's JSON, in
// metadata too. (pkg/apis/zhhnzw/v1 fuzzes the functions alone.)

// convertJSON converts obj to version through Convert, as a ConversionReview
// of one object, and decodes the result into out.
func convertJSON(t *testing.T, obj any, version string, out any) {
	t.Helper()
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	resp := Convert(&apiextensionsv1.ConversionRequest{UID: "fuzz", DesiredAPIVersion: "zhhnzw.mock.com/" + version,
		Objects: []runtime.RawExtension{{Raw: raw}}})
	if resp.Result.Status != metav1.StatusSuccess {
		t.Fatalf("to %s: %s\nobject: %s", version, resp.Result.Message, raw)
	}
	if err := json.Unmarshal(resp.ConvertedObjects[0].Raw, out); err != nil {
		t.Fatal(err)
	}
}

// FuzzReviewV1RoundTrip: go test -run '^$' -fuzz FuzzReviewV1RoundTrip -fuzztime 30s ./pkg/conversionwebhook
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

// FuzzReviewV2RoundTrip: go test -run '^$' -fuzz FuzzReviewV2RoundTrip -fuzztime 30s ./pkg/conversionwebhook
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
