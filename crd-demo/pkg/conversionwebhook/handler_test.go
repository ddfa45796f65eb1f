package conversionwebhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	zhhnzwv1 "example.com/k8s-demo/crd-demo/pkg/apis/zhhnzw/v1"
	zhhnzwv2 "example.com/k8s-demo/crd-demo/pkg/apis/zhhnzw/v2"
)

// Objects as the API server sends them: JSON, with metadata.
const (
	v1Plain = `{"apiVersion":"zhhnzw.mock.com/v1","kind":"CustomPod","metadata":{"name":"plain","namespace":"demo","uid":"u1","resourceVersion":"7","labels":{"a":"b"}},"spec":{"replicas":2},"status":{"replicas":2,"readyReplicas":1}}`
	v1Nginx = `{"apiVersion":"zhhnzw.mock.com/v1","kind":"CustomPod","metadata":{"name":"nginx","namespace":"demo","annotations":{"zhhnzw.mock.com/v2-template":"{\"image\":\"nginx:1.27\"}"}},"spec":{"replicas":1}}`
	v2Nginx = `{"apiVersion":"zhhnzw.mock.com/v2","kind":"CustomPod","metadata":{"name":"nginx","namespace":"demo"},"spec":{"replicas":1,"template":{"image":"nginx:1.27"}}}`
	v1Bad   = `{"apiVersion":"zhhnzw.mock.com/v1","kind":"CustomPod","metadata":{"name":"bad","namespace":"demo","annotations":{"zhhnzw.mock.com/v2-template":"nginx"}},"spec":{}}`
)

// review is a ConversionReview request, as JSON.
func review(uid, desired string, objects ...string) string {
	var raws []runtime.RawExtension
	for _, o := range objects {
		raws = append(raws, runtime.RawExtension{Raw: []byte(o)})
	}
	b, err := json.Marshal(apiextensionsv1.ConversionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "ConversionReview"},
		Request:  &apiextensionsv1.ConversionRequest{UID: types.UID(uid), DesiredAPIVersion: desired, Objects: raws},
	})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// post sends body to the handler and returns the status code and the body.
func post(t *testing.T, method, contentType, body string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(method, Path, strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	rec := httptest.NewRecorder()
	Handler{}.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

func decodeResponse(t *testing.T, body string) *apiextensionsv1.ConversionResponse {
	t.Helper()
	var r apiextensionsv1.ConversionReview
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("decoding %s: %v", body, err)
	}
	if r.APIVersion != "apiextensions.k8s.io/v1" || r.Kind != "ConversionReview" || r.Response == nil {
		t.Fatalf("not a ConversionReview response: %s", body)
	}
	return r.Response
}

func TestHandlerConverts(t *testing.T) {
	code, body := post(t, http.MethodPost, "application/json", review("uid-1", "zhhnzw.mock.com/v2", v1Plain, v1Nginx))
	if code != http.StatusOK {
		t.Fatalf("HTTP %d: %s", code, body)
	}
	resp := decodeResponse(t, body)
	if resp.UID != "uid-1" || resp.Result.Status != metav1.StatusSuccess || len(resp.ConvertedObjects) != 2 {
		t.Fatalf("uid %q, result %+v, %d objects; want uid-1, Success, 2", resp.UID, resp.Result, len(resp.ConvertedObjects))
	}
	var plain, nginx zhhnzwv2.CustomPod
	if err := json.Unmarshal(resp.ConvertedObjects[0].Raw, &plain); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(resp.ConvertedObjects[1].Raw, &nginx); err != nil {
		t.Fatal(err)
	}
	want := zhhnzwv2.CustomPod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "zhhnzw.mock.com/v2", Kind: "CustomPod"},
		ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: "demo", UID: "u1", ResourceVersion: "7", Labels: map[string]string{"a": "b"}},
		Spec:       zhhnzwv2.CustomPodSpec{Replicas: ptr.To[int32](2), Template: zhhnzwv1.DefaultTemplate()},
		Status:     zhhnzwv2.CustomPodStatus{Replicas: 2, ReadyReplicas: 1},
	}
	if diff := cmp.Diff(want, plain); diff != "" {
		t.Errorf("plain (-want +got):\n%s", diff)
	}
	if nginx.Spec.Template.Image != "nginx:1.27" || nginx.Annotations != nil {
		t.Errorf("nginx: template %+v, annotations %v; want nginx:1.27 and no annotations", nginx.Spec.Template, nginx.Annotations)
	}

	// And back.
	code, body = post(t, http.MethodPost, "application/json; charset=utf-8", review("uid-2", "zhhnzw.mock.com/v1", v2Nginx))
	resp = decodeResponse(t, body)
	if code != http.StatusOK || resp.UID != "uid-2" || resp.Result.Status != metav1.StatusSuccess || len(resp.ConvertedObjects) != 1 {
		t.Fatalf("HTTP %d, %s", code, body)
	}
	var v1 zhhnzwv1.CustomPod
	if err := json.Unmarshal(resp.ConvertedObjects[0].Raw, &v1); err != nil {
		t.Fatal(err)
	}
	if v1.APIVersion != "zhhnzw.mock.com/v1" || v1.Annotations[zhhnzwv1.TemplateAnnotation] != `{"image":"nginx:1.27"}` {
		t.Errorf("v1: %+v", v1)
	}
}

