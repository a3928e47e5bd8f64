// Package sdtest starts real systemd instances for tests, each the PID 1 of a systemd-nspawn
// container made by hack/systemd-sandbox.sh (host /usr on a tmpfs root, its own cgroup, never the
// cgroup root), and stops each by PID when the test ends, whether it passed or not.
package sdtest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Sandbox is one running systemd.
type Sandbox struct {
	// Dir is the sandbox's state directory.
	Dir string
	// UnitDir is a directory bind-mounted at the same path inside the container; agents write
	// their unit files there.
	UnitDir string
	// BusAddress is the D-Bus address of the container's system bus, for DBUS_SYSTEM_BUS_ADDRESS.
	BusAddress string
	// InitPID is the container's systemd as seen from the host.
	InitPID string
}

// Script returns the path of systemd-sandbox.sh: the copy hack/test-assets.sh installs next to
// the server binaries (KUBEBUILDER_ASSETS), or else the repository's hack/ copy.
func Script() (string, error) {
	if a := os.Getenv("KUBEBUILDER_ASSETS"); a != "" {
		p := filepath.Join(a, "systemd-sandbox.sh")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	_, file, _, ok := runtime.Caller(0)
	if ok {
		p := filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "hack", "systemd-sandbox.sh")
		if _, err := os.Stat(p); err == nil {
			return filepath.Clean(p), nil
		}
	}
	return "", fmt.Errorf("systemd-sandbox.sh not found (run hack/test-assets.sh)")
}

// Available reports why sandboxes cannot start here, or nil if they can.
func Available() error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("systemd sandboxes need root")
	}
	if _, err := exec.LookPath("systemd-nspawn"); err != nil {
		return fmt.Errorf("systemd-nspawn not found (apt-get install systemd-container, or run hack/test-assets.sh)")
	}
	if _, err := Script(); err != nil {
		return err
	}
	return nil
}

// Require skips the test when sandboxes cannot start here, or fails it when
// FLEETSIM_REQUIRE_SERVERS is set.
func Require(t testing.TB) {
	t.Helper()
	if err := Available(); err != nil {
		if os.Getenv("FLEETSIM_REQUIRE_SERVERS") != "" {
			t.Fatalf("FLEETSIM_REQUIRE_SERVERS is set but: %v", err)
		}
		t.Skipf("no systemd sandbox: %v", err)
	}
}

// Start starts a sandboxed systemd and registers its stop with t.Cleanup.
func Start(t testing.TB) *Sandbox {
	t.Helper()
	Require(t)
	script, _ := Script()
	// A short path: the bus socket path must fit in sun_path (108 bytes).
	dir, err := os.MkdirTemp("", "sdbox")
	if err != nil {
		t.Fatalf("sandbox dir: %v", err)
	}
	s := &Sandbox{Dir: dir, UnitDir: filepath.Join(dir, "units"),
		BusAddress: "unix:path=" + filepath.Join(dir, "bus", "system_bus_socket")}
	t.Cleanup(func() { s.stop(t, script) })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, script, "start", dir)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("start systemd sandbox: %v\n%s", err, out.String())
	}
	pid, _ := os.ReadFile(filepath.Join(dir, "init.pid"))
	s.InitPID = strings.TrimSpace(string(pid))
	t.Logf("systemd sandbox %s: %s", dir, strings.TrimSpace(out.String()))
	return s
}

// stop stops the container by the PID the script recorded, and removes the state directory.
func (s *Sandbox) stop(t testing.TB, script string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, script, "stop", s.Dir).CombinedOutput()
	if err != nil {
		t.Errorf("stop systemd sandbox %s: %v\n%s", s.Dir, err, out)
		return
	}
	if err := os.RemoveAll(s.Dir); err != nil {
		t.Logf("remove sandbox dir: %v", err)
	}
}

// Systemctl runs systemctl inside the container (for test diagnostics and cross-checks).
func (s *Sandbox) Systemctl(args ...string) (string, error) {
	a := append([]string{"-t", s.InitPID, "-a", "systemctl", "--no-pager"}, args...)
	out, err := exec.Command("nsenter", a...).CombinedOutput()
	return string(out), err
}
