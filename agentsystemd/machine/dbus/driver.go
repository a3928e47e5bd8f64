package dbus

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	sddbus "github.com/coreos/go-systemd/v22/dbus"
	godbus "github.com/godbus/dbus/v5"

	"github.com/fleetsim/fleetsim/agentsystemd"
	"github.com/fleetsim/fleetsim/model/unitfile"
)

// DefaultUnitDir is where the agent writes unit files unless told otherwise.
const DefaultUnitDir = "/run/fleet/units"

// jobTimeout bounds how long a start or stop job may take before the task fails; the next
// round then decides again from what systemd reports.
const jobTimeout = 2 * time.Minute

// Driver drives one machine's systemd. It is safe for concurrent use; tasks are serialised.
type Driver struct {
	conn *sddbus.Conn
	dir  string

	mu sync.Mutex
	// known holds the names this driver has loaded: a unit whose file is gone may still be
	// started in systemd, and Units keeps reporting it until it is stopped and forgotten.
	known map[string]bool
}

// Connect opens a connection to systemd on the system bus (DBUS_SYSTEM_BUS_ADDRESS, or
// /run/dbus/system_bus_socket), or on the bus at address if it is not empty (a sandboxed
// systemd's).
func Connect(ctx context.Context, address string) (*sddbus.Conn, error) {
	var conn *sddbus.Conn
	var err error
	if address == "" {
		conn, err = sddbus.NewSystemConnectionContext(ctx)
	} else {
		conn, err = sddbus.NewConnection(func() (*godbus.Conn, error) {
			c, err := godbus.Dial(address, godbus.WithContext(ctx))
			if err != nil {
				return nil, err
			}
			if err := c.Auth(nil); err != nil {
				_ = c.Close()
				return nil, err
			}
			if err := c.Hello(); err != nil {
				_ = c.Close()
				return nil, err
			}
			return c, nil
		})
	}
	if err != nil {
		return nil, fmt.Errorf("connect to systemd over D-Bus: %w", err)
	}
	return conn, nil
}

// Dial connects to the system bus (DBUS_SYSTEM_BUS_ADDRESS, or /run/dbus/system_bus_socket)
// and returns a Driver keeping its unit files in dir. If address is not empty it is used
// instead of the environment. The connection is closed when ctx ends.
func Dial(ctx context.Context, address, dir string) (*Driver, error) {
	conn, err := Connect(ctx, address)
	if err != nil {
		return nil, err
	}
	return New(conn, dir)
}

