package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	fleetconfig "github.com/fleetsim/fleetsim/config"
	"github.com/fleetsim/fleetsim/prod/local"
)

// localOptions are the flags of `fleet local`.
type localOptions struct {
	dir      string
	assets   string
	binary   string
	members  int
	machines int
	output   string
	purge    bool
}

func newLocalCommand(stdout, stderr io.Writer) *cobra.Command {
	o := &localOptions{}
	cmd := &cobra.Command{
		Use:   "local",
		Short: "Start, inspect and stop a whole fleet on this machine",
		Long: `local runs a fleet on one machine for trying fleetsim out: a hub, member clusters with
their agents and machines with theirs, each a process of its own, recorded in a state
directory (--state-dir) so that status and down find exactly them.

The API servers are kube-apiserver with etcd, from the cache the project's tests use
(hack/test-assets.sh builds or installs them on first use, with progress on stderr; or
--assets, or $KUBEBUILDER_ASSETS). The machines are systemd-nspawn sandboxes booted by the
assets' systemd-sandbox.sh (root and systemd-nspawn needed).`,
		Example: `  fleet local up --members 2 --machines 1
  export KUBECONFIG=$(fleet local status -o json | jq -r .hub.kubeconfig)
  fleet local status
  fleet local down --purge`,
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&o.dir, "state-dir", defaultStateDir(), "directory of the local fleet's state: kubeconfigs, certificates, logs, PIDs")
	cmd.AddCommand(newLocalUpCommand(o, stdout, stderr), newLocalStatusCommand(o, stdout), newLocalDownCommand(o, stdout, stderr))
	return cmd
}

func defaultStateDir() string {
	base := os.Getenv("XDG_STATE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return filepath.Join(os.TempDir(), "fleetsim-local")
		}
		base = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(base, "fleetsim", "local")
}

func newLocalUpCommand(o *localOptions, stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start a hub, --members member clusters and --machines machines",
		Long: `up starts, in this order: etcd; the hub's kube-apiserver with fleet's CRDs; fleet hub
with the fleet API v1 on HTTPS (mutual TLS); for each member, its kube-apiserver, the join
(fleet join: a ServiceAccount token on the hub, the MemberCluster, the hub kubeconfig
Secret on the member) and fleet member; for each machine, a systemd sandbox and fleet agent.
It returns once every member has joined, leaving the processes running.

It writes into --state-dir: hub/admin.kubeconfig and member-<i>/admin.kubeconfig
(administrators), member-<i>/hub.kubeconfig (the member's identity on the hub),
fleetctl.env (source it, then fleetctl talks to the hub's fleet API), state.json (every
process's PID) and a log file per process. A state directory whose processes are all gone
is started afresh; one with running processes is refused: run down first.`,
		Example: `  fleet local up                       # a hub and two members
  fleet local up --members 3 --machines 2
  . ~/.local/state/fleetsim/local/fleetctl.env && fleetctl list-machines`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return localUp(cmd.Context(), o, stdout, stderr) },
	}
	f := cmd.Flags()
	f.IntVar(&o.members, "members", 2, "how many member clusters")
	f.IntVar(&o.machines, "machines", 0, "how many machines (systemd sandboxes; needs root and systemd-nspawn)")
	f.StringVar(&o.assets, "assets", "", "directory with kube-apiserver and etcd (default: $KUBEBUILDER_ASSETS, else the test cache, else hack/test-assets.sh of the repository around the working directory)")
	f.StringVar(&o.binary, "fleet-binary", "", "the fleet binary the processes run (default: this one)")
	return cmd
}

