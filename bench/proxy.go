package main

import (
	"crypto/tls"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/cert"
)

// countingProxy stands between one process and the API server and counts
// the requests it makes, by verb and resource. The process is unchanged: it
// gets a kubeconfig whose server is the proxy, which adds the credentials.
// Counting outside the process is what lets the three implementations, and
// the plain loop, be measured the same way.
type countingProxy struct {
	server *http.Server
	addr   string
	caPEM  []byte // what a client trusts the proxy's certificate by

	mu     sync.Mutex
	counts map[string]int // "verb resource", e.g. "create pods"
	// compressed counts the responses the API server sent compressed, by
	// request (watches included) and encoding: "watch pods (gzip)".
	compressed map[string]int
}

func startCountingProxy(cfg *rest.Config) (*countingProxy, error) {
	// The request goes on as the process sent it. Go's HTTP client asks for
	// gzip on a request that does not say, and inflates the answer itself:
	// the API server would compress for a process that asked it not to.
	cfg = rest.CopyConfig(cfg)
	cfg.DisableCompression = true
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("API server transport: %w", err)
	}
	target, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, fmt.Errorf("API server address %q: %w", cfg.Host, err)
	}
	p := &countingProxy{counts: map[string]int{}, compressed: map[string]int{}}
	rp := &httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.SetURL(target) },
		Transport: transport,
		// Watches are streams: pass every event on as it comes.
		FlushInterval: -1,
		// A process that stops cancels its watches: not worth a log line.
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if r.Context().Err() == nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
			}
		},
	}
	// TLS, as an API server speaks: client-go honours a process's
	// DisableCompression only on a connection with TLS (over plain HTTP it
	// takes Go's default transport, which asks for gzip).
	certPEM, keyPEM, err := cert.GenerateSelfSignedCertKey("127.0.0.1", nil, nil)
	if err != nil {
		return nil, fmt.Errorf("the proxy's certificate: %w", err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("the proxy's certificate: %w", err)
	}
	p.caPEM = certPEM // the certificate and the CA that signed it
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p.addr = l.Addr().String()
	p.server = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := verbOf(r) + " " + resourceOf(r.URL.Path)
		sw := &statusWriter{ResponseWriter: w, code: http.StatusOK, proxy: p, key: key}
		if strings.HasPrefix(key, "watch ") {
			p.count(key) // a stream: counted when it opens
			rp.ServeHTTP(sw, r)
			return
		}
		rp.ServeHTTP(sw, r)
		// A conflict is a request made on a stale view: a create of a
		// name that exists, an update of an old resourceVersion. It is
		// counted apart, so that "create pods" is the pods made.
		if sw.code == http.StatusConflict {
			key += conflictSuffix
		}
		p.count(key)
	}), TLSConfig: &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}}
	go func() { _ = p.server.ServeTLS(l, "", "") }()
	return p, nil
}

// conflictSuffix marks the requests the API server refused with 409.
const conflictSuffix = " (409 conflict)"

func (p *countingProxy) count(key string) { p.add(p.counts, key) }

// add counts key in m, one of the proxy's maps.
func (p *countingProxy) add(m map[string]int, key string) {
	p.mu.Lock()
	m[key]++
	p.mu.Unlock()
}

// Snapshot returns a copy of the counts so far.
func (p *countingProxy) Snapshot() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.counts)
}

// Compressed returns a copy of the compressed responses' counts so far.
func (p *countingProxy) Compressed() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.compressed)
}

// statusWriter remembers the status code of the response it passes on, and
// counts it if the API server compressed it.
type statusWriter struct {
	http.ResponseWriter
	code  int
	proxy *countingProxy
	key   string
}

func (w *statusWriter) WriteHeader(code int) {
	w.code = code
	if enc := w.Header().Get("Content-Encoding"); enc != "" {
		w.proxy.add(w.proxy.compressed, w.key+" ("+enc+")")
	}
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the real writer's Flush.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Close stops the proxy, cutting the process's watches.
func (p *countingProxy) Close() { _ = p.server.Close() }

// WriteKubeconfig writes a kubeconfig that reaches the API server through
// the proxy, with no credentials of its own.
func (p *countingProxy) WriteKubeconfig(path string) error {
	c := clientcmdapi.NewConfig()
	c.Clusters["bench"] = &clientcmdapi.Cluster{Server: "https://" + p.addr, CertificateAuthorityData: p.caPEM}
	c.AuthInfos["bench"] = &clientcmdapi.AuthInfo{}
	c.Contexts["bench"] = &clientcmdapi.Context{Cluster: "bench", AuthInfo: "bench"}
	c.CurrentContext = "bench"
	if err := os.MkdirAll(dirOf(path), 0o755); err != nil {
		return err
	}
	return clientcmd.WriteToFile(*c, path)
}

func dirOf(path string) string {
	if i := strings.LastIndex(path, "/"); i > 0 {
		return path[:i]
	}
	return "."
}

// verbOf names a request the way the API server's audit log does.
func verbOf(r *http.Request) string {
	switch r.Method {
	case http.MethodGet:
		if r.URL.Query().Get("watch") == "true" || r.URL.Query().Get("watch") == "1" {
			return "watch"
		}
		if isCollection(r.URL.Path) {
			return "list"
		}
		return "get"
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		if isCollection(r.URL.Path) {
			return "deletecollection"
		}
		return "delete"
	}
	return strings.ToLower(r.Method)
}

// resourceSegments strips /api/v1 or /apis/GROUP/VERSION and a namespace
// from a path: what is left is resource[/name[/subresource]].
func resourceSegments(path string) []string {
	s := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(s) >= 2 && s[0] == "api":
		s = s[2:]
	case len(s) >= 3 && s[0] == "apis":
		s = s[3:]
	default:
		return nil // discovery, /healthz, /version...
	}
	if len(s) >= 3 && s[0] == "namespaces" {
		s = s[2:]
	}
	return s
}

func isCollection(path string) bool { return len(resourceSegments(path)) == 1 }

func resourceOf(path string) string {
	s := resourceSegments(path)
	switch len(s) {
	case 0:
		return "discovery"
	case 1, 2:
		return s[0]
	default:
		return s[0] + "/" + s[2]
	}
}

// requestCounts is the difference between two snapshots.
type requestCounts map[string]int

func diffCounts(after, before map[string]int) requestCounts {
	d := requestCounts{}
	for k, v := range after {
		if n := v - before[k]; n > 0 {
			d[k] = n
		}
	}
	return d
}

// Total counts every request but watches, which are long-lived streams.
func (c requestCounts) Total() int {
	n := 0
	for k, v := range c {
		if !strings.HasPrefix(k, "watch ") {
			n += v
		}
	}
	return n
}

// Writes counts the requests that change something.
func (c requestCounts) Writes() int {
	n := 0
	for k, v := range c {
		switch strings.SplitN(k, " ", 2)[0] {
		case "create", "update", "patch", "delete", "deletecollection":
			n += v
		}
	}
	return n
}

func (c requestCounts) String() string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d", k, c[k])
	}
	return b.String()
}
