package main

import (
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

func TestRequestsAreNamedAsTheAuditLogNamesThem(t *testing.T) {
	for _, c := range []struct{ method, url, want string }{
		{"GET", "/api/v1/namespaces/ns/pods?labelSelector=a", "list pods"},
		{"GET", "/api/v1/namespaces/ns/pods?watch=true&resourceVersion=5", "watch pods"},
		{"GET", "/api/v1/namespaces/ns/pods/p1", "get pods"},
		{"POST", "/api/v1/namespaces/ns/pods", "create pods"},
		{"PUT", "/apis/zhhnzw.mock.com/v1/namespaces/ns/custompods/cp/status", "update custompods/status"},
		{"PATCH", "/apis/zhhnzw.mock.com/v1/namespaces/ns/custompods/cp/status", "patch custompods/status"},
		{"DELETE", "/api/v1/namespaces/ns/pods", "deletecollection pods"},
		{"DELETE", "/api/v1/namespaces/ns/pods/p1", "delete pods"},
		{"POST", "/apis/events.k8s.io/v1/namespaces/ns/events", "create events"},
		{"GET", "/api/v1/nodes", "list nodes"},
		{"GET", "/apis", "get discovery"},
	} {
		r := httptest.NewRequest(c.method, c.url, nil)
		if got := verbOf(r) + " " + resourceOf(r.URL.Path); got != c.want {
			t.Errorf("%s %s: got %q, want %q", c.method, c.url, got, c.want)
		}
	}
}

// TestConflictsAreCountedApart sends requests through the proxy to a server
// that refuses one create with 409, as the API server refuses a name that
// exists: "create pods" counts the pods made, the refusal has its own line.
func TestConflictsAreCountedApart(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.Contains(r.URL.RawQuery, "dup") {
			w.WriteHeader(http.StatusConflict)
			return
		}
		w.WriteHeader(http.StatusCreated)
	}))
	defer upstream.Close()
	p, err := startCountingProxy(&rest.Config{Host: upstream.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, q := range []string{"", "", "dup", "watch=true"} {
		method := http.MethodPost
		if q == "watch=true" {
			method = http.MethodGet
		}
		req, _ := http.NewRequest(method, "https://"+p.addr+"/api/v1/namespaces/ns/pods?"+q, nil)
		resp, err := proxyClient(t, p).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	c := requestCounts(p.Snapshot())
	want := "create pods 2, create pods (409 conflict) 1, watch pods 1"
	if got := c.String(); got != want {
		t.Errorf("counts: got %q, want %q", got, want)
	}
	if c.Total() != 3 || c.Writes() != 3 {
		t.Errorf("Total %d and Writes %d, want 3 and 3: a refused create is still a request and a write", c.Total(), c.Writes())
	}
}

// TestTheProxyAddsNoGzip sends requests through the proxy, with a client made
// from the kubeconfig the bench gives a process, to a TLS server that
// compresses what a client asks it to, as the API server compresses the
// watches an informer starts with its list. A client with DisableCompression
// reaches the server as it sent its request: the proxy's own client adds no
// Accept-Encoding (Go's would, and inflate the answer itself), and the
// proxy speaks TLS, without which client-go ignores DisableCompression. A
// client that asks gets a compressed response, counted apart.
func TestTheProxyAddsNoGzip(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	upstream := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		enc := r.Header.Get("Accept-Encoding")
		mu.Lock()
		asked = append(asked, enc)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		body := []byte(`{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[]}`)
		if enc != "gzip" {
			_, _ = w.Write(body)
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		gz := gzip.NewWriter(w)
		_, _ = gz.Write(body)
		_ = gz.Close()
	}))
	defer upstream.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: upstream.Certificate().Raw})
	p, err := startCountingProxy(&rest.Config{Host: upstream.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := p.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	for _, disable := range []bool{true, false} {
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		cfg.DisableCompression = disable
		client, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := client.CoreV1().Pods("ns").List(context.Background(), metav1.ListOptions{}); err != nil {
			t.Fatalf("DisableCompression=%v: %v", disable, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"", "gzip"}; !slices.Equal(asked, want) {
		t.Errorf("Accept-Encoding that reached the server, DisableCompression true then false: %q, want %q", asked, want)
	}
	if got, want := requestCounts(p.Compressed()).String(), "list pods (gzip) 1"; got != want {
		t.Errorf("compressed: got %q, want %q", got, want)
	}
}

func TestCountsLeaveWatchesOut(t *testing.T) {
	c := diffCounts(map[string]int{"watch pods": 3, "list pods": 4, "create pods": 5, "get pods": 1},
		map[string]int{"list pods": 1, "watch pods": 1})
	if got := c.Total(); got != 9 {
		t.Errorf("Total = %d, want 3 lists + 5 creates + 1 get = 9 (%v)", got, c)
	}
	if got := c.Writes(); got != 5 {
		t.Errorf("Writes = %d, want 5 (%v)", got, c)
	}
}

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	if got := percentile(d, 0.5); got != 50*time.Millisecond {
		t.Errorf("p50 = %s, want 50ms", got)
	}
	if got := percentile(d, 0.99); got != 99*time.Millisecond {
		t.Errorf("p99 = %s, want 99ms", got)
	}
	if got := percentile(d[:1], 0.99); got != time.Millisecond {
		t.Errorf("p99 of one = %s, want 1ms", got)
	}
}

func TestTheGeneratedSectionIsFoundAndReplaced(t *testing.T) {
	// Each section's markers, the other's left alone.
	mb, me := markers(mainSection)
	cb, ce := markers(curveSection)
	p := t.TempDir() + "/bench.md"
	if err := os.WriteFile(p, []byte("intro\n"+mb+"\nold\n"+me+"\nmiddle\n"+cb+"\nold curve\n"+ce+"\nafter\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := replaceGenerated(p, curveSection, "new curve\n", false); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	if want := "intro\n" + mb + "\nold\n" + me + "\nmiddle\n" + cb + "\nnew curve\n" + ce + "\nafter\n"; string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
	// The committed pages must keep the sections' markers, or make bench
	// would refuse to start.
	for page, section := range map[string]string{"../docs/bench.md": mainSection, "../docs/bench-curve.md": curveSection,
		"../docs/comparison.md": summarySection, "../docs/zh/comparison.md": summarySection} {
		if err := replaceGenerated(page, section, "", true); err != nil {
			t.Error(err)
		}
	}
}

// proxyClient is an HTTP client that trusts the proxy's certificate.
func proxyClient(t *testing.T, p *countingProxy) *http.Client {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(p.caPEM) {
		t.Fatal("the proxy's CA: no certificate")
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
}