func newLocalStatusCommand(o *localOptions, stdout io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the local fleet's processes, clusters and members",
		Example: `  fleet local status
  fleet local status -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			quietClients()
			st, err := local.Load(o.dir)
			if err != nil {
				return &exitError{code: exitFailed, err: err}
			}
			return printStatus(cmd.Context(), stdout, st, o.output)
		},
	}
	cmd.Flags().StringVarP(&o.output, "output", "o", "text", "output format: text, json or yaml")
	return cmd
}

func newLocalDownCommand(o *localOptions, stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "down",
		Short: "Stop every process of the local fleet, by PID",
		Long: `down stops the processes state.json records, newest first (SIGTERM, then SIGKILL after
10s), and the machine sandboxes through systemd-sandbox.sh. A PID that now belongs to another
process (its start time differs) is left alone. The state directory stays, with its logs and
kubeconfigs, unless --purge removes it.`,
		Example: `  fleet local down
  fleet local down --purge`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := local.Load(o.dir)
			if err != nil {
				return &exitError{code: exitFailed, err: err}
			}
			if err := localDown(st, stderr); err != nil {
				return &exitError{code: exitFailed, err: err}
			}
			if o.purge {
				if err := os.RemoveAll(o.dir); err != nil {
					return &exitError{code: exitFailed, err: err}
				}
			}
			fmt.Fprintf(stdout, "local fleet in %s stopped%s\n", o.dir, map[bool]string{true: " and removed"}[o.purge])
			return nil
		},
	}
	cmd.Flags().BoolVar(&o.purge, "purge", false, "remove the state directory too (etcd data, certificates, kubeconfigs, logs)")
	return cmd
}

// localUp starts the local fleet; on an error it stops what it started.
func localUp(ctx context.Context, o *localOptions, stdout, stderr io.Writer) (err error) {
	switch {
	case o.members < 0 || o.members > 20:
		return invalid("--members %d: must be from 0 to 20", o.members)
	case o.machines < 0 || o.machines > 10:
		return invalid("--machines %d: must be from 0 to 10", o.machines)
	}
	quietClients()
	progress := func(format string, args ...any) { fmt.Fprintf(stderr, "fleet local: "+format+"\n", args...) }
	if old, lerr := local.Load(o.dir); lerr == nil {
		for _, p := range old.Processes {
			if p.Alive() {
				return invalid("%s already runs a local fleet (%s, pid %d): run `fleet local down` first", o.dir, p.Name, p.PID)
			}
		}
		progress("%s holds a stopped local fleet: starting afresh", o.dir)
	}
	if err := os.RemoveAll(o.dir); err != nil {
		return invalid("--state-dir: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(o.dir, "pki"), 0o700); err != nil {
		return invalid("--state-dir: %w", err)
	}
	binary := o.binary
	if binary == "" {
		if binary, err = os.Executable(); err != nil {
			return invalid("find the fleet binary: %w (give --fleet-binary)", err)
		}
	}
	assets, err := findAssets(o.assets, stderr)
	if err != nil {
		return invalid("%w", err)
	}
	failed := func(e error) error { return &exitError{code: exitFailed, err: e} }
	st := &local.State{Dir: o.dir}
	defer func() {
		if err != nil {
			progress("failed; stopping what was started (state and logs kept in %s)", o.dir)
			_ = localDown(st, stderr)
		}
	}()

	ca, err := local.NewCA(filepath.Join(o.dir, "pki"), "fleetsim-local-ca")
	if err != nil {
		return failed(err)
	}
	progress("starting etcd")
	etcd, etcdURL, err := local.StartEtcd(assets, o.dir)
	if etcd.PID != 0 {
		if serr := st.Add(etcd); serr != nil {
			return failed(serr)
		}
	}
	if err != nil {
		return failed(err)
	}
	startAPI := func(name, role string, crds fs.FS) (*local.APIServer, error) {
		progress("starting the kube-apiserver of %s", name)
		api, err := local.StartAPIServer(assets, filepath.Join(o.dir, name), name, etcdURL, ca)
		if api != nil {
			if serr := st.Add(api.Process); serr != nil {
				return nil, serr
			}
		}
		if err != nil {
			return nil, err
		}
		st.Clusters = append(st.Clusters, local.Cluster{Name: name, URL: api.URL, Kubeconfig: api.Kubeconfig, Role: role})
		if err := local.InstallCRDs(ctx, api.Config, crds); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return api, st.Save()
	}
	hubAPI, err := startAPI("hub", "hub", fleetconfig.HubCRDs)
	if err != nil {
		return failed(err)
	}

	// The hub, with the fleet API v1 on mutual TLS: a serving certificate for it and a
	// client certificate (an administrator, as the API's SubjectAccessReviews see it) for
	// fleetctl.
	hubDir := filepath.Join(o.dir, "hub")
	apiServing, err := ca.Serving(hubDir, "fleet-api")
	if err != nil {
		return failed(err)
	}
	fleetctlCert, err := ca.Client(hubDir, "fleetctl", "admin", "system:masters")
	if err != nil {
		return failed(err)
	}
	apiPort, err := local.FreePort()
	if err != nil {
		return failed(err)
	}
	probePort, err := local.FreePort()
	if err != nil {
		return failed(err)
	}
	metricsPort, err := local.FreePort()
	if err != nil {
		return failed(err)
	}
	progress("starting fleet hub")
	hubProc, err := local.Start("fleet-hub", filepath.Join(hubDir, "fleet-hub.log"), []string{binary, "hub",
		"--kubeconfig", hubAPI.Kubeconfig, "--leader-elect=false", "--log-format", "text",
		"--health-probe-bind-address", "127.0.0.1:" + strconv.Itoa(probePort),
		"--metrics-bind-address", "127.0.0.1:" + strconv.Itoa(metricsPort), "--metrics-secure=false", // loopback only
		"--fleet-api-bind-address", "127.0.0.1:" + strconv.Itoa(apiPort),
		"--fleet-api-tls-cert-file", apiServing.CertFile, "--fleet-api-tls-key-file", apiServing.KeyFile,
		"--fleet-api-client-ca-file", ca.CertFile}, nil)
	if err != nil {
		return failed(err)
	}
	if err := st.Add(hubProc); err != nil {
		return failed(err)
	}
	st.FleetAPI = "https://127.0.0.1:" + strconv.Itoa(apiPort)
	st.FleetctlEnv = filepath.Join(o.dir, "fleetctl.env")
	env := fmt.Sprintf("export FLEETCTL_ENDPOINT=%s\nexport FLEETCTL_CA_FILE=%s\nexport FLEETCTL_CERT_FILE=%s\nexport FLEETCTL_KEY_FILE=%s\n",
		st.FleetAPI, ca.CertFile, fleetctlCert.CertFile, fleetctlCert.KeyFile)
	if err := os.WriteFile(st.FleetctlEnv, []byte(env), 0o644); err != nil {
		return failed(err)
	}
	if err := waitHTTP(ctx, hubProc, "http://127.0.0.1:"+strconv.Itoa(probePort)+"/readyz"); err != nil {
		return failed(err)
	}

	for i := 1; i <= o.members; i++ {
		name := fmt.Sprintf("member-%d", i)
		api, err := startAPI(name, "member", fleetconfig.MemberCRDs)
		if err != nil {
			return failed(err)
		}
		progress("joining %s", name)
		hubKC := filepath.Join(o.dir, name, "hub.kubeconfig")
		if _, err := joinMember(ctx, hubAPI.Config, api.Config, joinOptions{name: name, namespace: "fleet-system",
			secretName: defaultHubSecret, configMapName: defaultMemberConfig, tokenDuration: 365 * 24 * time.Hour,
			heartbeatPeriod: 5, out: hubKC}); err != nil {
			return failed(fmt.Errorf("join %s: %w", name, err))
		}
		p, err := local.Start("fleet-member-"+name, filepath.Join(o.dir, name, "fleet-member.log"), []string{binary, "member",
			"--hub-kubeconfig", hubKC, "--member-kubeconfig", api.Kubeconfig, "--member-name", name,
			"--leader-elect=false", "--log-format", "text", "--metrics-bind-address", "0", "--health-probe-bind-address", "0"}, nil)
		if err != nil {
			return failed(err)
		}
		if err := st.Add(p); err != nil {
			return failed(err)
		}
	}
	if err := startMachines(o, st, assets, binary, hubAPI.Kubeconfig, progress); err != nil {
		return failed(err)
	}
	if o.members > 0 {
		progress("waiting for the members to join")
		if err := waitMembersJoined(ctx, hubAPI.Config, st, o.members); err != nil {
			return failed(err)
		}
	}
	fmt.Fprintf(stdout, "local fleet up in %s: a hub, %d members, %d machines\n", o.dir, o.members, o.machines)
	fmt.Fprintf(stdout, "  export KUBECONFIG=%s\n  . %s   # for fleetctl\n", hubAPI.Kubeconfig, st.FleetctlEnv)
	return nil
}

// startMachines boots a systemd sandbox per machine through the assets' systemd-sandbox.sh
// (which starts systemd in a cgroup of its own, never at the root: the only safe way here)
// and a fleet agent driving it.
func startMachines(o *localOptions, st *local.State, assets, binary, hubKubeconfig string, progress func(string, ...any)) error {
	if o.machines == 0 {
		return nil
	}
	script := filepath.Join(assets, "systemd-sandbox.sh")
	if _, err := os.Stat(script); err != nil {
		return fmt.Errorf("--machines needs %s (hack/test-assets.sh puts it there): %w", script, err)
	}
	if _, err := exec.LookPath("systemd-nspawn"); err != nil {
		return fmt.Errorf("--machines needs systemd-nspawn (apt-get install systemd-container): %w", err)
	}
	if os.Geteuid() != 0 {
		return errors.New("--machines needs root (systemd-nspawn)")
	}
	for i := 1; i <= o.machines; i++ {
		name := fmt.Sprintf("machine-%d", i)
		dir := filepath.Join(o.dir, name)
		// A Unix socket's path holds at most 107 bytes (sun_path); the agent dials the
		// sandbox's bus socket under the state directory.
		if bus := filepath.Join(dir, "bus", "system_bus_socket"); len(bus) > 107 {
			return fmt.Errorf("--state-dir %s is too long for machines: the D-Bus socket %s exceeds the 107 bytes of a Unix socket path", o.dir, bus)
		}
		progress("booting the systemd sandbox of %s", name)
		st.Machines = append(st.Machines, dir) // recorded first: down stops a half-started sandbox too
		if err := st.Save(); err != nil {
			return err
		}
		out, err := exec.Command(script, "start", dir).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s: systemd-sandbox.sh start: %w\n%s", name, err, out)
		}
		p, err := local.Start("fleet-agent-"+name, filepath.Join(dir, "fleet-agent.log"), []string{binary, "agent",
			"--kubeconfig", hubKubeconfig, "--machine-id", name, "--public-ip", fmt.Sprintf("127.0.0.%d", 10+i),
			"--metadata", "name=" + name, "--dbus-address", "unix:path=" + filepath.Join(dir, "bus", "system_bus_socket"),
			"--unit-dir", filepath.Join(dir, "units"), "--metrics-bind-address", "0", "--health-probe-bind-address", "0",
			"--log-format", "text"}, nil)
		if err != nil {
			return err
		}
		if err := st.Add(p); err != nil {
			return err
		}
	}
	return nil
}

// localDown stops st's processes newest first, then its machine sandboxes.
func localDown(st *local.State, stderr io.Writer) error {
	var errs []error
	for i := len(st.Processes) - 1; i >= 0; i-- {
		p := st.Processes[i]
		if err := p.Stop(10 * time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	if len(st.Machines) > 0 {
		script := ""
		for _, p := range st.Processes {
			if p.Name == "etcd" {
				script = filepath.Join(filepath.Dir(p.Args[0]), "systemd-sandbox.sh")
			}
		}
		for _, dir := range st.Machines {
			if out, err := exec.Command(script, "stop", dir).CombinedOutput(); err != nil {
				errs = append(errs, fmt.Errorf("stop the sandbox %s: %w: %s", dir, err, out))
			}
		}
	}
	if len(errs) == 0 {
		fmt.Fprintf(stderr, "fleet local: stopped %d processes and %d machine sandboxes\n", len(st.Processes), len(st.Machines))
	}
	return errors.Join(errs...)
}

// findAssets is --assets, else $KUBEBUILDER_ASSETS, else the test cache's directory when it
// holds both binaries, else what hack/test-assets.sh of the enclosing repository prints
// (it builds kube-apiserver on first use, its progress passed through to stderr).
func findAssets(flag string, stderr io.Writer) (string, error) {
	ok := func(dir string) bool {
		for _, b := range []string{"kube-apiserver", "etcd"} {
			if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
				return false
			}
		}
		return true
	}
	if flag != "" {
		if !ok(flag) {
			return "", fmt.Errorf("--assets %s: no kube-apiserver and etcd there", flag)
		}
		return flag, nil
	}
	if env := os.Getenv("KUBEBUILDER_ASSETS"); env != "" && ok(env) {
		return env, nil
	}
	cache := os.Getenv("FLEETSIM_CACHE")
	if cache == "" {
		if c, err := os.UserCacheDir(); err == nil {
			cache = filepath.Join(c, "fleetsim")
		}
	}
	if dir := filepath.Join(cache, "k8s-"+assetsVersion, "assets"); cache != "" && ok(dir) {
		return dir, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		script := filepath.Join(d, "hack", "test-assets.sh")
		if _, err := os.Stat(script); err == nil {
			fmt.Fprintf(stderr, "fleet local: no kube-apiserver cached yet: running %s (first use builds it, several minutes)\n", script)
			cmd := exec.Command(script)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, stderr
			if err := cmd.Run(); err != nil {
				return "", fmt.Errorf("%s: %w", script, err)
			}
			return strings.TrimSpace(out.String()), nil
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return "", errors.New("no kube-apiserver and etcd: give --assets, set KUBEBUILDER_ASSETS, or run from the fleetsim repository (hack/test-assets.sh provides them)")
}

// assetsVersion is the Kubernetes version hack/test-assets.sh caches under.
const assetsVersion = "1.37.1"

func waitHTTP(ctx context.Context, p local.Process, url string) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		if !p.Alive() {
			return false, fmt.Errorf("%s exited; the end of %s:\n%s", p.Name, p.Log, local.Tail(p.Log, 15))
		}
		last = probe(ctx, url)
		return last == nil, nil
	})
	if err != nil && last != nil {
		return fmt.Errorf("%s: %s not ready: %w (log: %s)", p.Name, url, last, p.Log)
	}
	return err
}

// waitMembersJoined waits until n MemberClusters are Joined, failing early with a member
// agent's log when its process has exited.
func waitMembersJoined(ctx context.Context, cfg *rest.Config, st *local.State, n int) error {
	scheme, err := fleetScheme()
	if err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	var last string
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		for _, p := range st.Processes {
			if !p.Alive() {
				return false, fmt.Errorf("%s exited; the end of %s:\n%s", p.Name, p.Log, local.Tail(p.Log, 15))
			}
		}
		var list clusterv1beta1.MemberClusterList
		if err := c.List(ctx, &list); err != nil {
			last = err.Error()
			return false, nil
		}
		joined := 0
		for _, mc := range list.Items {
			if meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1beta1.ConditionTypeJoined) {
				joined++
			}
		}
		last = fmt.Sprintf("%d of %d joined", joined, n)
		return joined >= n, nil
	})
	if err != nil {
		return fmt.Errorf("members not joined (%s): %w", last, err)
	}
	return nil
}

// localStatus is `fleet local status` as data.
type localStatus struct {
	Dir         string          `json:"dir"`
	Hub         *clusterStatus  `json:"hub,omitempty"`
	Members     []clusterStatus `json:"members"`
	Processes   []processStatus `json:"processes"`
	Machines    []string        `json:"machines,omitempty"`
	FleetAPI    string          `json:"fleetAPI,omitempty"`
	FleetctlEnv string          `json:"fleetctlEnv,omitempty"`
}

type clusterStatus struct {
	Name       string `json:"name"`
	URL        string `json:"url"`
	Kubeconfig string `json:"kubeconfig"`
	// Joined and Healthy are the MemberCluster's conditions on the hub ("" when unknown).
	Joined  string `json:"joined,omitempty"`
	Healthy string `json:"healthy,omitempty"`
}

type processStatus struct {
	Name    string `json:"name"`
	PID     int    `json:"pid"`
	Running bool   `json:"running"`
	Log     string `json:"log"`
}

func collectStatus(ctx context.Context, st *local.State) localStatus {
	out := localStatus{Dir: st.Dir, Machines: st.Machines, FleetAPI: st.FleetAPI, FleetctlEnv: st.FleetctlEnv, Members: []clusterStatus{}}
	for _, p := range st.Processes {
		out.Processes = append(out.Processes, processStatus{Name: p.Name, PID: p.PID, Running: p.Alive(), Log: p.Log})
	}
	members := map[string]clusterv1beta1.MemberCluster{}
	for _, c := range st.Clusters {
		if c.Role != "hub" {
			continue
		}
		out.Hub = &clusterStatus{Name: c.Name, URL: c.URL, Kubeconfig: c.Kubeconfig}
		if cfg, err := loadConfig(c.Kubeconfig); err == nil {
			cfg.Timeout = 5 * time.Second
			if scheme, err := fleetScheme(); err == nil {
				if cl, err := client.New(cfg, client.Options{Scheme: scheme}); err == nil {
					var list clusterv1beta1.MemberClusterList
					if cl.List(ctx, &list) == nil {
						for _, mc := range list.Items {
							members[mc.Name] = mc
						}
					}
				}
			}
		}
	}
	cond := func(mc clusterv1beta1.MemberCluster, ok bool, typ string) string {
		if !ok {
			return ""
		}
		if c := meta.FindStatusCondition(mc.Status.Conditions, typ); c != nil {
			return string(c.Status)
		}
		return string(metav1.ConditionUnknown)
	}
	for _, c := range st.Clusters {
		if c.Role == "hub" {
			continue
		}
		mc, ok := members[c.Name]
		out.Members = append(out.Members, clusterStatus{Name: c.Name, URL: c.URL, Kubeconfig: c.Kubeconfig,
			Joined: cond(mc, ok, clusterv1beta1.ConditionTypeJoined), Healthy: cond(mc, ok, clusterv1beta1.ConditionTypeHealthy)})
	}
	return out
}

func printStatus(ctx context.Context, w io.Writer, st *local.State, output string) error {
	s := collectStatus(ctx, st)
	switch output {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(s)
	case "yaml":
		b, err := yaml.Marshal(s)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	case "text":
	default:
		return invalid("--output %q: must be text, json or yaml", output)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "STATE DIR\t%s\n", s.Dir)
	if s.Hub != nil {
		fmt.Fprintf(tw, "HUB\t%s\t%s\n", s.Hub.URL, s.Hub.Kubeconfig)
	}
	if s.FleetAPI != "" {
		fmt.Fprintf(tw, "FLEET API\t%s\t. %s\n", s.FleetAPI, s.FleetctlEnv)
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "MEMBER\tJOINED\tHEALTHY\tURL\tKUBECONFIG")
	for _, m := range s.Members {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", m.Name, orDash(m.Joined), orDash(m.Healthy), m.URL, m.Kubeconfig)
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "PROCESS\tPID\tSTATE\tLOG")
	for _, p := range s.Processes {
		state := "stopped"
		if p.Running {
			state = "running"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", p.Name, p.PID, state, p.Log)
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// probe is nil when url answers 200.
func probe(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return nil
}