// New returns a Driver over an open connection, keeping its unit files in dir (created if
// missing). The Driver owns conn; Close closes it.
func New(conn *sddbus.Conn, dir string) (*Driver, error) {
	if dir == "" {
		dir = DefaultUnitDir
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("unit directory %q: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("create unit directory: %w", err)
	}
	return &Driver{conn: conn, dir: abs, known: map[string]bool{}}, nil
}

// Close closes the D-Bus connection.
func (d *Driver) Close() { d.conn.Close() }

// Connected reports whether the D-Bus connection is still up.
func (d *Driver) Connected() bool { return d.conn.Connected() }

// UnitDir returns the directory holding the agent's unit files.
func (d *Driver) UnitDir() string { return d.dir }

// Version returns systemd's version string.
func (d *Driver) Version(ctx context.Context) (string, error) {
	v, err := d.conn.GetManagerProperty("Version")
	if err != nil {
		return "", fmt.Errorf("read systemd version: %w", err)
	}
	return strings.Trim(v, `"`), nil
}

// path returns the file path of a unit, refusing names that are not valid unit names or that
// would leave the directory.
func (d *Driver) path(name string) (string, error) {
	if err := unitfile.ValidateName(name); err != nil {
		return "", err
	}
	if name != filepath.Base(name) || strings.ContainsAny(name, "/\\") || name == "." || name == ".." {
		return "", fmt.Errorf("invalid unit name %q: not a single path element", name)
	}
	p := filepath.Join(d.dir, name)
	if filepath.Dir(p) != d.dir {
		return "", fmt.Errorf("invalid unit name %q: outside %s", name, d.dir)
	}
	return p, nil
}

// Units implements agentsystemd.Systemd: every unit file in the directory (with the hash of its
// parsed content) and every name this driver loaded, with the states systemd reports.
func (d *Driver) Units() ([]agentsystemd.CurrentUnit, error) {
	return d.UnitsContext(context.Background())
}

// UnitsContext is Units with a context.
func (d *Driver) UnitsContext(ctx context.Context) ([]agentsystemd.CurrentUnit, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	entries, err := os.ReadDir(d.dir)
	if err != nil {
		return nil, fmt.Errorf("read unit directory: %w", err)
	}
	hashes := map[string]unitfile.Hash{}
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || unitfile.ValidateName(name) != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(d.dir, name))
		if err != nil {
			return nil, fmt.Errorf("read unit file %s: %w", name, err)
		}
		f, err := unitfile.Parse(string(b))
		if err != nil {
			// A file we cannot parse is not ours to keep: report a hash no desired unit has,
			// so Decide rewrites or removes it.
			hashes[name] = unitfile.Hash{0xff}
			continue
		}
		hashes[name] = f.Hash()
	}
	names := make([]string, 0, len(hashes)+len(d.known))
	for n := range hashes {
		names = append(names, n)
	}
	for n := range d.known {
		if _, ok := hashes[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	out := make([]agentsystemd.CurrentUnit, 0, len(names))
	for _, n := range names {
		c, err := d.state(ctx, n)
		if err != nil {
			return nil, err
		}
		c.Hash = hashes[n]
		if c.Hash.IsZero() && !c.Started() {
			// file gone and systemd no longer runs it: forget it.
			delete(d.known, n)
			if unknownOrDead(c) {
				continue
			}
		}
		out = append(out, c)
	}
	return out, nil
}

func unknownOrDead(c agentsystemd.CurrentUnit) bool {
	return c.LoadState == agentsystemd.LoadNotFound || c.ActiveState == agentsystemd.ActiveInactive
}

// State returns what systemd reports for one unit (its Hash is left zero).
func (d *Driver) state(ctx context.Context, name string) (agentsystemd.CurrentUnit, error) {
	props, err := d.conn.GetUnitPropertiesContext(ctx, name)
	if err != nil {
		return agentsystemd.CurrentUnit{}, fmt.Errorf("read state of %s from systemd: %w", name, err)
	}
	c := agentsystemd.CurrentUnit{Name: name}
	c.LoadState, _ = props["LoadState"].(string)
	c.ActiveState, _ = props["ActiveState"].(string)
	c.SubState, _ = props["SubState"].(string)
	c.NeedDaemonReload, _ = props["NeedDaemonReload"].(bool)
	return c, nil
}

// MainPID returns the main process of a service unit (0 if none).
func (d *Driver) MainPID(ctx context.Context, name string) (uint32, error) {
	p, err := d.conn.GetServicePropertyContext(ctx, name, "MainPID")
	if err != nil {
		return 0, fmt.Errorf("read MainPID of %s: %w", name, err)
	}
	pid, _ := p.Value.Value().(uint32)
	return pid, nil
}

// Run implements agentsystemd.Systemd: it performs one task.
func (d *Driver) Run(t agentsystemd.Task) error { return d.RunContext(context.Background(), t) }

// RunContext is Run with a context.
func (d *Driver) RunContext(ctx context.Context, t agentsystemd.Task) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch t.Kind {
	case agentsystemd.TaskDaemonReload:
		if err := d.conn.ReloadContext(ctx); err != nil {
			return fmt.Errorf("daemon-reload: %w", err)
		}
		return nil
	case agentsystemd.TaskLoad:
		return d.load(ctx, t)
	case agentsystemd.TaskUnload:
		return d.unload(ctx, t.Unit)
	case agentsystemd.TaskStart:
		if _, err := d.path(t.Unit); err != nil {
			return err
		}
		return d.job(ctx, "start", t.Unit, d.conn.StartUnitContext)
	case agentsystemd.TaskStop:
		if _, err := d.path(t.Unit); err != nil {
			return err
		}
		return d.job(ctx, "stop", t.Unit, d.conn.StopUnitContext)
	}
	return fmt.Errorf("unknown task kind %v", t.Kind)
}

