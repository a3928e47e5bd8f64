package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/fleetsim/fleetsim/agentk8s/member"
	"github.com/fleetsim/fleetsim/agentk8s/member/properties"
	"github.com/fleetsim/fleetsim/apis"
)

type memberOptions struct {
	hubKubeconfig    string
	memberKubeconfig string
	inCluster        bool
	name             string
	metrics          metricsOptions
	probeAddr        string
	leaderElect      bool
	leaderNamespace  string
	leaderID         string
	poll             time.Duration
	driftPeriod      time.Duration
	logFormat        string
	verbosity        int
	properties       properties.Config
}

func newMemberCommand(stderr io.Writer) *cobra.Command {
	o := memberOptions{}
	cmd := &cobra.Command{
		Use:   "member",
		Short: "Run the member agent of a Kubernetes cluster joined to a hub",
		Long: `member runs the member agent of one member cluster. It talks to the hub with the
member's identity (--hub-kubeconfig), using only the member's reserved namespace
fleet-member-<name>, and to the member's own API server (--member-kubeconfig, or the in-cluster
service account with --in-cluster).

It joins the hub through its InternalMemberCluster and heartbeats there with the member's
properties and resource usage, as its property provider (--property-provider) collects them:
"kubernetes" reports the node count, cpu and memory capacity, allocatable and available
(from the member's Nodes and Pods) and the Kubernetes version (k8s.io/k8s-version);
"configurable" adds properties declared without code: --node-label-property name=label (the
mean of a node label's values) and the data of --properties-configmap namespace/name (each
entry a YAML mapping of property names to quantities). It applies the manifests of the Works in its
namespace as their apply strategy says (client-side three-way merge or server-side apply,
takeover, drift detection, ReportDiff), records what it applied in an AppliedWork per Work
(owner references on the objects), and reports Work status. It watches the objects it applied:
an edit or delete by someone else is checked (and overwritten or reported) within a second;
every --drift-period it checks every Work again as a backstop. When the hub asks the member to leave, it removes everything it placed,
acknowledges and exits with 0. A hub it cannot reach leaves the applied objects untouched.

Only the holder of the Lease --leader-election-id in --leader-election-namespace on the
member cluster runs the agent. /healthz and /readyz are served on --health-probe-bind-address,
Prometheus metrics on --metrics-bind-address, over HTTPS for callers allowed to get the
non-resource URL /metrics of the member cluster (plain HTTP only with --metrics-secure=false);
logs are structured (JSON by default).`,
		Example: `  # Against a development hub and member:
  fleet member --hub-kubeconfig ~/.kube/hub-member-1.yaml --member-kubeconfig ~/.kube/member-1.yaml \
    --member-name member-1 --leader-elect=false --log-format text

  # Rank members by a cost that each member's administrator declares in a ConfigMap:
  kubectl create configmap fleet-properties -n fleet-system --from-literal=cost='example.com/cost-per-cpu-core: 0.2'
  fleet member --hub-kubeconfig ~/.kube/hub-member-1.yaml --member-name member-1 \
    --property-provider configurable --properties-configmap fleet-system/fleet-properties

  # In the member cluster (see config/member):
  fleet member --hub-kubeconfig /etc/fleet/hub/kubeconfig --in-cluster --member-name member-1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runMember(cmd, o, stderr) },
	}
	f := cmd.Flags()
	f.StringVar(&o.hubKubeconfig, "hub-kubeconfig", "", "path to a kubeconfig of the hub with the member's identity (required)")
	f.StringVar(&o.memberKubeconfig, "member-kubeconfig", "", "path to the member cluster's kubeconfig (default: $KUBECONFIG, ~/.kube/config)")
	f.BoolVar(&o.inCluster, "in-cluster", false, "use the in-cluster service account for the member cluster")
	f.StringVar(&o.name, "member-name", "", "the member's name: its MemberCluster on the hub (required)")
	o.metrics.addFlags(f, ":8090")
	f.StringVar(&o.probeAddr, "health-probe-bind-address", ":8091", `address of /healthz and /readyz; "0" disables them`)
	f.BoolVar(&o.leaderElect, "leader-elect", true, "elect a leader on a Lease of the member cluster so only one replica runs")
	f.StringVar(&o.leaderNamespace, "leader-election-namespace", "fleet-system", "namespace of the leader election Lease on the member cluster")
	f.StringVar(&o.leaderID, "leader-election-id", "fleetsim-member", "name of the leader election Lease")
	f.DurationVar(&o.poll, "poll", member.DefaultPoll, "how often the agent reads its InternalMemberCluster and Works on the hub")
	f.DurationVar(&o.driftPeriod, "drift-period", member.DefaultDriftPeriod, "how often every applied object is checked for drift, besides the watch of the applied objects")
	f.StringVar(&o.logFormat, "log-format", "json", "log format: json or text")
	f.IntVarP(&o.verbosity, "v", "v", 0, "log verbosity (1 logs every write to the member)")
	f.StringVar(&o.properties.Provider, "property-provider", "kubernetes", "the property provider: "+strings.Join(properties.Names(), " or "))
	f.StringToStringVar(&o.properties.NodeLabels, "node-label-property", nil, "property=node-label: report the mean of a node label's values (quantities) as a property (configurable provider; repeatable)")
	f.StringVar(&o.properties.ConfigMap, "properties-configmap", "", "namespace/name of a ConfigMap on the member whose data are properties, name: quantity (configurable provider)")
	_ = cmd.RegisterFlagCompletionFunc("property-provider", cobra.FixedCompletions(properties.Names(), cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("log-format", cobra.FixedCompletions([]string{"json", "text"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func runMember(cmd *cobra.Command, o memberOptions, stderr io.Writer) error {
	switch {
	case o.logFormat != "json" && o.logFormat != "text":
		return invalid("--log-format %q: must be json or text", o.logFormat)
	case o.verbosity < 0:
		return invalid("-v %d: must be 0 or more", o.verbosity)
	case o.hubKubeconfig == "":
		return invalid("--hub-kubeconfig is required")
	case o.name == "":
		return invalid("--member-name is required")
	case o.inCluster && o.memberKubeconfig != "":
		return invalid("--in-cluster and --member-kubeconfig are exclusive")
	case o.poll <= 0 || o.driftPeriod <= 0:
		return invalid("--poll and --drift-period must be positive")
	}
	if err := o.metrics.check(); err != nil {
		return err
	}
	provider, err := properties.New(o.properties)
	if err != nil {
		return invalid("--property-provider: %w", err)
	}
	log := newLogger(stderr, o.logFormat, o.verbosity)
	ctrl.SetLogger(log)

	hubCfg, err := loadConfig(o.hubKubeconfig)
	if err != nil {
		return invalid("hub kubeconfig: %w", err)
	}
	var memberCfg *rest.Config
	if o.inCluster {
		memberCfg, err = rest.InClusterConfig()
	} else {
		memberCfg, err = loadConfig(o.memberKubeconfig)
	}
	if err != nil {
		return invalid("member kubeconfig: %w", err)
	}
	scheme := runtime.NewScheme()
	if err := apis.AddToScheme(scheme); err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	hubClient, err := client.New(hubCfg, client.Options{Scheme: scheme})
	if err != nil {
		return invalid("hub client: %w", err)
	}
	memberClient, err := client.New(memberCfg, client.Options{Scheme: scheme})
	if err != nil {
		return invalid("member client: %w", err)
	}
	mgr, err := newManager(memberCfg, scheme, log, managerOptions{
		metrics: o.metrics.serverOptions(), probeAddr: o.probeAddr, pprofAddr: "",
		leaderElect: o.leaderElect, leaderID: o.leaderID, leaderNamespace: o.leaderNamespace,
	})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	agent := &member.Agent{Hub: hubClient, Member: memberClient, Name: o.name, Log: log.WithName("member").WithValues("member", o.name),
		Poll: o.poll, DriftPeriod: o.driftPeriod, MemberConfig: memberCfg, Properties: provider, Clock: clock.New()}
	var agentErr error
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		err := agent.Run(ctx)
		if errors.Is(err, member.ErrLeft) {
			// Left the fleet: the process is done.
			cancel()
			return nil
		}
		agentErr = err
		return err
	})); err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	log.Info("starting the member agent", "member", o.name, "leaderElection", o.leaderElect, "lease", o.leaderNamespace+"/"+o.leaderID)
	if err := mgr.Start(ctx); err != nil {
		return &exitError{code: exitFailed, err: fmt.Errorf("member: %w", err)}
	}
	if agentErr != nil {
		return &exitError{code: exitFailed, err: fmt.Errorf("member: %w", agentErr)}
	}
	return nil
}
