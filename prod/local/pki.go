package local

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// validity of every certificate a local fleet makes: long enough that nobody meets an
// expiry while trying things out, and the state directory is thrown away with `down --purge`.
const validity = 5 * 365 * 24 * time.Hour

// CA is a certificate authority kept as PEM files: it signs the API servers' serving
// certificates and every client certificate of a local fleet.
type CA struct {
	Cert *x509.Certificate
	Key  crypto.Signer
	// CertFile is the CA certificate's PEM file, for --client-ca-file and kubeconfigs.
	CertFile string
}

// NewCA makes a CA and writes ca.crt and ca.key into dir. client-go's cert helper makes
// the self-signed CA; only the leaf certificates below are signed here, because client-go
// offers no helper that signs with a given CA.
func NewCA(dir, name string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("CA key: %w", err)
	}
	cert, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: name}, key)
	if err != nil {
		return nil, fmt.Errorf("CA certificate: %w", err)
	}
	ca := &CA{Cert: cert, Key: key, CertFile: filepath.Join(dir, "ca.crt")}
	if err := writePair(dir, "ca", cert, key); err != nil {
		return nil, err
	}
	return ca, nil
}

// LoadCA reads the ca.crt and ca.key that NewCA wrote into dir.
func LoadCA(dir string) (*CA, error) {
	certs, err := certutil.CertsFromFile(filepath.Join(dir, "ca.crt"))
	if err != nil {
		return nil, fmt.Errorf("read the CA: %w", err)
	}
	k, err := keyutil.PrivateKeyFromFile(filepath.Join(dir, "ca.key"))
	if err != nil {
		return nil, fmt.Errorf("read the CA key: %w", err)
	}
	signer, ok := k.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("CA key in %s is not a signing key", dir)
	}
	return &CA{Cert: certs[0], Key: signer, CertFile: filepath.Join(dir, "ca.crt")}, nil
}

// Pair is a certificate and key written as PEM files.
type Pair struct {
	CertFile, KeyFile string
}

// Serving issues a serving certificate for 127.0.0.1 and localhost, written as
// <name>.crt and <name>.key into dir.
func (ca *CA) Serving(dir, name string) (Pair, error) {
	return ca.issue(dir, name, &x509.Certificate{
		Subject:     pkix.Name{CommonName: name},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
}

// Client issues a client certificate for user in groups (CN and O, as kube-apiserver and
// the fleet API read them), written as <name>.crt and <name>.key into dir.
func (ca *CA) Client(dir, name, user string, groups ...string) (Pair, error) {
	return ca.issue(dir, name, &x509.Certificate{
		Subject:     pkix.Name{CommonName: user, Organization: groups},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
}

func (ca *CA) issue(dir, name string, tmpl *x509.Certificate) (Pair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Pair{}, fmt.Errorf("key of %s: %w", name, err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return Pair{}, err
	}
	now := time.Now()
	tmpl.SerialNumber = serial
	tmpl.NotBefore, tmpl.NotAfter = now.Add(-time.Minute), now.Add(validity)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.Key)
	if err != nil {
		return Pair{}, fmt.Errorf("certificate of %s: %w", name, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return Pair{}, err
	}
	if err := writePair(dir, name, cert, key); err != nil {
		return Pair{}, err
	}
	return Pair{CertFile: filepath.Join(dir, name+".crt"), KeyFile: filepath.Join(dir, name+".key")}, nil
}

// ServiceAccountKey writes an elliptic-curve key for the API server's service-account tokens, which
// signs the tokens `fleet join` requests.
func ServiceAccountKey(dir string) (string, error) {
	pemKey, err := keyutil.MakeEllipticPrivateKeyPEM()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "sa.key")
	return path, os.WriteFile(path, pemKey, 0o600)
}

func writePair(dir, name string, cert *x509.Certificate, key crypto.Signer) error {
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return fmt.Errorf("encode the key of %s: %w", name, err)
	}
	certPEM, err := certutil.EncodeCertificates(cert)
	if err != nil {
		return fmt.Errorf("encode the certificate of %s: %w", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".crt"), certPEM, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name+".key"), keyPEM, 0o600)
}