func (d *Driver) load(ctx context.Context, t agentsystemd.Task) error {
	p, err := d.path(t.Unit)
	if err != nil {
		return err
	}
	if t.File == nil {
		return fmt.Errorf("load %s: the task carries no unit file", t.Unit)
	}
	if !t.Hash.IsZero() && t.File.Hash() != t.Hash {
		return fmt.Errorf("load %s: unit file does not match hash %s", t.Unit, t.Hash.Short())
	}
	tmp, err := os.CreateTemp(d.dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("load %s: %w", t.Unit, err)
	}
	_, werr := tmp.WriteString(unitfile.Serialize(t.File))
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr, os.Chmod(tmp.Name(), 0o644)); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("load %s: write unit file: %w", t.Unit, err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("load %s: %w", t.Unit, err)
	}
	d.known[t.Unit] = true
	if _, err := d.conn.LinkUnitFilesContext(ctx, []string{p}, true, true); err != nil {
		return fmt.Errorf("load %s: link unit file: %w", t.Unit, err)
	}
	// A unit with an [Install] section is enabled (runtime, forced), as upstream's agent did
	// ([Unit Files › Definition of the Install Section]); if systemd refuses, the load fails
	// and the file is removed, so the next round tries again from scratch.
	if unitfile.HasInstall(t.File) {
		if _, _, err := d.conn.EnableUnitFilesContext(ctx, []string{p}, true, true); err != nil {
			_, _ = d.conn.DisableUnitFilesContext(ctx, []string{t.Unit}, true)
			_ = os.Remove(p)
			return fmt.Errorf("load %s: enable its [Install] section: %w", t.Unit, err)
		}
	}
	return nil
}

func (d *Driver) unload(ctx context.Context, name string) error {
	p, err := d.path(name)
	if err != nil {
		return err
	}
	if _, err := d.conn.DisableUnitFilesContext(ctx, []string{name}, true); err != nil {
		return fmt.Errorf("unload %s: disable runtime link: %w", name, err)
	}
	// Only a failed unit has anything to reset; systemd refuses others, which is fine.
	_ = d.conn.ResetFailedUnitContext(ctx, name)
	if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("unload %s: %w", name, err)
	}
	return nil
}

type jobFunc func(ctx context.Context, name, mode string, ch chan<- string) (int, error)

func (d *Driver) job(ctx context.Context, what, name string, f jobFunc) error {
	ch := make(chan string, 1)
	if _, err := f(ctx, name, "replace", ch); err != nil {
		return fmt.Errorf("%s %s: %w", what, name, err)
	}
	timer := time.NewTimer(jobTimeout)
	defer timer.Stop()
	select {
	case res := <-ch:
		if res != "done" {
			return fmt.Errorf("%s %s: job %s", what, name, res)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s %s: %w", what, name, ctx.Err())
	case <-timer.C:
		return fmt.Errorf("%s %s: job did not finish within %v", what, name, jobTimeout)
	}
}

// Watch calls notify whenever systemd reports a change of any unit's ActiveState or SubState,
// until ctx ends. The agent uses it to run a round and republish states at once rather than at
// its next tick.
func (d *Driver) Watch(ctx context.Context, notify func()) error {
	if err := d.conn.Subscribe(); err != nil {
		return fmt.Errorf("subscribe to systemd signals: %w", err)
	}
	ch := make(chan *sddbus.PropertiesUpdate, 64)
	errs := make(chan error, 8)
	d.conn.SetPropertiesSubscriber(ch, errs)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case u := <-ch:
				if u != nil && d.isOurs(u.UnitName) {
					notify()
				}
			case <-errs:
			}
		}
	}()
	return nil
}

func (d *Driver) isOurs(name string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.known[name] {
		return true
	}
	if p, err := d.path(name); err == nil {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}
