package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	buildversion "github.com/fleetsim/fleetsim/internal/version"
	"github.com/fleetsim/fleetsim/model/unitfile"
	"github.com/fleetsim/fleetsim/model/units"
	"github.com/fleetsim/fleetsim/prod/fleethttp"
)

type globals struct {
	endpoint       string
	certFile       string
	keyFile        string
	caFile         string
	token          string
	requestTimeout float64
	output         string

	noLegend      bool
	full          bool
	fields        string
	noBlock       bool
	blockAttempts int
	replace       bool

	// clients are the API clients the command opened; closeClients closes their idle
	// connections, so a process running many commands (the tests) holds none open: the hub
	// limits the connections one client holds.
	clients []*apiClient
}

func (g *globals) closeClients() {
	for _, c := range g.clients {
		c.hc.CloseIdleConnections()
	}
	g.clients = nil
}

func newRootCommand(stdout, stderr io.Writer) *cobra.Command {
	root, _ := newRoot(stdout, stderr)
	return root
}

// newRoot returns the root command and the globals its commands share.
func newRoot(stdout, stderr io.Writer) (*cobra.Command, *globals) {
	g := &globals{}
	root := &cobra.Command{
		Use:   "fleetctl",
		Short: "Manage the units and machines of a fleetsim hub (fleet API v1)",
		Long: `fleetctl submits, starts, stops and destroys fleet units on the machines of a fleetsim
hub through the hub's fleet API v1, like CoreOS fleet's fleetctl with its API driver.

Every global flag can also be set with FLEETCTL_<FLAG> (upper case, - as _), e.g.
FLEETCTL_ENDPOINT. Exit codes: 0 success, 1 an operation failed, 2 bad usage.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			cmd.Flags().VisitAll(func(f *pflag.Flag) {
				env := "FLEETCTL_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
				if v, ok := os.LookupEnv(env); ok && !f.Changed && err == nil {
					if serr := f.Value.Set(v); serr != nil {
						err = &usageError{fmt.Errorf("%s=%q: %w", env, v, serr)}
					}
				}
			})
			if err == nil && g.output != "text" && g.output != "json" {
				err = &usageError{fmt.Errorf("--output %q: must be text or json", g.output)}
			}
			return err
		},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err} })
	pf := root.PersistentFlags()
	pf.StringVar(&g.endpoint, "endpoint", "unix:///var/run/fleet.sock", "fleet API endpoint (unix://, http:// or https://)")
	pf.StringVar(&g.certFile, "cert-file", "", "TLS client certificate")
	pf.StringVar(&g.keyFile, "key-file", "", "TLS client key")
	pf.StringVar(&g.caFile, "ca-file", "", "CA bundle to verify the API's certificate")
	pf.StringVar(&g.token, "token", "", "bearer token (a Kubernetes token the hub checks with TokenReview)")
	pf.Float64Var(&g.requestTimeout, "request-timeout", 3.0, "seconds to wait for each API request")
	pf.StringVarP(&g.output, "output", "o", "text", "output format: text or json")

	listFlags := func(c *cobra.Command, fieldsDefault string) {
		c.Flags().BoolVar(&g.noLegend, "no-legend", false, "do not print a legend (column headers)")
		c.Flags().BoolVarP(&g.full, "full", "l", false, "do not ellipsize fields on output")
		c.Flags().String("fields", fieldsDefault, "columns to print, separated by commas")
		run := c.RunE
		c.RunE = func(cmd *cobra.Command, args []string) error {
			g.fields, _ = cmd.Flags().GetString("fields")
			return run(cmd, args)
		}
	}
	blockFlags := func(c *cobra.Command) {
		c.Flags().BoolVar(&g.noBlock, "no-block", false, "do not wait until the units reach the requested state")
		c.Flags().IntVar(&g.blockAttempts, "block-attempts", 0, "wait this many attempts of 2 s each (0: until done)")
	}
	replaceFlag := func(c *cobra.Command) {
		c.Flags().BoolVar(&g.replace, "replace", false, "replace units that exist with different content")
	}

	lm := &cobra.Command{Use: "list-machines", Short: "List the live machines", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return listMachines(g, cmd.OutOrStdout()) }}
	listFlags(lm, "machine,ip,metadata")
	lu := &cobra.Command{Use: "list-units", Short: "List the units' states as systemd reports them", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return listUnits(g, cmd.OutOrStdout()) }}
	listFlags(lu, "unit,machine,active,sub")
	lf := &cobra.Command{Use: "list-unit-files", Short: "List the units in the registry", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return listUnitFiles(g, cmd.OutOrStdout()) }}
	listFlags(lf, "unit,hash,dstate,state,target")

	submit := &cobra.Command{Use: "submit UNIT...", Short: "Upload unit files (desired state inactive)", Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return setState(g, cmd.OutOrStdout(), args, "") }}
	replaceFlag(submit)
	load := &cobra.Command{Use: "load UNIT...", Short: "Schedule units to machines without starting them", Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return setState(g, cmd.OutOrStdout(), args, "loaded") }}
	replaceFlag(load)
	blockFlags(load)
	start := &cobra.Command{Use: "start UNIT...", Short: "Schedule and start units", Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return setState(g, cmd.OutOrStdout(), args, "launched") }}
	replaceFlag(start)
	blockFlags(start)
	stop := &cobra.Command{Use: "stop UNIT...", Short: "Stop units (they stay loaded)", Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return changeState(g, cmd.OutOrStdout(), args, "loaded")
		}}
	blockFlags(stop)
	unload := &cobra.Command{Use: "unload UNIT...", Short: "Unschedule units (desired state inactive)", Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return changeState(g, cmd.OutOrStdout(), args, "inactive")
		}}
	blockFlags(unload)
	destroy := &cobra.Command{Use: "destroy UNIT...", Short: "Remove units from the registry and their machines", Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return destroyUnits(g, cmd.OutOrStdout(), args) }}
	blockFlags(destroy)
	cat := &cobra.Command{Use: "cat UNIT", Short: "Print a unit's file", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return catUnit(g, cmd.OutOrStdout(), args[0]) }}
	status := &cobra.Command{Use: "status UNIT...", Short: "Show what systemd reports for units, through their agents", Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return statusUnits(g, cmd.OutOrStdout(), args) }}
	restart := &cobra.Command{Use: "restart UNIT...", Short: "Stop and start units again", Args: cobra.MinimumNArgs(1),
		Long: `restart stops each unit (desired state loaded) and waits until its agent has stopped it,
then starts it (desired state launched) and, unless --no-block, waits until it runs, as
upstream fleetctl's restart does. The wait for the stop is not optional: an agent that never
saw the stop would not start the unit again.`,
		Example: "  fleetctl restart hello.service\n  fleetctl restart --block-attempts 10 web@1 web@2",
		RunE:    func(cmd *cobra.Command, args []string) error { return restartUnits(g, cmd.OutOrStdout(), args) }}
	blockFlags(restart)
	verify := &cobra.Command{Use: "verify UNIT_FILE...", Short: "Check unit files as the fleet API would (DEPRECATED: signatures are not supported)", Args: cobra.MinimumNArgs(1),
		Long: `verify checks local unit files without a hub: each must parse, have a valid unit name
(the file's base name, .service added as for every command) and [X-Fleet] options fleet
accepts, exactly the checks the fleet API makes when a unit is submitted. Upstream fleetctl's
verify checked unit signatures, a feature fleet dropped; that is not supported, and verify
says so on stderr.`,
		Example: "  fleetctl verify hello.service web@.service",
		RunE: func(cmd *cobra.Command, args []string) error {
			return verifyUnits(cmd.OutOrStdout(), cmd.ErrOrStderr(), args)
		}}
	ver := &cobra.Command{Use: "version", Short: "Print the version of fleetctl", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "fleetctl version %s\n", version())
			return err
		}}
	root.Version = version()
	root.SetVersionTemplate("fleetctl version {{.Version}}\n")
	root.AddCommand(lm, lu, lf, submit, load, start, stop, unload, destroy, cat, status, restart, verify, ver)
	return root, g
}

// version is the build fleetctl is: version, commit and build date (internal/version).
func version() string { return buildversion.Get().String() }

// unitName returns the unit name of an argument: its base name, with ".service" added when it
// has no known unit type.
func unitName(arg string) string {
	name := path.Base(arg)
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		for _, t := range unitfile.UnitTypes() {
			if name[i+1:] == t {
				return name
			}
		}
	}
	return name + ".service"
}

func shortID(id string, full bool) string {
	if full || len(id) <= 8 {
		return id
	}
	return id[:8] + "..."
}

func machineLegend(id, ip string, full bool) string {
	if id == "" {
		return "-"
	}
	s := shortID(id, full)
	if ip != "" {
		s += "/" + ip
	}
	return s
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// table prints rows with the selected fields.
func table(g *globals, w io.Writer, valid []string, rows []map[string]string) error {
	fields := strings.Split(g.fields, ",")
	for i, f := range fields {
		f = strings.TrimSpace(strings.ToLower(f))
		fields[i] = f
		ok := false
		for _, v := range valid {
			ok = ok || v == f
		}
		if !ok {
			return &usageError{fmt.Errorf("invalid field %q: valid fields are %s", f, strings.Join(valid, ", "))}
		}
	}
	tw := tabwriter.NewWriter(w, 0, 8, 1, '\t', 0)
	if !g.noLegend {
		up := make([]string, len(fields))
		for i, f := range fields {
			up[i] = strings.ToUpper(f)
		}
		fmt.Fprintln(tw, strings.Join(up, "\t"))
	}
	for _, r := range rows {
		vals := make([]string, len(fields))
		for i, f := range fields {
			vals[i] = dash(r[f])
		}
		fmt.Fprintln(tw, strings.Join(vals, "\t"))
	}
	return tw.Flush()
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func listMachines(g *globals, w io.Writer) error {
	c, err := newAPIClient(g)
	if err != nil {
		return &usageError{err}
	}
	ms, err := c.machines()
	if err != nil {
		return err
	}
	if g.output == "json" {
		return printJSON(w, nonNil(ms))
	}
	var rows []map[string]string
	for _, m := range ms {
		keys := make([]string, 0, len(m.Metadata))
		for k := range m.Metadata {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		md := make([]string, len(keys))
		for i, k := range keys {
			md[i] = k + "=" + m.Metadata[k]
		}
		rows = append(rows, map[string]string{"machine": shortID(m.ID, g.full), "ip": m.PrimaryIP, "metadata": strings.Join(md, ",")})
	}
	return table(g, w, []string{"machine", "ip", "metadata"}, rows)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func machineIPs(c *apiClient) map[string]string {
	ips := map[string]string{}
	if ms, err := c.machines(); err == nil {
		for _, m := range ms {
			ips[m.ID] = m.PrimaryIP
		}
	}
	return ips
}

func shortHash(h string, full bool) string {
	if full || len(h) <= 7 {
		return h
	}
	return h[:7]
}

func listUnits(g *globals, w io.Writer) error {
	c, err := newAPIClient(g)
	if err != nil {
		return &usageError{err}
	}
	sts, err := c.states("")
	if err != nil {
		return err
	}
	if g.output == "json" {
		return printJSON(w, nonNil(sts))
	}
	ips := machineIPs(c)
	var rows []map[string]string
	for _, s := range sts {
		rows = append(rows, map[string]string{"unit": s.Name, "machine": machineLegend(s.MachineID, ips[s.MachineID], g.full),
			"active": s.SystemdActiveState, "sub": s.SystemdSubState, "load": s.SystemdLoadState, "hash": shortHash(s.Hash, g.full)})
	}
	return table(g, w, []string{"active", "hash", "load", "machine", "sub", "unit"}, rows)
}

func fileOf(u *fleethttp.Unit) *unitfile.File {
	opts := make([]unitfile.UnitOption, 0, len(u.Options))
	for _, o := range u.Options {
		opts = append(opts, unitfile.UnitOption{Section: o.Section, Name: o.Name, Value: o.Value})
	}
	return unitfile.FromOptions(opts)
}

func isGlobal(u *fleethttp.Unit) bool {
	x, err := unitfile.ParseXFleet(fileOf(u), u.Name)
	return err == nil && x.Global
}

func listUnitFiles(g *globals, w io.Writer) error {
	c, err := newAPIClient(g)
	if err != nil {
		return &usageError{err}
	}
	us, err := c.units()
	if err != nil {
		return err
	}
	if g.output == "json" {
		return printJSON(w, nonNil(us))
	}
	ips := machineIPs(c)
	var rows []map[string]string
	for _, u := range us {
		f := fileOf(u)
		r := map[string]string{"unit": u.Name, "hash": shortHash(f.Hash().String(), g.full), "dstate": u.DesiredState,
			"state": u.CurrentState, "target": machineLegend(u.MachineID, ips[u.MachineID], g.full), "desc": f.Description(), "global": "false"}
		if isGlobal(u) {
			r["target"], r["state"], r["global"] = "global", "-", "true"
		}
		r["tmachine"] = r["target"]
		rows = append(rows, r)
	}
	return table(g, w, []string{"desc", "dstate", "global", "hash", "state", "target", "tmachine", "unit"}, rows)
}

// readUnitFile reads a local unit file for arg, if arg names one.
func readUnitFile(arg string) (*unitfile.File, bool, error) {
	b, err := os.ReadFile(arg)
	if os.IsNotExist(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	f, err := unitfile.Parse(string(b))
	if err != nil {
		return nil, false, fmt.Errorf("unit file %s: %w", arg, err)
	}
	return f, true, nil
}

func toOptions(f *unitfile.File) []*fleethttp.UnitOption {
	var out []*fleethttp.UnitOption
	for _, o := range f.Options() {
		out = append(out, &fleethttp.UnitOption{Section: o.Section, Name: o.Name, Value: o.Value})
	}
	return out
}

// ensure makes sure each unit exists in the registry, creating it from its local file; with
// --replace a unit whose local file differs is replaced.
func ensure(g *globals, c *apiClient, args []string) ([]string, error) {
	var names []string
	for _, arg := range args {
		name := unitName(arg)
		names = append(names, name)
		cur, err := c.unit(name)
		if err != nil {
			return nil, err
		}
		f, local, err := readUnitFile(arg)
		if err != nil {
			return nil, err
		}
		if cur == nil && !local {
			if f, err = instanceFile(c, arg, name); err != nil {
				return nil, err
			}
			local = f != nil
		}
		switch {
		case cur == nil && !local:
			return nil, fmt.Errorf("unable to find unit file %s and unit %s is not in the registry", arg, name)
		case cur == nil:
			if err := c.setUnit(&fleethttp.Unit{Name: name, Options: toOptions(f), DesiredState: "inactive"}); err != nil {
				return nil, fmt.Errorf("creating unit %s: %w", name, err)
			}
		case local && fileOf(cur).Hash() != f.Hash():
			if !g.replace {
				return nil, fmt.Errorf("unit %s already exists with different content; use --replace to replace it", name)
			}
			if err := c.setUnit(&fleethttp.Unit{Name: name, Options: toOptions(f), DesiredState: cur.DesiredState}); err != nil {
				return nil, fmt.Errorf("replacing unit %s: %w", name, err)
			}
		}
	}
	return names, nil
}

// instanceFile is the file of an instance (web@1.service) that is neither in the registry nor
// on disk: its template's from the registry (units.InstanceFile, the rule the simulator
// shares), or else the template's file next to arg, checked as the instance's. nil if name
// is not an instance or no template is found.
func instanceFile(c *apiClient, arg, name string) (*unitfile.File, error) {
	var lookupErr error
	f, err := units.InstanceFile(func(n string) *units.Unit {
		u, err := c.unit(n)
		if err != nil || u == nil {
			lookupErr = errors.Join(lookupErr, err)
			return nil
		}
		mu, err := units.New(n, fileOf(u))
		if err != nil {
			lookupErr = errors.Join(lookupErr, fmt.Errorf("template %s in the registry: %w", n, err))
			return nil
		}
		return mu
	}, name)
	if err := errors.Join(lookupErr, err); err != nil {
		return nil, err
	}
	if f != nil {
		return f, nil
	}
	tmpl, ok := unitfile.TemplateOf(name)
	if !ok {
		return nil, nil
	}
	tf, local, err := readUnitFile(filepath.Join(filepath.Dir(arg), tmpl))
	if err != nil || !local {
		return nil, err
	}
	if _, err := units.New(name, tf); err != nil {
		return nil, fmt.Errorf("instance %s of template file %s: %w", name, tmpl, err)
	}
	return tf, nil
}

// setState is submit (state ""), load and start: create what is missing, then set the state.
func setState(g *globals, w io.Writer, args []string, state string) error {
	c, err := newAPIClient(g)
	if err != nil {
		return &usageError{err}
	}
	names, err := ensure(g, c, args)
	if err != nil || state == "" {
		return err
	}
	return applyState(g, c, w, names, state)
}

// changeState is stop and unload: the units must exist.
func changeState(g *globals, w io.Writer, args []string, state string) error {
	c, err := newAPIClient(g)
	if err != nil {
		return &usageError{err}
	}
	var names []string
	for _, a := range args {
		names = append(names, unitName(a))
	}
	return applyState(g, c, w, names, state)
}

func applyState(g *globals, c *apiClient, w io.Writer, names []string, state string) error {
	var wait []*fleethttp.Unit
	for _, n := range names {
		u, err := c.unit(n)
		if err != nil {
			return err
		}
		if u == nil {
			return fmt.Errorf("unit %s does not exist", n)
		}
		if u.DesiredState != state {
			if err := c.setUnit(&fleethttp.Unit{Name: n, DesiredState: state}); err != nil {
				return fmt.Errorf("setting unit %s to %s: %w", n, state, err)
			}
		}
		if isGlobal(u) {
			verb := map[string]string{"launched": "start", "loaded": "load", "inactive": "unload"}[state]
			if state == "loaded" && u.DesiredState == "launched" {
				verb = "stop"
			}
			fmt.Fprintf(w, "Triggered global unit %s %s\n", n, verb)
			continue
		}
		wait = append(wait, u)
	}
	if g.noBlock {
		return nil
	}
	ips := machineIPs(c)
	for _, u := range wait {
		if err := waitState(g, c, u, state); err != nil {
			return err
		}
		if state == "inactive" {
			fmt.Fprintf(w, "Unit %s inactive\n", u.Name)
		} else {
			fmt.Fprintf(w, "Unit %s %s on %s\n", u.Name, state, machineLegend(u.MachineID, ips[u.MachineID], g.full))
		}
	}
	return nil
}

// waitState waits until u's currentState is state (fleet's: what the agent acted on), then,
// for launched, until systemd on its machine reports it loaded and active, as upstream's
// fleetctl does. It records the machine in u. A unit systemd cannot run (a load state other
// than loaded, or failed) is an error at once: no active unit will be found, however long
// one waits.
func waitState(g *globals, c *apiClient, u *fleethttp.Unit, state string) error {
	got, err := waitFor(g, func() (bool, error) {
		cur, err := c.unit(u.Name)
		if err != nil || cur == nil {
			return false, err
		}
		u.MachineID = cur.MachineID
		return cur.CurrentState == state, nil
	})
	if err != nil {
		return err
	}
	if !got {
		return fmt.Errorf("unit %s did not reach %s in %d attempts", u.Name, state, g.blockAttempts)
	}
	if state != "launched" {
		return nil
	}
	var last *fleethttp.UnitState
	got, err = waitFor(g, func() (bool, error) {
		sts, err := c.states(u.Name)
		if err != nil {
			return false, err
		}
		for _, s := range sts {
			if s.MachineID != u.MachineID {
				continue
			}
			last = s
			if s.SystemdLoadState != "loaded" || s.SystemdActiveState == "failed" {
				return false, fmt.Errorf("no active unit %s found: systemd on %s reports it %s, %s/%s",
					u.Name, shortID(u.MachineID, g.full), s.SystemdLoadState, s.SystemdActiveState, s.SystemdSubState)
			}
			return s.SystemdActiveState == "active", nil
		}
		return false, nil
	})
	if err != nil {
		return err
	}
	if !got {
		if last == nil {
			return fmt.Errorf("no active unit %s found: no state reported from %s in %d attempts", u.Name, shortID(u.MachineID, g.full), g.blockAttempts)
		}
		return fmt.Errorf("no active unit %s found: systemd on %s reports it %s/%s after %d attempts", u.Name, shortID(u.MachineID, g.full), last.SystemdActiveState, last.SystemdSubState, g.blockAttempts)
	}
	return nil
}

// waitFor polls done every 250 ms: forever with --block-attempts=0, else for that many
// attempts of 2 s.
func waitFor(g *globals, done func() (bool, error)) (bool, error) {
	var deadline time.Time
	if g.blockAttempts > 0 {
		deadline = time.Now().Add(time.Duration(g.blockAttempts) * 2 * time.Second)
	}
	for {
		ok, err := done()
		if err != nil || ok {
			return ok, err
		}
		if !deadline.IsZero() && time.Now().After(deadline) {
			return false, nil
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// destroyUnits deletes units and, unless --no-block, waits until they are gone (upstream
// waited only with --no-block: the condition was inverted).
func destroyUnits(g *globals, w io.Writer, args []string) error {
	c, err := newAPIClient(g)
	if err != nil {
		return &usageError{err}
	}
	for _, a := range args {
		name := unitName(a)
		if err := c.destroy(name); err != nil && !isNotFound(err) {
			return fmt.Errorf("destroying unit %s: %w", name, err)
		}
		if !g.noBlock {
			got, err := waitFor(g, func() (bool, error) {
				u, err := c.unit(name)
				if err != nil || u != nil {
					return false, err
				}
				sts, err := c.states(name)
				return err == nil && len(sts) == 0, err
			})
			if err != nil {
				return err
			}
			if !got {
				return fmt.Errorf("unit %s was not removed in %d attempts", name, g.blockAttempts)
			}
		}
		fmt.Fprintf(w, "Destroyed %s\n", name)
	}
	return nil
}

func catUnit(g *globals, w io.Writer, arg string) error {
	c, err := newAPIClient(g)
	if err != nil {
		return &usageError{err}
	}
	name := unitName(arg)
	u, err := c.unit(name)
	if err != nil {
		return err
	}
	if u == nil {
		return fmt.Errorf("unit %s not found", name)
	}
	if g.output == "json" {
		return printJSON(w, u)
	}
	_, err = io.WriteString(w, unitfile.Serialize(fileOf(u)))
	return err
}

func statusUnits(g *globals, w io.Writer, args []string) error {
	c, err := newAPIClient(g)
	if err != nil {
		return &usageError{err}
	}
	ips := machineIPs(c)
	var all []*fleethttp.UnitState
	for i, a := range args {
		name := unitName(a)
		u, err := c.unit(name)
		if err != nil {
			return err
		}
		if u == nil {
			return fmt.Errorf("unit %s does not exist", name)
		}
		sts, err := c.states(name)
		if err != nil {
			return err
		}
		all = append(all, sts...)
		if g.output == "json" {
			continue
		}
		if i > 0 {
			fmt.Fprintln(w)
		}
		if len(sts) == 0 {
			fmt.Fprintf(w, "Unit %s: no machine reports it (desired %s, %s)\n", name, u.DesiredState, dash(u.CurrentState))
			continue
		}
		for _, s := range sts {
			fmt.Fprintf(w, "● %s - %s\n", s.Name, fileOf(u).Description())
			fmt.Fprintf(w, "   Machine: %s\n", machineLegend(s.MachineID, ips[s.MachineID], true))
			fmt.Fprintf(w, "    Loaded: %s\n", s.SystemdLoadState)
			fmt.Fprintf(w, "    Active: %s (%s)\n", s.SystemdActiveState, s.SystemdSubState)
			fmt.Fprintf(w, "      Hash: %s\n", s.Hash)
		}
	}
	if g.output == "json" {
		return printJSON(w, nonNil(all))
	}
	return nil
}

// restartUnits is restart: stop (desired loaded) and wait for the agent to act on it, then
// start (launched) and wait as start does. A global unit is stopped and started the same
// way; it has no single current state, so the wait for its stop is for no machine to report
// it active any more.
func restartUnits(g *globals, w io.Writer, args []string) error {
	c, err := newAPIClient(g)
	if err != nil {
		return &usageError{err}
	}
	ips := machineIPs(c)
	for _, a := range args {
		name := unitName(a)
		u, err := c.unit(name)
		if err != nil {
			return err
		}
		if u == nil {
			return fmt.Errorf("unit %s does not exist", name)
		}
		if u.DesiredState != "launched" {
			return fmt.Errorf("unable to restart unit %s: desired state %s, not launched", name, u.DesiredState)
		}
		if err := c.setUnit(&fleethttp.Unit{Name: name, DesiredState: "loaded"}); err != nil {
			return fmt.Errorf("stopping unit %s: %w", name, err)
		}
		if isGlobal(u) {
			got, err := waitFor(g, func() (bool, error) {
				sts, err := c.states(name)
				if err != nil {
					return false, err
				}
				for _, s := range sts {
					if s.SystemdActiveState == "active" || s.SystemdActiveState == "activating" {
						return false, nil
					}
				}
				return true, nil
			})
			if err != nil {
				return err
			}
			if !got {
				return fmt.Errorf("global unit %s was not stopped in %d attempts", name, g.blockAttempts)
			}
		} else if err := waitState(g, c, u, "loaded"); err != nil {
			return err
		}
		if err := c.setUnit(&fleethttp.Unit{Name: name, DesiredState: "launched"}); err != nil {
			return fmt.Errorf("starting unit %s: %w", name, err)
		}
		if isGlobal(u) {
			fmt.Fprintf(w, "Triggered global unit %s restart\n", name)
			continue
		}
		if !g.noBlock {
			if err := waitState(g, c, u, "launched"); err != nil {
				return err
			}
		}
		fmt.Fprintf(w, "Unit %s restarted on %s\n", name, machineLegend(u.MachineID, ips[u.MachineID], g.full))
	}
	return nil
}

// verifyUnits is verify: each local unit file must pass the fleet API's checks for a new unit.
func verifyUnits(w, stderr io.Writer, args []string) error {
	fmt.Fprintln(stderr, "WARNING: unit signatures are not supported (upstream deprecated them); checking unit files only")
	var errs []error
	for _, a := range args {
		name := unitName(a)
		f, local, err := readUnitFile(a)
		if err == nil && !local {
			err = fmt.Errorf("unit file %s not found", a)
		}
		if err == nil {
			err = verifyFile(name, f)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(w, "Unit %s: OK\n", name)
	}
	return errors.Join(errs...)
}

// verifyFile makes the fleet API's checks of a new unit (prod/fleethttp createUnit): a valid
// name, [X-Fleet] options fleet accepts, and values systemd reads as fleet does.
func verifyFile(name string, f *unitfile.File) error {
	if _, err := units.New(name, f); err != nil {
		return err
	}
	if err := f.Validate(); err != nil {
		return fmt.Errorf("unit %s: %w", name, err)
	}
	return nil
}
