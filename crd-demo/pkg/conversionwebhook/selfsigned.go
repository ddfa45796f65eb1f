package conversionwebhook

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"time"
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
// alternative names, not its common name. Both last for validity.
//
// Why two certificates rather than one self-signed serving certificate:
// that is how a cluster does it (a CA in caBundle, a serving certificate per
// server), and a CA certificate marked as such is what Go's verifier, the
// API server's, expects to find in a bundle. (client-go's
// util/cert.GenerateSelfSignedCertKey does the same, for a single host;
// here it is written out.)
func SelfSigned(hosts []string, validity time.Duration) (*SelfSignedCertificate, error) {
	if len(hosts) == 0 {
		return nil, fmt.Errorf("no host names or IP addresses for the certificate")
	}
	now := time.Now()
	// An hour back, so that an API server whose clock is a little behind
	// still accepts it.
	notBefore, notAfter := now.Add(-time.Hour), now.Add(validity)

	// The CA: a key, and a certificate that says it may sign others.
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTemplate := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: fmt.Sprintf("custompod-conversion-ca@%d", now.Unix())},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}

	// The serving certificate: the names it is valid for, the use "server
	// authentication", signed by the CA.
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	template := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: hosts[0]},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			template.IPAddresses = append(template.IPAddresses, ip)
		} else {
			template.DNSNames = append(template.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, template, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	return &SelfSignedCertificate{
		CA:   encodePEM("CERTIFICATE", caDER),
		Cert: encodePEM("CERTIFICATE", der),
		Key:  encodePEM("EC PRIVATE KEY", keyDER),
	}, nil
}

func encodePEM(blockType string, der []byte) []byte {
	var b bytes.Buffer
	_ = pem.Encode(&b, &pem.Block{Type: blockType, Bytes: der})
	return b.Bytes()
}

// serial is a random 128-bit serial number, as RFC 5280 recommends.
func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return n
}
