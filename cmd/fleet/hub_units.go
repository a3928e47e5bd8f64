package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/fleetsim/fleetsim/model/units"
	"github.com/fleetsim/fleetsim/prod/engine"
	"github.com/fleetsim/fleetsim/prod/fleethttp"
)

// unitOptions are the hub's flags for the CoreOS-fleet half: the unit engine and the fleet
// API v1.
type unitOptions struct {
	machineTTL     time.Duration
	engineLeaseTTL time.Duration
	engineLeaseNS  string
	engineLease    string
	apiAddr        string
	apiCert        string
	apiKey         string
	apiClientCA    string
	apiPageSize    int
	apiLimits      fleethttp.Limits
	apiTokenTTL    time.Duration
	apiAllowTTL    time.Duration
	apiDenyTTL     time.Duration
}

func (o *unitOptions) addFlags(f *pflag.FlagSet) {
	d := fleethttp.DefaultLimits
	f.DurationVar(&o.machineTTL, "machine-ttl", units.DefaultMachineTTL, "a machine whose agent has not reported for this long is lost and its units move")
	f.DurationVar(&o.engineLeaseTTL, "engine-lease-ttl", units.DefaultLeaseTTL, "TTL of the unit engine's fenced lease")
	f.StringVar(&o.engineLeaseNS, "engine-lease-namespace", "fleet-system", "namespace of the unit engine's Lease")
	f.StringVar(&o.engineLease, "engine-lease-name", "fleetsim-unit-engine", "name of the unit engine's Lease")
	f.StringVar(&o.apiAddr, "fleet-api-bind-address", "", `address of the fleet API v1 (HTTPS); "" disables it`)
	f.StringVar(&o.apiCert, "fleet-api-tls-cert-file", "", "TLS certificate of the fleet API")
	f.StringVar(&o.apiKey, "fleet-api-tls-key-file", "", "TLS key of the fleet API")
	f.StringVar(&o.apiClientCA, "fleet-api-client-ca-file", "", "CA bundle that signs client certificates (user = CN, groups = O), reloaded when it changes; bearer tokens are checked with TokenReview")
	f.DurationVar(&o.apiTokenTTL, "fleet-api-authn-cache-ttl", fleethttp.DefaultTokenCacheTTL, "the fleet API reuses a TokenReview's answer for a bearer token for this long")
	f.DurationVar(&o.apiAllowTTL, "fleet-api-authz-allow-cache-ttl", fleethttp.DefaultAllowCacheTTL, "the fleet API reuses a SubjectAccessReview that allowed a request for this long")
	f.DurationVar(&o.apiDenyTTL, "fleet-api-authz-deny-cache-ttl", fleethttp.DefaultDenyCacheTTL, "the fleet API reuses a SubjectAccessReview that denied a request for this long")
	f.IntVar(&o.apiPageSize, "fleet-api-page-size", fleethttp.DefaultPageSize, "page size of the fleet API's lists (fleet's token_limit)")
	f.DurationVar(&o.apiLimits.ReadHeaderTimeout, "fleet-api-read-header-timeout", d.ReadHeaderTimeout, "the fleet API closes a connection that has not completed its TLS handshake and request headers within this time")
	f.DurationVar(&o.apiLimits.ReadTimeout, "fleet-api-read-timeout", d.ReadTimeout, "the fleet API answers 408 and closes a connection whose request, body included, has not arrived within this time")
	f.DurationVar(&o.apiLimits.WriteTimeout, "fleet-api-write-timeout", d.WriteTimeout, "the fleet API gives up a response not written within this time of the request's headers (it must exceed the slowest request)")
	f.DurationVar(&o.apiLimits.IdleTimeout, "fleet-api-idle-timeout", d.IdleTimeout, "the fleet API closes a kept-alive connection idle for this long")
	f.IntVar(&o.apiLimits.MaxConns, "fleet-api-max-conns", d.MaxConns, "most connections the fleet API holds at once; more wait in the listen queue")
	f.IntVar(&o.apiLimits.MaxConnsPerClient, "fleet-api-max-conns-per-client", d.MaxConnsPerClient, "most connections one client (an IPv4 address or an IPv6 /64) holds at once; more are closed when accepted")
}

// fleetAPI is what the fleet API v1 needs from the flags: its listener and TLS
// configuration, made before the hub connects anywhere.
type fleetAPI struct {
	ln       net.Listener
	tls      *tls.Config
	certs    *certwatcher.CertWatcher
	clientCA *dynamiccertificates.DynamicFileCAContent // nil without --fleet-api-client-ca-file
}

