package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetsim/fleetsim/agentsystemd/machine"
	sdbus "github.com/fleetsim/fleetsim/agentsystemd/machine/dbus"
	"github.com/fleetsim/fleetsim/apis"
	"github.com/fleetsim/fleetsim/model/units"
)

type agentOptions struct {
	kubeconfig  string
	machineID   string
	idFile      string
	publicIP    string
	metadata    string
	unitDir     string
	dbusAddress string
	machineTTL  time.Duration
	interval    time.Duration
	probeAddr   string
	metricsAddr string
	logFormat   string
	verbosity   int
}

func newAgentCommand(stderr io.Writer) *cobra.Command {
	o := agentOptions{}
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Run the fleet agent of a systemd machine",
		Long: `agent registers this machine on the hub (a Machine of fleet.fleetsim.io named by its
machine ID), heartbeats, and runs the units the hub's engine schedules here (and the global
units that run here) on this machine's systemd over D-Bus: it writes their unit files into
--unit-dir, links them into systemd's runtime unit directory, reloads, starts and stops them,
and reports the load/active/sub states systemd gives for them.

The system bus is $DBUS_SYSTEM_BUS_ADDRESS (or --dbus-address), else
/run/dbus/system_bus_socket. The hub is --kubeconfig (else $KUBECONFIG, ~/.kube/config or the
in-cluster service account). /healthz and /readyz are served on --health-probe-bind-address,
Prometheus metrics on --metrics-bind-address; logs are structured (JSON by default).
config/agent/fleet-agent.service runs it under systemd.`,
		Example: `  fleet agent --kubeconfig /etc/fleet/hub.yaml --metadata region=eu-west,disk=ssd --public-ip 10.0.0.7`,
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return runAgent(cmd, o, stderr) },
	}
	f := cmd.Flags()
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "path to the hub's kubeconfig (default: $KUBECONFIG, ~/.kube/config, in-cluster)")
	f.StringVar(&o.machineID, "machine-id", "", "this machine's ID (default: the content of --machine-id-file)")
	f.StringVar(&o.idFile, "machine-id-file", "/etc/machine-id", "file holding the machine ID")
	f.StringVar(&o.publicIP, "public-ip", "", "the address to advertise (default: the first non-loopback IPv4 address)")
	f.StringVar(&o.metadata, "metadata", "", "machine metadata as key=value pairs separated by commas")
	f.StringVar(&o.unitDir, "unit-dir", sdbus.DefaultUnitDir, "directory for the unit files the agent writes")
	f.StringVar(&o.dbusAddress, "dbus-address", "", "D-Bus address of the system bus (default: $DBUS_SYSTEM_BUS_ADDRESS or the standard socket)")
	f.DurationVar(&o.machineTTL, "machine-ttl", units.DefaultMachineTTL, "the hub's machine TTL; the agent heartbeats every third of it")
	f.DurationVar(&o.interval, "interval", 5*time.Second, "reconcile period (also on every unit change on the hub or in systemd)")
	f.StringVar(&o.probeAddr, "health-probe-bind-address", ":8091", `address of /healthz and /readyz; "0" disables them`)
	f.StringVar(&o.metricsAddr, "metrics-bind-address", ":8090", `address of the Prometheus metrics endpoint; "0" disables it`)
	f.StringVar(&o.logFormat, "log-format", "json", "log format: json or text")
	f.IntVarP(&o.verbosity, "v", "v", 0, "log verbosity")
	return cmd
}

// parseMetadata parses "k=v,k2=v2"; keys follow fleet's metadata key rule.
func parseMetadata(s string) (map[string]string, error) {
	md := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !validMetadataKey(k) {
			return nil, fmt.Errorf("%q: want key=value with a key of letters, digits, _, . and -", kv)
		}
		md[k] = v
	}
	return md, nil
}

func validMetadataKey(k string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-') {
			return false
		}
	}
	return true
}

func firstIPv4() string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return ""
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.String()
		}
	}
	return ""
}

