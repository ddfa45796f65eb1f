package conversionwebhook

import (
	"fmt"
	"net"
	"time"

	certutil "k8s.io/client-go/util/cert"
)

// SelfSignedCertificate is a serving certificate and the CA that signed it,
// all three PEM-encoded: the certificate and key for the server, the CA for
// the CRD's caBundle.
type SelfSignedCertificate struct {
	CA   []byte
	Cert []byte
	Key  []byte
}

// SelfSigned makes a CA and, signed by it, a serving certificate valid for
// hosts: each an IP address (127.0.0.1) or a DNS name
// (custompod-webhook.crd-demo-system.svc), the names the API server dials.
// The API server checks the name against the certificate's subject
// alternative names, not its common name. Both last for validity, from an
// hour back (an API server whose clock is a little behind still accepts
// them).
//
// Why two certificates rather than one self-signed serving certificate:
// that is how a cluster does it (a CA in caBundle, a serving certificate per
// server), and a CA certificate marked as such is what Go's verifier, the
// API server's, expects to find in a bundle. client-go's util/cert makes
// both, as the API server does for its own self-signed serving certificate;
// here they are only split apart.
func SelfSigned(hosts []string, validity time.Duration) (*SelfSignedCertificate, error) {
	if len(hosts) == 0 {
		return nil, fmt.Errorf("no host names or IP addresses for the certificate")
	}
	// MaxAge counts from NotBefore, an hour back.
	opts := certutil.SelfSignedCertKeyOptions{Host: hosts[0], MaxAge: validity + time.Hour}
	for _, h := range hosts[1:] {
		if ip := net.ParseIP(h); ip != nil {
			opts.AlternateIPs = append(opts.AlternateIPs, ip)
		} else {
			opts.AlternateDNS = append(opts.AlternateDNS, h)
		}
	}
	chain, key, err := certutil.GenerateSelfSignedCertKeyWithOptions(opts)
	if err != nil {
		return nil, err
	}
	// chain is the serving certificate, then the CA: the server sends both
	// (harmless), the CRD's caBundle gets the CA alone.
	certs, err := certutil.ParseCertsPEM(chain)
	if err != nil || len(certs) != 2 {
		return nil, fmt.Errorf("client-go's self-signed certificate: want a certificate and its CA, got %d (%v)", len(certs), err)
	}
	ca, err := certutil.EncodeCertificates(certs[1])
	if err != nil {
		return nil, err
	}
	return &SelfSignedCertificate{CA: ca, Cert: chain, Key: key}, nil
}
