package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/prod/fleethttp"
	"github.com/fleetsim/fleetsim/prod/local"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// TestFleetAPIServesARenewedCertificate: the fleet API's TLS pair is watched
// (certwatcher): after the files are replaced, new connections get the new certificate
// without a restart.
func TestFleetAPIServesARenewedCertificate(t *testing.T) {
	dir := t.TempDir()
	ca, err := local.NewCA(dir, "test-ca")
	if err != nil {
		t.Fatal(err)
	}
	first, err := ca.Serving(dir, "first")
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	install := func(p local.Pair) {
		for src, dst := range map[string]string{p.CertFile: certFile, p.KeyFile: keyFile} {
			b, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			// Written aside and renamed, as a Secret volume or cert-manager replaces them.
			if err := os.WriteFile(dst+".tmp", b, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(dst+".tmp", dst); err != nil {
				t.Fatal(err)
			}
		}
	}
	install(first)
	o := unitOptions{machineTTL: time.Minute, engineLeaseTTL: time.Minute, apiPageSize: 100, apiLimits: fleethttp.DefaultLimits,
		apiTokenTTL: time.Second, apiAllowTTL: time.Second, apiDenyTTL: time.Second,
		apiAddr: "127.0.0.1:0", apiCert: certFile, apiKey: keyFile}
	api, err := o.check()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = api.certs.Start(ctx) }()
	hs := &http.Server{Handler: http.NotFoundHandler(), TLSConfig: api.tls}
	go func() { _ = hs.ServeTLS(api.ln, "", "") }()
	defer hs.Close()

	served := func() (string, error) {
		conn, err := tls.Dial("tcp", api.ln.Addr().String(), &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // the test reads the served certificate
		if err != nil {
			return "", err
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].Subject.CommonName, nil
	}
	if cn, err := served(); err != nil || cn != "first" {
		t.Fatalf("served %q (%v), want the certificate first", cn, err)
	}
	second, err := ca.Serving(dir, "second")
	if err != nil {
		t.Fatal(err)
	}
	install(second)
	testenv.Eventually(t, "the renewed certificate served", func() error {
		cn, err := served()
		if err != nil {
			return err
		}
		if cn != "second" {
			return fmt.Errorf("served %q", cn)
		}
		return nil
	})
}
