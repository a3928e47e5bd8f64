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
	ctrl "sigs.k8s.io/controller-runtime"
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
}

func (o *unitOptions) addFlags(f *pflag.FlagSet) {
	f.DurationVar(&o.machineTTL, "machine-ttl", units.DefaultMachineTTL, "a machine whose agent has not reported for this long is lost and its units move")
	f.DurationVar(&o.engineLeaseTTL, "engine-lease-ttl", units.DefaultLeaseTTL, "TTL of the unit engine's fenced lease")
	f.StringVar(&o.engineLeaseNS, "engine-lease-namespace", "fleet-system", "namespace of the unit engine's Lease")
	f.StringVar(&o.engineLease, "engine-lease-name", "fleetsim-unit-engine", "name of the unit engine's Lease")
	f.StringVar(&o.apiAddr, "fleet-api-bind-address", "", `address of the fleet API v1 (HTTPS); "" disables it`)
	f.StringVar(&o.apiCert, "fleet-api-tls-cert-file", "", "TLS certificate of the fleet API")
	f.StringVar(&o.apiKey, "fleet-api-tls-key-file", "", "TLS key of the fleet API")
	f.StringVar(&o.apiClientCA, "fleet-api-client-ca-file", "", "CA bundle that signs client certificates (user = CN, groups = O); bearer tokens are checked with TokenReview")
	f.IntVar(&o.apiPageSize, "fleet-api-page-size", fleethttp.DefaultPageSize, "page size of the fleet API's lists (fleet's token_limit)")
}

// setupUnits adds the unit engine and, with --fleet-api-bind-address, the fleet API v1 to
// the hub.
func setupUnits(mgr ctrl.Manager, o unitOptions, checkInvariants bool, log logr.Logger) error {
	if o.machineTTL <= 0 || o.engineLeaseTTL <= 0 {
		return invalid("--machine-ttl and --engine-lease-ttl must be positive")
	}
	if o.apiPageSize <= 0 || o.apiPageSize > 65535 {
		return invalid("--fleet-api-page-size %d: must be 1 to 65535", o.apiPageSize)
	}
	if _, err := engine.Setup(mgr, engine.Options{
		LeaseNamespace: o.engineLeaseNS, LeaseName: o.engineLease,
		LeaseTTL: o.engineLeaseTTL, MachineTTL: o.machineTTL, Log: log.WithName("unit-engine"),
		CheckInvariants: checkInvariants, Events: mgr.GetEventRecorder("fleet-unit-engine"),
	}); err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	if o.apiAddr == "" {
		return nil
	}
	if o.apiCert == "" || o.apiKey == "" {
		return invalid("--fleet-api-bind-address needs --fleet-api-tls-cert-file and --fleet-api-tls-key-file")
	}
	cert, err := tls.LoadX509KeyPair(o.apiCert, o.apiKey)
	if err != nil {
		return invalid("fleet API TLS: %w", err)
	}
	tcfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if o.apiClientCA != "" {
		pem, err := os.ReadFile(o.apiClientCA)
		if err != nil {
			return invalid("--fleet-api-client-ca-file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return invalid("--fleet-api-client-ca-file %s: no certificates", o.apiClientCA)
		}
		tcfg.ClientCAs, tcfg.ClientAuth = pool, tls.VerifyClientCertIfGiven
	}
	srv := &fleethttp.Server{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), MachineTTL: o.machineTTL, PageSize: o.apiPageSize}
	ln, err := net.Listen("tcp", o.apiAddr)
	if err != nil {
		return &exitError{code: exitFailed, err: fmt.Errorf("fleet API: %w", err)}
	}
	hs := &http.Server{Handler: srv.Handler(), TLSConfig: tcfg, ReadHeaderTimeout: 10 * time.Second}
	// Every replica serves the API; writes go to the API server, which all replicas share.
	return mgr.Add(everyReplica{manager.RunnableFunc(func(ctx context.Context) error {
		go func() {
			<-ctx.Done()
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = hs.Shutdown(sctx)
		}()
		log.Info("serving the fleet API v1", "address", ln.Addr().String())
		if err := hs.ServeTLS(ln, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("fleet API: %w", err)
		}
		return nil
	})})
}

// everyReplica runs in every hub replica, not only the elected one.
type everyReplica struct{ manager.RunnableFunc }

func (everyReplica) NeedLeaderElection() bool { return false }
