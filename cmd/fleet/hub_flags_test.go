package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// writeTLSFiles writes a self-signed certificate and its key for 127.0.0.1 and returns
// their paths.
func writeTLSFiles(t *testing.T) (cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "fleet-api"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cert, key = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return cert, key
}

// TestHubChecksFlagsBeforeConnecting: `fleet hub` checks its unit and fleet API flags (the
// TLS files and the bind address included) before it tries the API server, which may take
// --api-server-wait, and exits 2 with a message naming the flag. The API server here never
// answers, so a check made after connecting would show as exit 1 at the test's deadline.
func TestHubChecksFlagsBeforeConnecting(t *testing.T) {
	kubeconfig := writeKubeconfig(t, &rest.Config{Host: "https://" + freeAddr(t)}) // nothing listens there
	cert, key := writeTLSFiles(t)
	notPEM := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	api := func(addr string, extra ...string) []string {
		return append([]string{"--fleet-api-bind-address", addr, "--fleet-api-tls-cert-file", cert, "--fleet-api-tls-key-file", key}, extra...)
	}

	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--machine-ttl", "0s"}, exitInvalid, "--machine-ttl 0s: must be positive"},
		{[]string{"--engine-lease-ttl", "-1s"}, exitInvalid, "--engine-lease-ttl -1s: must be positive"},
		{[]string{"--fleet-api-page-size", "0"}, exitInvalid, "--fleet-api-page-size 0: must be 1 to 65535"},
		{[]string{"--fleet-api-page-size", "65536"}, exitInvalid, "--fleet-api-page-size 65536: must be 1 to 65535"},
		{[]string{"--fleet-api-idle-timeout", "0s"}, exitInvalid, "--fleet-api-idle-timeout 0s: must be positive"},
		{[]string{"--fleet-api-read-timeout", "-1s"}, exitInvalid, "--fleet-api-read-timeout -1s: must be positive"},
		{[]string{"--fleet-api-read-header-timeout", "0s"}, exitInvalid, "--fleet-api-read-header-timeout 0s: must be positive"},
		{[]string{"--fleet-api-write-timeout", "0s"}, exitInvalid, "--fleet-api-write-timeout 0s: must be positive"},
		{[]string{"--fleet-api-authn-cache-ttl", "0s"}, exitInvalid, "--fleet-api-authn-cache-ttl 0s: must be positive"},
		{[]string{"--fleet-api-authz-deny-cache-ttl", "-1s"}, exitInvalid, "--fleet-api-authz-deny-cache-ttl -1s: must be positive"},
		{[]string{"--metrics-secure=false", "--metrics-cert-dir", "/etc/metrics"}, exitInvalid, "--metrics-cert-dir /etc/metrics: needs --metrics-secure"},
		{[]string{"--fleet-api-max-conns", "0"}, exitInvalid, "--fleet-api-max-conns 0: must be 1 or more"},
		{[]string{"--fleet-api-max-conns-per-client", "0"}, exitInvalid, "--fleet-api-max-conns-per-client 0: must be 1 to --fleet-api-max-conns (512)"},
		{[]string{"--fleet-api-max-conns", "4", "--fleet-api-max-conns-per-client", "5"}, exitInvalid, "--fleet-api-max-conns-per-client 5: must be 1 to --fleet-api-max-conns (4)"},
		{[]string{"--fleet-api-bind-address", "127.0.0.1:0"}, exitInvalid, "--fleet-api-bind-address needs --fleet-api-tls-cert-file and --fleet-api-tls-key-file"},
		{[]string{"--fleet-api-bind-address", "127.0.0.1:0", "--fleet-api-tls-cert-file", cert + ".missing", "--fleet-api-tls-key-file", key},
			exitInvalid, "--fleet-api-tls-cert-file, --fleet-api-tls-key-file: open " + cert + ".missing"},
		{[]string{"--fleet-api-bind-address", "127.0.0.1:0", "--fleet-api-tls-cert-file", key, "--fleet-api-tls-key-file", cert},
			exitInvalid, "--fleet-api-tls-cert-file, --fleet-api-tls-key-file: tls:"},
		{api("127.0.0.1:0", "--fleet-api-client-ca-file", notPEM), exitInvalid, "--fleet-api-client-ca-file " + notPEM + ": no certificates"},
		{api("127.0.0.1:0", "--fleet-api-client-ca-file", notPEM+".missing"), exitInvalid, "--fleet-api-client-ca-file: open"},
		{api(busy.Addr().String()), exitInvalid, "--fleet-api-bind-address " + busy.Addr().String() + ": listen tcp " + busy.Addr().String() + ": bind: address already in use"},
		{api("127.0.0.1:99999"), exitInvalid, "--fleet-api-bind-address 127.0.0.1:99999: listen tcp: address 99999: invalid port"},
		// Good flags get as far as the API server, and give up on it after --api-server-wait.
		{append(api("127.0.0.1:0"), "--api-server-wait", "1s"), exitFailed, "unreachable"},
	} {
		args := append([]string{"hub", "--kubeconfig", kubeconfig, "--api-server-wait", "5m", "--log-format", "text"}, tc.args...)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		var stderr syncBuffer
		start := time.Now()
		code := execute(ctx, args, io.Discard, &stderr)
		cancel()
		if code != tc.code || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("fleet %v = %d after %s, %q; want %d and a message containing %q", tc.args, code, time.Since(start).Round(time.Millisecond), stderr.String(), tc.code, tc.want)
		}
	}
}