// check checks the unit flags and, with --fleet-api-bind-address, reads the TLS files and
// listens on the address, so that a bad flag exits 2 at once, naming it, instead of once
// the API server answers. It returns nil when the API is disabled. The caller closes the
// listener if the hub does not start.
func (o *unitOptions) check() (*fleetAPI, error) {
	switch {
	case o.machineTTL <= 0:
		return nil, invalid("--machine-ttl %s: must be positive", o.machineTTL)
	case o.engineLeaseTTL <= 0:
		return nil, invalid("--engine-lease-ttl %s: must be positive", o.engineLeaseTTL)
	case o.apiPageSize <= 0 || o.apiPageSize > 65535:
		return nil, invalid("--fleet-api-page-size %d: must be 1 to 65535", o.apiPageSize)
	}
	l := o.apiLimits
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{
		{"--fleet-api-read-header-timeout", l.ReadHeaderTimeout}, {"--fleet-api-read-timeout", l.ReadTimeout},
		{"--fleet-api-write-timeout", l.WriteTimeout}, {"--fleet-api-idle-timeout", l.IdleTimeout},
		{"--fleet-api-authn-cache-ttl", o.apiTokenTTL}, {"--fleet-api-authz-allow-cache-ttl", o.apiAllowTTL},
		{"--fleet-api-authz-deny-cache-ttl", o.apiDenyTTL},
	} {
		if d.v <= 0 {
			return nil, invalid("%s %s: must be positive", d.flag, d.v)
		}
	}
	if l.MaxConns < 1 {
		return nil, invalid("--fleet-api-max-conns %d: must be 1 or more", l.MaxConns)
	}
	if l.MaxConnsPerClient < 1 || l.MaxConnsPerClient > l.MaxConns {
		return nil, invalid("--fleet-api-max-conns-per-client %d: must be 1 to --fleet-api-max-conns (%d)", l.MaxConnsPerClient, l.MaxConns)
	}
	if o.apiAddr == "" {
		return nil, nil
	}
	if o.apiCert == "" || o.apiKey == "" {
		return nil, invalid("--fleet-api-bind-address needs --fleet-api-tls-cert-file and --fleet-api-tls-key-file")
	}
	// controller-runtime's certwatcher reads the pair now (a bad file exits 2 at once) and
	// again whenever either file changes, so a renewed certificate (cert-manager, a mounted
	// Secret) is served without a restart.
	watcher, err := certwatcher.New(o.apiCert, o.apiKey)
	if err != nil {
		return nil, invalid("--fleet-api-tls-cert-file, --fleet-api-tls-key-file: %w", err)
	}
	tcfg := &tls.Config{GetCertificate: watcher.GetCertificate, MinVersion: tls.VersionTLS12}
	api := &fleetAPI{tls: tcfg, certs: watcher}
	if o.apiClientCA != "" {
		// The client CA bundle is k8s.io/apiserver's dynamic CA file, reloaded when it
		// changes, and the x509 authenticator verifies against it; TLS only asks for the
		// certificate (as kube-apiserver does), so a rotated CA needs no restart.
		pem, err := os.ReadFile(o.apiClientCA)
		if err != nil {
			return nil, invalid("--fleet-api-client-ca-file: %w", err)
		}
		if !x509.NewCertPool().AppendCertsFromPEM(pem) {
			return nil, invalid("--fleet-api-client-ca-file %s: no certificates", o.apiClientCA)
		}
		ca, err := dynamiccertificates.NewDynamicCAContentFromFile("fleet-api-client-ca", o.apiClientCA)
		if err != nil {
			return nil, invalid("--fleet-api-client-ca-file: %w", err)
		}
		api.clientCA = ca
		tcfg.ClientAuth = tls.RequestClientCert
	}
	ln, err := net.Listen("tcp", o.apiAddr)
	if err != nil {
		return nil, invalid("--fleet-api-bind-address %s: %w", o.apiAddr, err)
	}
	api.ln = ln
	return api, nil
}

// setupUnits adds the unit engine and, when api is not nil, the fleet API v1 to the hub.
func setupUnits(mgr ctrl.Manager, o unitOptions, api *fleetAPI, checkInvariants bool, log logr.Logger) error {
	if _, err := engine.Setup(mgr, engine.Options{
		LeaseNamespace: o.engineLeaseNS, LeaseName: o.engineLease,
		LeaseTTL: o.engineLeaseTTL, MachineTTL: o.machineTTL, Log: log.WithName("unit-engine"),
		CheckInvariants: checkInvariants, Events: mgr.GetEventRecorder("fleet-unit-engine"),
	}); err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	if api == nil {
		return nil
	}
	if err := mgr.Add(everyReplica{manager.RunnableFunc(api.certs.Start)}); err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	cs, err := kubernetes.NewForConfig(mgr.GetConfig())
	if err != nil {
		return &exitError{code: exitFailed, err: fmt.Errorf("fleet API: %w", err)}
	}
	ao := fleethttp.AccessOptions{Authentication: cs.AuthenticationV1(), Authorization: cs.AuthorizationV1(),
		TokenCacheTTL: o.apiTokenTTL, AllowCacheTTL: o.apiAllowTTL, DenyCacheTTL: o.apiDenyTTL}
	if api.clientCA != nil {
		ao.ClientCA = api.clientCA
		if err := mgr.Add(everyReplica{manager.RunnableFunc(func(ctx context.Context) error {
			api.clientCA.Run(ctx, 1)
			return nil
		})}); err != nil {
			return &exitError{code: exitFailed, err: err}
		}
	}
	access, err := fleethttp.NewAccess(ao)
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	srv := &fleethttp.Server{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Access: access, MachineTTL: o.machineTTL, PageSize: o.apiPageSize}
	hs := srv.HTTPServer(o.apiLimits)
	hs.TLSConfig = api.tls
	ln := fleethttp.Listener(api.ln, o.apiLimits)
	// Every replica serves the API; writes go to the API server, which all replicas share.
	return mgr.Add(everyReplica{manager.RunnableFunc(func(ctx context.Context) error {
		go func() {
			<-ctx.Done()
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = hs.Shutdown(sctx)
		}()
		l := o.apiLimits
		log.Info("serving the fleet API v1", "address", api.ln.Addr().String(), "maxConns", l.MaxConns, "maxConnsPerClient", l.MaxConnsPerClient,
			"readHeaderTimeout", l.ReadHeaderTimeout.String(), "readTimeout", l.ReadTimeout.String(), "writeTimeout", l.WriteTimeout.String(), "idleTimeout", l.IdleTimeout.String())
		if err := hs.ServeTLS(ln, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("fleet API: %w", err)
		}
		return nil
	})})
}

// everyReplica runs in every hub replica, not only the elected one.
type everyReplica struct{ manager.RunnableFunc }

func (everyReplica) NeedLeaderElection() bool { return false }