// TestHandlerFailures: what the API server can be answered with a review
// gets a Failure with the request's UID and a message naming the object;
// what is no review gets an HTTP error.
func TestHandlerFailures(t *testing.T) {
	for _, tc := range []struct {
		name        string
		method      string
		contentType string
		body        string
		code        int
		message     string // in the Failure, or in the HTTP error
	}{
		{"a GET", http.MethodGet, "", "", http.StatusMethodNotAllowed, "conversion reviews are POSTed"},
		{"not JSON", http.MethodPost, "text/plain", "hello", http.StatusUnsupportedMediaType, `Content-Type "text/plain", want application/json`},
		{"bad JSON", http.MethodPost, "application/json", "{", http.StatusBadRequest, "decoding the ConversionReview"},
		{"no request", http.MethodPost, "application/json", `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview"}`, http.StatusBadRequest, "the ConversionReview has no request"},
		{"a bad annotation fails the whole review", http.MethodPost, "application/json",
			review("uid-bad", "zhhnzw.mock.com/v2", v1Plain, v1Bad), http.StatusOK,
			"converting CustomPod demo/bad from zhhnzw.mock.com/v1 to zhhnzw.mock.com/v2: annotation zhhnzw.mock.com/v2-template: not a template"},
		{"a field the Go types lack", http.MethodPost, "application/json",
			review("uid-unknown", "zhhnzw.mock.com/v2", `{"apiVersion":"zhhnzw.mock.com/v1","kind":"CustomPod","metadata":{"name":"new"},"spec":{"replicas":1,"paused":true}}`), http.StatusOK,
			`converting CustomPod new from zhhnzw.mock.com/v1 to zhhnzw.mock.com/v2: unknown field "spec.paused" (the webhook's Go types do not match the CRD's schema)`},
		{"another kind", http.MethodPost, "application/json",
			review("uid-kind", "zhhnzw.mock.com/v2", `{"apiVersion":"zhhnzw.mock.com/v1","kind":"CustomDeployment","metadata":{"name":"d","namespace":"demo"}}`), http.StatusOK,
			"converting CustomDeployment demo/d from zhhnzw.mock.com/v1 to zhhnzw.mock.com/v2: this webhook converts only zhhnzw.mock.com CustomPods"},
		{"another version", http.MethodPost, "application/json",
			review("uid-v3", "zhhnzw.mock.com/v3", v1Plain), http.StatusOK,
			"converting CustomPod demo/plain from zhhnzw.mock.com/v1 to zhhnzw.mock.com/v3: this webhook knows versions v1 and v2 only"},
		{"an object that is not one", http.MethodPost, "application/json",
			review("uid-array", "zhhnzw.mock.com/v2", `[1]`), http.StatusOK, "decoding an object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := post(t, tc.method, tc.contentType, tc.body)
			if code != tc.code {
				t.Fatalf("HTTP %d, want %d: %s", code, tc.code, body)
			}
			if code != http.StatusOK {
				if !strings.Contains(body, tc.message) {
					t.Errorf("body %q does not mention %q", body, tc.message)
				}
				return
			}
			resp := decodeResponse(t, body)
			var req apiextensionsv1.ConversionReview
			_ = json.Unmarshal([]byte(tc.body), &req)
			if resp.UID != req.Request.UID {
				t.Errorf("UID %q, want the request's %q", resp.UID, req.Request.UID)
			}
			if resp.Result.Status != metav1.StatusFailure || !strings.Contains(resp.Result.Message, tc.message) || resp.ConvertedObjects != nil {
				t.Errorf("result %+v with %d objects; want a Failure mentioning %q and no objects", resp.Result, len(resp.ConvertedObjects), tc.message)
			}
		})
	}
}

