package serverkit

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"os"
	"strings"
	"time"
)

// HandshakeTimeout: a connection whose TLS handshake takes longer is dropped.
const HandshakeTimeout = 10 * time.Second

// tlsNames are the names the certificate is valid for, as in the Rust servers.
var tlsNames = []string{"localhost", "127.0.0.1", "::1"}

// SelfSignedTLS makes a fresh ECDSA P-256 key and a self-signed certificate for
// localhost, 127.0.0.1 and ::1, prints its SHA-256 fingerprint on stderr, and
// returns a TLS 1.2/1.3 configuration serving it (the framework adds its ALPN ids).
func SelfSignedTLS() *tls.Config {
	cert, err := selfSigned()
	if err != nil {
		Fail("cannot make a certificate: %v", err)
	}
	sum := sha256.Sum256(cert.Certificate[0])
	hexes := make([]string, len(sum))
	for i, b := range sum {
		hexes[i] = fmt.Sprintf("%02X", b)
	}
	fmt.Fprintf(os.Stderr, "tls: self-signed certificate for %s, SHA-256 fingerprint %s\n",
		strings.Join(tlsNames, ", "), strings.Join(hexes, ":"))
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
}

func selfSigned() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return tls.Certificate{}, err
	}
	template := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "localhost", Organization: []string{"callbench (self-signed)"}},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().AddDate(10, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, name := range tlsNames {
		if ip := net.ParseIP(name); ip != nil {
			template.IPAddresses = append(template.IPAddresses, ip)
		} else {
			template.DNSNames = append(template.DNSNames, name)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