func runAgent(cmd *cobra.Command, o agentOptions, stderr io.Writer) error {
	if o.logFormat != "json" && o.logFormat != "text" {
		return invalid("--log-format %q: must be json or text", o.logFormat)
	}
	if o.machineTTL <= 0 || o.interval <= 0 {
		return invalid("--machine-ttl and --interval must be positive")
	}
	md, err := parseMetadata(o.metadata)
	if err != nil {
		return invalid("--metadata: %w", err)
	}
	id := strings.TrimSpace(o.machineID)
	if id == "" {
		b, err := os.ReadFile(o.idFile)
		if err != nil {
			return invalid("no --machine-id and cannot read %s: %w", o.idFile, err)
		}
		id = strings.TrimSpace(string(b))
	}
	if id == "" || strings.ContainsAny(id, "/ \t") {
		return invalid("machine ID %q is not usable", id)
	}
	id = strings.ToLower(id)
	if o.publicIP == "" {
		o.publicIP = firstIPv4()
	}
	log := newLogger(stderr, o.logFormat, o.verbosity)
	ctrl.SetLogger(log)
	cfg, err := loadConfig(o.kubeconfig)
	if err != nil {
		return invalid("kubeconfig: %w", err)
	}
	scheme := runtime.NewScheme()
	if err := apis.AddToScheme(scheme); err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return invalid("hub client: %w", err)
	}
	ctx := cmd.Context()
	// The connection lives as long as the context it is dialled with.
	drv, err := sdbus.Dial(ctx, o.dbusAddress, o.unitDir)
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	defer drv.Close()
	version := "(unknown version)"
	if bi, ok := debug.ReadBuildInfo(); ok {
		version = bi.Main.Version
	}
	a, err := machine.New(c, drv, machine.Options{MachineID: id, PublicIP: o.publicIP, Metadata: md,
		MachineTTL: o.machineTTL, Interval: o.interval, Version: version, Log: log, Clock: clock.New()})
	if err != nil {
		return invalid("%w", err)
	}
	stop, err := serveAgentEndpoints(o, a)
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	defer stop()
	sv, _ := drv.Version(ctx)
	log.Info("starting the fleet agent", "machine", id, "systemd", sv, "unitDir", drv.UnitDir())
	if err := a.Run(ctx); err != nil {
		return &exitError{code: exitFailed, err: fmt.Errorf("agent: %w", err)}
	}
	return nil
}

// serveAgentEndpoints serves /healthz, /readyz and /metrics.
func serveAgentEndpoints(o agentOptions, a *machine.Agent) (func(), error) {
	var servers []*http.Server
	health := func(w http.ResponseWriter, _ *http.Request) {
		if err := a.Healthy(); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ok")
	}
	if o.probeAddr != "0" && o.probeAddr != "" {
		mux := http.NewServeMux()
		mux.HandleFunc("/healthz", health)
		mux.HandleFunc("/readyz", health)
		servers = append(servers, &http.Server{Addr: o.probeAddr, Handler: mux, ReadHeaderTimeout: 10 * time.Second})
	}
	if o.metricsAddr != "0" && o.metricsAddr != "" {
		reg := prometheus.NewRegistry()
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "fleet_agent_rounds_total", Help: "Reconcile rounds made."},
			func() float64 { r, _ := a.Stats(); return float64(r) }))
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "fleet_agent_round_failures_total", Help: "Rounds whose tasks or writes failed."},
			func() float64 { _, f := a.Stats(); return float64(f) }))
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		servers = append(servers, &http.Server{Addr: o.metricsAddr, Handler: mux, ReadHeaderTimeout: 10 * time.Second})
	}
	for _, s := range servers {
		ln, err := net.Listen("tcp", s.Addr)
		if err != nil {
			for _, s := range servers {
				_ = s.Close()
			}
			return nil, fmt.Errorf("listen on %s: %w", s.Addr, err)
		}
		go func() {
			if err := s.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				ctrl.Log.Error(err, "endpoint server failed", "addr", s.Addr)
			}
		}()
	}
	return func() {
		for _, s := range servers {
			_ = s.Close()
		}
	}, nil
}