func TestHandlerSameVersion(t *testing.T) {
	_, body := post(t, http.MethodPost, "application/json", review("uid-same", "zhhnzw.mock.com/v1", v1Plain))
	resp := decodeResponse(t, body)
	if resp.Result.Status != metav1.StatusSuccess || len(resp.ConvertedObjects) != 1 || string(resp.ConvertedObjects[0].Raw) != v1Plain {
		t.Errorf("got %+v, want the object unchanged", resp)
	}
}

// TestServeSelfSigned serves the handler over HTTPS with a SelfSigned
// certificate and calls it as the API server does: trusting only the CA.
func TestServeSelfSigned(t *testing.T) {
	cert, err := SelfSigned([]string{"127.0.0.1", "localhost"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	getCertificate, err := StaticCertificate(cert.Cert, cert.Key)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error)
	go func() { served <- (&Server{GetCertificate: getCertificate}).Serve(ctx, ln) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()

	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(cert.CA) {
		t.Fatal("no CA certificate in the bundle")
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	for _, host := range []string{"127.0.0.1", "localhost"} {
		resp, err := client.Post("https://"+net.JoinHostPort(host, port)+Path, "application/json",
			bytes.NewBufferString(review("uid-tls", "zhhnzw.mock.com/v2", v1Plain)))
		if err != nil {
			t.Fatalf("%s: %v", host, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if r := decodeResponse(t, string(body)); r.UID != "uid-tls" || r.Result.Status != metav1.StatusSuccess {
			t.Errorf("%s: %s", host, body)
		}
	}
	// A certificate for other names is refused.
	other, err := SelfSigned([]string{"webhook.example"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	otherPool := x509.NewCertPool()
	otherPool.AppendCertsFromPEM(other.CA)
	client.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: otherPool}}
	if _, err := client.Get("https://" + ln.Addr().String() + "/healthz"); err == nil || !strings.Contains(err.Error(), "certificate signed by unknown authority") {
		t.Errorf("a client trusting another CA: %v, want an unknown authority", err)
	}
}

func TestOptions(t *testing.T) {
	for _, tc := range []struct {
		name    string
		o       Options
		cc      ClientConfig
		hosts   []string
		wantErr string
	}{
		{name: "off", o: Options{}},
		{name: "a local process", o: Options{Port: 9443}, cc: ClientConfig{URL: "https://127.0.0.1:9443/convert"}, hosts: []string{"127.0.0.1"}},
		{name: "a URL", o: Options{Port: 9443, URL: "https://host.docker.internal:9443/convert"},
			cc: ClientConfig{URL: "https://host.docker.internal:9443/convert"}, hosts: []string{"host.docker.internal"}},
		{name: "a service", o: Options{Port: 9443, Service: "crd-demo-system/custompod-webhook"},
			cc:    ClientConfig{Service: &apiextensionsv1.ServiceReference{Namespace: "crd-demo-system", Name: "custompod-webhook"}},
			hosts: []string{"custompod-webhook.crd-demo-system.svc"}},
		{name: "a service port and hosts", o: Options{Port: 9443, Service: "ns/svc:8443", Hosts: "svc.ns.svc,svc.ns.svc.cluster.local"},
			cc:    ClientConfig{Service: &apiextensionsv1.ServiceReference{Namespace: "ns", Name: "svc", Port: ptr.To[int32](8443)}},
			hosts: []string{"svc.ns.svc", "svc.ns.svc.cluster.local"}},
		{name: "files", o: Options{Port: 9443, CertFile: "tls.crt", KeyFile: "tls.key"}},
		{name: "a file alone", o: Options{Port: 9443, CertFile: "tls.crt"}, wantErr: "go together"},
		{name: "files and a URL", o: Options{Port: 9443, CertFile: "tls.crt", KeyFile: "tls.key", URL: "https://x/convert"}, wantErr: "self-signed mode"},
		{name: "URL and service", o: Options{Port: 9443, URL: "https://x/convert", Service: "a/b"}, wantErr: "give one"},
		{name: "http", o: Options{Port: 9443, URL: "http://127.0.0.1:9443/convert"}, wantErr: "want https://"},
		{name: "a service without namespace", o: Options{Port: 9443, Service: "svc"}, wantErr: "NAMESPACE/NAME"},
		{name: "no port", o: Options{Port: 70000}, wantErr: "not a port"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.o.Check()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Check: %v, want an error mentioning %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.o.Enabled() || !tc.o.selfSigned() {
				return
			}
			cc, hosts, _ := tc.o.clientConfig()
			if diff := cmp.Diff(tc.cc, cc); diff != "" {
				t.Errorf("client config (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.hosts, hosts); diff != "" {
				t.Errorf("hosts (-want +got):\n%s", diff)
			}
		})
	}
}
