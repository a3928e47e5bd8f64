package main

import (
	"fmt"
	"io"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/fleetsim/fleetsim/apis"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/resources"
	"github.com/fleetsim/fleetsim/model/scheduler"
	"github.com/fleetsim/fleetsim/prod/hub"
	"github.com/fleetsim/fleetsim/prod/webhook"
)

// repeatedManagers lets one process start managers one after another, as the tests do;
// controller-runtime otherwise refuses a second controller named "membership".
var repeatedManagers = false

type hubOptions struct {
	kubeconfig        string
	metrics           metricsOptions
	probeAddr         string
	leaderElect       bool
	leaderNamespace   string
	leaderID          string
	heartbeatTimeout  time.Duration
	unhealthyTolerate time.Duration
	maxDecisions      int
	logFormat         string
	verbosity         int
	resync            time.Duration
	apiWait           time.Duration
	units             unitOptions
	workers           int
	checkInvariants   bool
	qps               float64
	burst             int
	pprofAddr         string
	skippedAPIs       string
	allowedAPIs       string
	skippedNamespaces string
	webhook           bool
	webhookPort       int
	webhookCertDir    string
	webhookHubUsers   []string
}

func newHubCommand(stderr io.Writer) *cobra.Command {
	o := hubOptions{}
	cmd := &cobra.Command{
		Use:   "hub",
		Short: "Run the hub controllers against a Kubernetes API server",
		Long: `hub runs the hub's controllers against the Kubernetes API server of --kubeconfig (else
$KUBECONFIG, ~/.kube/config, or the in-cluster service account). The API server must serve
the CRDs in config/crd/bases.

Controllers: membership (MemberCluster join, health and leave, with each member's
reserved namespace and RBAC), policy and resource snapshots, scheduler, rollout, work
generator, Work status fan-in, overrides, eviction and staged update runs. They are the
simulator's controllers (model/hub), woken by the same trigger table.

Only the holder of the Lease --leader-election-id in --leader-election-namespace reconciles;
other replicas wait. /healthz and /readyz are served on --health-probe-bind-address,
Prometheus metrics on --metrics-bind-address, over HTTPS for callers allowed to get the
non-resource URL /metrics (plain HTTP only with --metrics-secure=false); logs are structured
(JSON by default).

Decisions read the informer cache and run --workers at a time: decisions about one
placement stay serial, different placements go in parallel. The hub's own API requests
are limited to --kube-api-qps per second with bursts of --kube-api-burst.

Besides what is never placed (Pods, Nodes, events, leases, metrics, fleet's own kinds, the
default, kube-* and fleet-* namespaces), --skipped-propagating-apis refuses more APIs, or
--allowed-propagating-apis places only those it names (one or the other), and
--skipped-propagating-namespaces refuses namespaces: a placement simply does not select them.
APIs are separated by ";", each <group>, <group>/<version> or
<group>/<version>/<kind>,<kind> (kinds in any case; v1/<kind>,<kind> for the core group).

With --enable-webhook the hub serves a validating admission webhook on --webhook-port with
the certificate tls.crt and key tls.key of --webhook-cert-dir (reloaded when they change);
config/webhook registers it. It refuses an override selecting a resource another override of
its kind selects, a 101st override, a malformed disruption budget, and writes of internal
objects (bindings, snapshots, Works, InternalMemberClusters) by anyone but the hub
(--webhook-hub-user), the member agent of the reserved namespace, the cluster's own
controllers and administrators.`,
		Example: `  # Against a development API server, one replica:
  fleet hub --kubeconfig ~/.kube/hub.yaml --leader-elect=false --log-format text

  # Never place Secrets nor anything of networking.k8s.io, nor the team-scratch namespace:
  fleet hub --skipped-propagating-apis 'v1/Secret;networking.k8s.io' --skipped-propagating-namespaces team-scratch

  # In a cluster (see config/ for the manifests):
  fleet hub --leader-election-namespace fleet-system`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runHub(cmd, o, stderr) },
	}
	f := cmd.Flags()
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "path to the hub's kubeconfig (default: $KUBECONFIG, ~/.kube/config, in-cluster)")
	o.metrics.addFlags(f, ":8080")
	f.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", `address of /healthz and /readyz; "0" disables them`)
	f.BoolVar(&o.leaderElect, "leader-elect", true, "elect a leader on a Lease so only one replica reconciles")
	f.StringVar(&o.leaderNamespace, "leader-election-namespace", "fleet-system", "namespace of the leader election Lease")
	f.StringVar(&o.leaderID, "leader-election-id", "fleetsim-hub", "name of the leader election Lease")
	f.DurationVar(&o.heartbeatTimeout, "heartbeat-timeout", member.DefaultEligibility.HeartbeatTimeout, "a member without a heartbeat for longer is no longer healthy")
	f.DurationVar(&o.unhealthyTolerate, "unhealthy-tolerance", member.DefaultEligibility.UnhealthyTolerance, "how long a member may report unhealthy before it is ineligible")
	f.IntVar(&o.maxDecisions, "max-cluster-decisions", scheduler.DefaultMaxDecisions, "how many clusters a policy snapshot's status lists: every selected one, then unselected ones with the reason, up to this many (1000 is the field's limit; at 1,000 members each snapshot then holds 1,000 decisions, and a smaller number makes them cheaper to store, watch and list)")
	f.DurationVar(&o.apiWait, "api-server-wait", 5*time.Minute, "how long to retry an unreachable API server at start (one log line per try) before exiting 1")
	f.DurationVar(&o.resync, "resync", hub.DefaultResync, "how often discovery is read again for kinds added to the hub (objects themselves are watched)")
	f.IntVar(&o.workers, "workers", hub.DefaultWorkers, "how many placement decisions, and how many membership decisions, run at once (decisions about one placement or one member stay serial)")
	f.BoolVar(&o.checkInvariants, "check-invariants", false, "check the fleet invariants after every decision; a violation is logged, recorded as a Warning event on the placement (the unit, for unit invariants) and counted in fleetsim_invariant_violations_total (fleetsim_unit_invariant_violations_total), and the hub goes on")
	f.Float64Var(&o.qps, "kube-api-qps", 250, "the hub's client-side limit of API requests per second")
	f.IntVar(&o.burst, "kube-api-burst", 1000, "how many API requests may exceed --kube-api-qps in a burst")
	f.StringVar(&o.pprofAddr, "pprof-bind-address", "0", `address of the Go profiler (/debug/pprof); "0" disables it`)
	f.StringVar(&o.logFormat, "log-format", "json", "log format: json or text")
	f.IntVarP(&o.verbosity, "v", "v", 0, "log verbosity (1 logs the triggers each change fires)")
	f.StringVar(&o.skippedAPIs, "skipped-propagating-apis", "", `APIs never placed, besides the built-in ones: ";"-separated <group>, <group>/<version> or <group>/<version>/<kind>,<kind> (v1/<kind> for the core group); exclusive with --allowed-propagating-apis`)
	f.StringVar(&o.allowedAPIs, "allowed-propagating-apis", "", `the only APIs placed, in the syntax of --skipped-propagating-apis; exclusive with it`)
	f.StringVar(&o.skippedNamespaces, "skipped-propagating-namespaces", "", `","-separated namespaces never placed, nor anything in them, besides default, kube-* and fleet-*`)
	f.BoolVar(&o.webhook, "enable-webhook", false, "serve the validating admission webhook (config/webhook)")
	f.IntVar(&o.webhookPort, "webhook-port", 9443, "port of the validating admission webhook")
	f.StringVar(&o.webhookCertDir, "webhook-cert-dir", "/tmp/k8s-webhook-server/serving-certs", "directory holding the webhook's tls.crt and tls.key")
	f.StringSliceVar(&o.webhookHubUsers, "webhook-hub-user", []string{webhook.DefaultHubUser}, "the hub's own identity, which may write internal objects (repeatable)")
	o.units.addFlags(f)
	_ = cmd.RegisterFlagCompletionFunc("log-format", cobra.FixedCompletions([]string{"json", "text"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func invalid(format string, args ...any) error {
	return &exitError{code: exitInvalid, err: fmt.Errorf(format, args...)}
}

func runHub(cmd *cobra.Command, o hubOptions, stderr io.Writer) error {
	if o.logFormat != "json" && o.logFormat != "text" {
		return invalid("--log-format %q: must be json or text", o.logFormat)
	}
	if o.verbosity < 0 {
		return invalid("-v %d: must be 0 or more", o.verbosity)
	}
	if o.resync <= 0 {
		return invalid("--resync %s: must be positive", o.resync)
	}
	if o.workers < 1 {
		return invalid("--workers %d: must be 1 or more", o.workers)
	}
	if o.qps <= 0 || o.burst < 1 {
		return invalid("--kube-api-qps and --kube-api-burst must be positive")
	}
	if o.maxDecisions < 1 || o.maxDecisions > scheduler.DefaultMaxDecisions {
		return invalid("--max-cluster-decisions %d: must be between 1 and %d", o.maxDecisions, scheduler.DefaultMaxDecisions)
	}
	if o.heartbeatTimeout <= 0 || o.unhealthyTolerate <= 0 {
		return invalid("--heartbeat-timeout and --unhealthy-tolerance must be positive")
	}
	propagation, err := resources.ParseFilter(o.skippedAPIs, o.allowedAPIs, o.skippedNamespaces)
	if err != nil {
		return invalid("propagation filter: %w", err)
	}
	if propagation.Empty() {
		propagation = nil
	}
	if o.webhook && (o.webhookPort < 1 || o.webhookPort > 65535) {
		return invalid("--webhook-port %d: must be from 1 to 65535", o.webhookPort)
	}
	if err := o.metrics.check(); err != nil {
		return err
	}
	// The unit flags, the fleet API's TLS files and its address are checked before the API
	// server is reached, which may take --api-server-wait.
	api, err := o.units.check()
	if err != nil {
		return err
	}
	if api != nil {
		defer api.ln.Close()
	}
	log := newLogger(stderr, o.logFormat, o.verbosity)
	ctrl.SetLogger(log)

	cfg, err := loadConfig(o.kubeconfig)
	if err != nil {
		return invalid("kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = float32(o.qps), o.burst
	if err := waitForAPIServer(cmd.Context(), cfg, o.apiWait, stderr); err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	scheme := runtime.NewScheme()
	if err := apis.AddToScheme(scheme); err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	mgr, err := newManager(cfg, scheme, log, managerOptions{
		metrics: o.metrics.serverOptions(), probeAddr: o.probeAddr, pprofAddr: o.pprofAddr,
		leaderElect: o.leaderElect, leaderID: o.leaderID, leaderNamespace: o.leaderNamespace,
	})
	if err != nil {
		return err
	}
	if _, err := hub.Setup(mgr, hub.Options{
		Eligibility: member.EligibilityConfig{HeartbeatTimeout: o.heartbeatTimeout, UnhealthyTolerance: o.unhealthyTolerate},
		Clock:       clock.New(),
		Log:         log, Resync: o.resync, Workers: o.workers, CheckInvariants: o.checkInvariants, MaxDecisions: o.maxDecisions,
		Propagation: propagation,
	}); err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	if o.webhook {
		if err := webhook.Setup(mgr, o.webhookPort, o.webhookCertDir, webhook.Options{HubUsers: o.webhookHubUsers}); err != nil {
			return &exitError{code: exitFailed, err: fmt.Errorf("webhook: %w", err)}
		}
	}
	if err := setupUnits(mgr, o.units, api, o.checkInvariants, log); err != nil {
		return err
	}
	log.Info("starting the hub", "leaderElection", o.leaderElect, "lease", o.leaderNamespace+"/"+o.leaderID)
	if err := mgr.Start(cmd.Context()); err != nil {
		return &exitError{code: exitFailed, err: fmt.Errorf("hub: %w", err)}
	}
	return nil
}

// loadConfig reads the kubeconfig at path, else $KUBECONFIG or ~/.kube/config, else the
// in-cluster service account (clientcmd's own fallback when no kubeconfig is found).
func loadConfig(path string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = path
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
}
