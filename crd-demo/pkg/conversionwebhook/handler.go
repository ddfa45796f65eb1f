package conversionwebhook

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	sigsjson "sigs.k8s.io/json"

	"example.com/k8s-demo/crd-demo/pkg/apis/zhhnzw"
	zhhnzwv1 "example.com/k8s-demo/crd-demo/pkg/apis/zhhnzw/v1"
	zhhnzwv2 "example.com/k8s-demo/crd-demo/pkg/apis/zhhnzw/v2"
)

// Path is where the handler is served, and what the CRD's clientConfig
// names.
const Path = "/convert"

// maxRequestBytes bounds a ConversionReview. The API server sends one object
// for a get or a write, and a whole page of a list (500 objects for kubectl)
// at once; 32 MiB is far above that, and keeps a client that is not the API
// server from making the process read without end.
const maxRequestBytes = 32 << 20

// Handler answers the API server's ConversionReviews for CustomPods. Its
// zero value is ready to use.
type Handler struct{}

var _ http.Handler = Handler{}

// ServeHTTP is one conversion: a POST of a ConversionReview, answered with a
// ConversionReview. An error in the request itself (not JSON, no request in
// the review) gets an HTTP error: with no UID to answer with, the API server
// can only report that the webhook failed. An object that cannot be
// converted gets a Failure in the response, whose message the API server
// passes on to its client.
func (Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	logger := klog.FromContext(r.Context())

	// 1. The API server POSTs JSON. (It names the versions of
	// ConversionReview it speaks in the CRD's conversionReviewVersions;
	// this handler speaks v1 only, so the CRD says [v1].)
	if r.Method != http.MethodPost {
		http.Error(w, "conversion reviews are POSTed", http.StatusMethodNotAllowed)
		return
	}
	if mediaType, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mediaType != "application/json" {
		http.Error(w, fmt.Sprintf("Content-Type %q, want application/json", r.Header.Get("Content-Type")), http.StatusUnsupportedMediaType)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBytes))
	if err != nil {
		http.Error(w, fmt.Sprintf("reading the request: %v", err), http.StatusBadRequest)
		return
	}

	// 2. Decode the review. Its request holds a UID, the version wanted
	// (desiredAPIVersion, "zhhnzw.mock.com/v1") and the objects, each as raw
	// JSON in whatever version it is stored or was sent in.
	var review apiextensionsv1.ConversionReview
	if err := json.Unmarshal(body, &review); err != nil {
		http.Error(w, fmt.Sprintf("decoding the ConversionReview: %v", err), http.StatusBadRequest)
		return
	}
	if review.Request == nil {
		http.Error(w, "the ConversionReview has no request", http.StatusBadRequest)
		return
	}

	// 3. Convert, and answer with the same UID: the API server matches the
	// response to its request by it.
	response := Convert(review.Request)
	if response.Result.Status == metav1.StatusFailure {
		logger.Info("Conversion failed", "uid", review.Request.UID, "desiredAPIVersion", review.Request.DesiredAPIVersion, "message", response.Result.Message)
	} else {
		logger.V(4).Info("Converted", "uid", review.Request.UID, "desiredAPIVersion", review.Request.DesiredAPIVersion, "objects", len(review.Request.Objects))
	}
	out, err := json.Marshal(&apiextensionsv1.ConversionReview{
		// The response names its own kind and version, as any API object.
		TypeMeta: metav1.TypeMeta{APIVersion: apiextensionsv1.SchemeGroupVersion.String(), Kind: "ConversionReview"},
		Response: response,
	})
	if err != nil {
		http.Error(w, fmt.Sprintf("encoding the ConversionReview: %v", err), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out)
}

// Convert converts every object of a ConversionRequest to its
// desiredAPIVersion. It is all or nothing: the first object that fails makes
// the whole response a Failure, with no objects, as the API server expects.
func Convert(req *apiextensionsv1.ConversionRequest) *apiextensionsv1.ConversionResponse {
	resp := &apiextensionsv1.ConversionResponse{UID: req.UID}
	for _, obj := range req.Objects {
		converted, err := convertObject(obj.Raw, req.DesiredAPIVersion)
		if err != nil {
			resp.ConvertedObjects = nil
			resp.Result = metav1.Status{Status: metav1.StatusFailure, Message: err.Error()}
			return resp
		}
		resp.ConvertedObjects = append(resp.ConvertedObjects, runtime.RawExtension{Raw: converted})
	}
	resp.Result = metav1.Status{Status: metav1.StatusSuccess}
	return resp
}

// convertObject converts one object, given as JSON, to the version desired,
// and returns it as JSON. Its errors name the object.
func convertObject(raw []byte, desiredAPIVersion string) ([]byte, error) {
	// a. Read the object's kind, version and name first: they say which Go
	// type to decode into, and name the object in an error.
	var head metav1.PartialObjectMetadata
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, fmt.Errorf("decoding an object: %w", err)
	}
	name := head.Name
	if head.Namespace != "" {
		name = head.Namespace + "/" + name
	}
	from, err := schema.ParseGroupVersion(head.APIVersion)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", head.Kind, name, err)
	}
	to, err := schema.ParseGroupVersion(desiredAPIVersion)
	if err != nil {
		return nil, fmt.Errorf("desiredAPIVersion: %w", err)
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("converting %s %s from %s to %s: %s", head.Kind, name, head.APIVersion, desiredAPIVersion, fmt.Sprintf(format, args...))
	}
	if head.Kind != "CustomPod" || from.Group != zhhnzw.GroupName || to.Group != zhhnzw.GroupName {
		return nil, fail("this webhook converts only %s CustomPods", zhhnzw.GroupName)
	}

	// b. Decode into the Go type of the object's version, convert, encode.
	// Metadata goes through as it came: ObjectMeta holds all of it.
	switch {
	case from.Version == to.Version:
		return raw, nil // nothing to do (the API server does not ask, but may)
	case from.Version == "v1" && to.Version == "v2":
		var in zhhnzwv1.CustomPod
		var out zhhnzwv2.CustomPod
		if err := decodeStrict(raw, &in); err != nil {
			return nil, fail("%v", err)
		}
		if err := zhhnzwv1.ConvertToV2(&in, &out); err != nil {
			return nil, fail("%v", err)
		}
		return json.Marshal(&out)
	case from.Version == "v2" && to.Version == "v1":
		var in zhhnzwv2.CustomPod
		var out zhhnzwv1.CustomPod
		if err := decodeStrict(raw, &in); err != nil {
			return nil, fail("%v", err)
		}
		if err := zhhnzwv1.ConvertFromV2(&in, &out); err != nil {
			return nil, fail("%v", err)
		}
		return json.Marshal(&out)
	default:
		return nil, fail("this webhook knows versions v1 and v2 only")
	}
}

// decodeStrict decodes raw into obj, and fails on a field obj has no place
// for (or a field given twice): the API server prunes fields its schema does
// not know, so an unknown field here means the schema has one these Go types
// lack, and a conversion would drop it without a word.
func decodeStrict(raw []byte, obj any) error {
	strict, err := sigsjson.UnmarshalStrict(raw, obj, sigsjson.DisallowDuplicateFields, sigsjson.DisallowUnknownFields)
	if err != nil {
		return err
	}
	if len(strict) > 0 {
		return fmt.Errorf("%v (the webhook's Go types do not match the CRD's schema)", strict[0])
	}
	return nil
}
