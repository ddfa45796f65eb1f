package conversionwebhook

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// Options are the webhook's flags, for cmd/custompod-controller.
//
// Two modes:
//
//   - --tls-cert-file and --tls-private-key-file: serve that certificate
//     (cert-manager's, mounted from a Secret). The CRD's clientConfig and
//     caBundle are someone else's job (cert-manager's CA injector, or the
//     manifests).
//   - otherwise, self-signed: make a CA and a certificate for
//     --conversion-hosts, and patch the CRD to trust that CA and call
//     --conversion-url (a process outside the cluster; by default
//     https://127.0.0.1:PORT/convert) or --conversion-service (a Service in
//     the cluster).
type Options struct {
	Port        int
	BindAddress string
	CertFile    string
	KeyFile     string
	URL         string
	Service     string
	Hosts       string
}

// AddFlags registers the webhook's flags.
func (o *Options) AddFlags(fs *flag.FlagSet) {
	fs.IntVar(&o.Port, "conversion-port", 0, "Serve the CustomPod conversion webhook (v1 <-> v2) over HTTPS on this port. 0: do not serve it (the API server then cannot convert: reading or writing the version not stored fails).")
	fs.StringVar(&o.BindAddress, "conversion-bind-address", "", "The address the conversion webhook listens on. Default: every interface.")
	fs.StringVar(&o.CertFile, "tls-cert-file", "", "The conversion webhook's serving certificate (PEM), re-read when it changes. With --tls-private-key-file; without them, a self-signed one is made and the CRD patched to trust it.")
	fs.StringVar(&o.KeyFile, "tls-private-key-file", "", "The key of --tls-cert-file (PEM).")
	fs.StringVar(&o.URL, "conversion-url", "", "Self-signed mode: the URL the API server calls the webhook at, written into the CRD. Default: https://127.0.0.1:PORT/convert, for a controller run beside a local API server (kwok, envtest).")
	fs.StringVar(&o.Service, "conversion-service", "", "Self-signed mode, in a cluster: NAMESPACE/NAME[:PORT] of the Service in front of the webhook (port 443 by default), written into the CRD instead of a URL.")
	fs.StringVar(&o.Hosts, "conversion-hosts", "", "Self-signed mode: comma-separated DNS names and IP addresses for the certificate. Default: the host of --conversion-url, or NAME.NAMESPACE.svc of --conversion-service.")
}

// Enabled says whether the webhook is to be served.
func (o *Options) Enabled() bool { return o.Port != 0 }

// selfSigned says whether the webhook makes its own certificate.
func (o *Options) selfSigned() bool { return o.CertFile == "" && o.KeyFile == "" }

// Check reports flags that cannot work together.
func (o *Options) Check() error {
	if o.Port < 0 || o.Port > 65535 {
		return fmt.Errorf("--conversion-port %d is not a port", o.Port)
	}
	if !o.Enabled() {
		return nil
	}
	if (o.CertFile == "") != (o.KeyFile == "") {
		return fmt.Errorf("--tls-cert-file and --tls-private-key-file go together")
	}
	if !o.selfSigned() {
		if o.URL != "" || o.Service != "" || o.Hosts != "" {
			return fmt.Errorf("--conversion-url, --conversion-service and --conversion-hosts are for the self-signed mode, not with --tls-cert-file")
		}
		return nil
	}
	if o.URL != "" && o.Service != "" {
		return fmt.Errorf("--conversion-url and --conversion-service: give one")
	}
	_, _, err := o.clientConfig()
	return err
}

// clientConfig returns what to write into the CRD, and the certificate's
// hosts, in the self-signed mode.
func (o *Options) clientConfig() (ClientConfig, []string, error) {
	var hosts []string
	if o.Hosts != "" {
		hosts = strings.Split(o.Hosts, ",")
	}
	if o.Service != "" {
		nsName, port, hasPort := strings.Cut(o.Service, ":")
		ns, name, ok := strings.Cut(nsName, "/")
		if !ok || ns == "" || name == "" {
			return ClientConfig{}, nil, fmt.Errorf("--conversion-service %q: want NAMESPACE/NAME[:PORT]", o.Service)
		}
		svc := &apiextensionsv1.ServiceReference{Namespace: ns, Name: name}
		if hasPort {
			p, err := strconv.ParseInt(port, 10, 32)
			if err != nil {
				return ClientConfig{}, nil, fmt.Errorf("--conversion-service %q: %w", o.Service, err)
			}
			svc.Port = ptr.To(int32(p))
		}
		if hosts == nil {
			// The name the API server dials for a service reference.
			hosts = []string{name + "." + ns + ".svc"}
		}
		return ClientConfig{Service: svc}, hosts, nil
	}
	u := o.URL
	if u == "" {
		u = "https://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(o.Port)) + Path
	}
	parsed, err := url.Parse(u)
	if err != nil || parsed.Scheme != "https" || parsed.Hostname() == "" {
		return ClientConfig{}, nil, fmt.Errorf("--conversion-url %q: want https://HOST[:PORT]/PATH", u)
	}
	if hosts == nil {
		hosts = []string{parsed.Hostname()}
	}
	return ClientConfig{URL: u}, hosts, nil
}

// Start starts the webhook: it listens, starts serving, and in the
// self-signed mode then points the CRD at it (the API server may call at
// once). It returns when the webhook answers; the returned channel receives
// Serve's result when ctx ends or serving fails.
func (o *Options) Start(ctx context.Context, cfg *rest.Config, fieldManager string) (<-chan error, error) {
	logger := klog.FromContext(ctx)
	var getCertificate func(*tls.ClientHelloInfo) (*tls.Certificate, error)
	var cert *SelfSignedCertificate
	var cc ClientConfig
	if o.selfSigned() {
		var hosts []string
		var err error
		if cc, hosts, err = o.clientConfig(); err != nil {
			return nil, err
		}
		// A year: the certificate lives in memory, and a restart makes a new one.
		if cert, err = SelfSigned(hosts, 365*24*time.Hour); err != nil {
			return nil, fmt.Errorf("making the webhook's certificate: %w", err)
		}
		if getCertificate, err = StaticCertificate(cert.Cert, cert.Key); err != nil {
			return nil, err
		}
		logger.Info("Made a self-signed certificate for the conversion webhook", "hosts", hosts)
	} else {
		var err error
		if getCertificate, err = FileCertificate(o.CertFile, o.KeyFile); err != nil {
			return nil, err
		}
	}

	ln, err := net.Listen("tcp", net.JoinHostPort(o.BindAddress, strconv.Itoa(o.Port)))
	if err != nil {
		return nil, fmt.Errorf("conversion webhook: %w", err)
	}
	errc := make(chan error, 1)
	go func() { errc <- (&Server{GetCertificate: getCertificate}).Serve(ctx, ln) }()

	if cert != nil {
		client, err := apiextensionsclient.NewForConfig(cfg)
		if err != nil {
			return nil, err
		}
		if err := PatchCRD(ctx, client, cert.CA, cc, fieldManager); err != nil {
			return nil, err
		}
		if cc.URL != "" {
			logger.Info("Pointed the CRD at the conversion webhook", "crd", CRDName, "url", cc.URL)
		} else {
			logger.Info("Pointed the CRD at the conversion webhook", "crd", CRDName, "service", klog.KRef(cc.Service.Namespace, cc.Service.Name))
		}
	}
	return errc, nil
}
