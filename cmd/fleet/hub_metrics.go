package main

// The metrics endpoint of `fleet hub` and `fleet member`, as kubebuilder projects serve
// it: HTTPS by default, each scrape authenticated with a TokenReview and authorised with a
// SubjectAccessReview for `get` on the non-resource URL /metrics (both cached, through
// controller-runtime's filters.WithAuthenticationAndAuthorization). Plain HTTP is an
// explicit opt-in (--metrics-secure=false) for a loopback address or a private network.

import (
	"github.com/spf13/pflag"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// metricsOptions are the metrics flags shared by hub and member.
type metricsOptions struct {
	addr     string
	secure   bool
	certDir  string
	certName string
	keyName  string
}

func (o *metricsOptions) addFlags(f *pflag.FlagSet, defaultAddr string) {
	f.StringVar(&o.addr, "metrics-bind-address", defaultAddr, `address of the Prometheus metrics endpoint; "0" disables it`)
	f.BoolVar(&o.secure, "metrics-secure", true, "serve metrics over HTTPS, each scrape authenticated (TokenReview) and authorised (SubjectAccessReview: get on the non-resource URL /metrics); false serves plain HTTP to anyone who reaches the address")
	f.StringVar(&o.certDir, "metrics-cert-dir", "", `directory holding the metrics' serving certificate, reloaded when it changes; "" serves a self-signed one generated at start`)
	f.StringVar(&o.certName, "metrics-cert-name", "tls.crt", "certificate file in --metrics-cert-dir")
	f.StringVar(&o.keyName, "metrics-key-name", "tls.key", "key file in --metrics-cert-dir")
}

// check refuses certificate flags that would have no effect.
func (o *metricsOptions) check() error {
	if !o.secure && o.certDir != "" {
		return invalid("--metrics-cert-dir %s: needs --metrics-secure (plain HTTP serves no certificate)", o.certDir)
	}
	if o.certDir != "" && (o.certName == "" || o.keyName == "") {
		return invalid("--metrics-cert-name and --metrics-key-name must name files in --metrics-cert-dir")
	}
	return nil
}

// serverOptions are controller-runtime's metrics server options. With a certificate
// directory, controller-runtime watches the pair with its certwatcher.
func (o *metricsOptions) serverOptions() metricsserver.Options {
	m := metricsserver.Options{BindAddress: o.addr}
	if o.secure {
		m.SecureServing = true
		m.FilterProvider = filters.WithAuthenticationAndAuthorization
		m.CertDir, m.CertName, m.KeyName = o.certDir, o.certName, o.keyName
	}
	return m
}
