package conversionwebhook

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"k8s.io/klog/v2"
)

// Server serves the conversion webhook over HTTPS: Handler at /convert, and
// /healthz, for a readiness probe.
type Server struct {
	// GetCertificate returns the serving certificate for each TLS handshake:
	// see StaticCertificate and FileCertificate.
	GetCertificate func(*tls.ClientHelloInfo) (*tls.Certificate, error)
}

// Serve answers on ln until ctx ends, then lets the requests in flight
// finish (for up to 5 seconds). Listening first, in the caller, lets it know
// the port is open before it points the CRD at it.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	logger := klog.FromContext(ctx)
	mux := http.NewServeMux()
	mux.Handle(Path, Handler{})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	srv := &http.Server{
		Handler: mux,
		// Requests carry the process's logger, for the handler's log lines.
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{
			// The API server speaks TLS 1.3; 1.2 is the oldest still sound.
			MinVersion:     tls.VersionTLS12,
			GetCertificate: s.GetCertificate,
		},
	}

	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		// A new context: ctx is already done, and Shutdown must wait a little.
		shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdownCtx)
	}()
	logger.Info("Serving the conversion webhook", "address", ln.Addr().String(), "path", Path)
	// Certificate and key come from TLSConfig.GetCertificate: no files here.
	err := srv.ServeTLS(ln, "", "")
	if errors.Is(err, http.ErrServerClosed) {
		<-done
		return nil
	}
	return err
}

// StaticCertificate serves one certificate, made once (SelfSigned).
func StaticCertificate(certPEM, keyPEM []byte) (func(*tls.ClientHelloInfo) (*tls.Certificate, error), error) {
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	return func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return &cert, nil }, nil
}

// FileCertificate serves the certificate and key in two PEM files, and reads
// them again when either changes: cert-manager renews a certificate by
// rewriting the Secret mounted there, and the kubelet updates the files
// without restarting the pod. (controller-runtime's certwatcher does the same
// with fsnotify; a stat per handshake is enough here.) It fails at once if
// the files cannot be loaded now.
func FileCertificate(certFile, keyFile string) (func(*tls.ClientHelloInfo) (*tls.Certificate, error), error) {
	w := &fileCertificate{certFile: certFile, keyFile: keyFile}
	if _, err := w.get(nil); err != nil {
		return nil, err
	}
	return w.get, nil
}

type fileCertificate struct {
	certFile, keyFile string

	mu      sync.Mutex
	cert    *tls.Certificate
	modTime [2]time.Time
}

func (w *fileCertificate) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	var modTime [2]time.Time
	for i, f := range []string{w.certFile, w.keyFile} {
		st, err := os.Stat(f)
		if err != nil {
			return nil, err
		}
		modTime[i] = st.ModTime()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cert != nil && modTime == w.modTime {
		return w.cert, nil
	}
	cert, err := tls.LoadX509KeyPair(w.certFile, w.keyFile)
	if err != nil {
		if w.cert != nil {
			// Half-written during a renewal: keep the old one until both
			// files agree.
			return w.cert, nil
		}
		return nil, fmt.Errorf("loading the serving certificate: %w", err)
	}
	w.cert, w.modTime = &cert, modTime
	return w.cert, nil
}
