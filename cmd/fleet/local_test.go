package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetsim/fleetsim/agentsystemd/machine/dbus/sdtest"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/prod/fleethttp"
	"github.com/fleetsim/fleetsim/prod/local"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// runAsFleet makes the test binary act as the fleet binary when `fleet local up` starts it
// (--fleet-binary is the test binary): the end-to-end test runs the very code under test
// in its hub, member and agent processes, without building another binary.
const runAsFleet = "FLEETSIM_TEST_RUN_AS_FLEET"

func TestMain(m *testing.M) {
	if os.Getenv(runAsFleet) == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
		code := execute(ctx, os.Args[1:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// requireAssets is KUBEBUILDER_ASSETS when it holds kube-apiserver and etcd; without them
// it fails under FLEETSIM_REQUIRE_SERVERS (or CI) and skips otherwise, saying so.
func requireAssets(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: skips the tests that start kube-apiserver and etcd")
	}
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	for _, b := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(assets, b)); assets == "" || err != nil {
			msg := fmt.Sprintf("no %s in KUBEBUILDER_ASSETS=%q: run `export KUBEBUILDER_ASSETS=$(hack/test-assets.sh)`", b, assets)
			if os.Getenv("FLEETSIM_REQUIRE_SERVERS") != "" || os.Getenv("CI") != "" {
				t.Fatal(msg)
			}
			t.Skip("skipped when run by hand without a real API server: " + msg)
		}
	}
	return assets
}

// TestLocalUpPlacesAndRunsAUnitThenDownStopsEverything: `fleet local up` with two members
// and a machine (real kube-apiservers, etcd, fleet hub, fleet member and fleet agent
// processes, a systemd sandbox) takes the sample placement to Available on both members
// and runs the sample unit on the machine through the fleet API with the written fleetctl
// credentials; `fleet local down` leaves none of the recorded processes running and
// --purge removes the state.
func TestLocalUpPlacesAndRunsAUnitThenDownStopsEverything(t *testing.T) {
	assets := requireAssets(t)
	sdtest.Require(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(runAsFleet, "1")
	// Short: the machine's D-Bus socket lives under it, and a Unix socket path is at most
	// 107 bytes (t.TempDir's names are longer).
	tmp, err := os.MkdirTemp("", "fl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	dir := filepath.Join(tmp, "local")
	ctx := context.Background()
	var out, logs syncBuffer
	up := []string{"local", "up", "--state-dir", dir, "--members", "2", "--machines", "1", "--assets", assets, "--fleet-binary", self}
	if code := execute(ctx, up, &out, &logs); code != exitOK {
		t.Fatalf("fleet %v = %d; stderr:\n%s", up, code, logs.String())
	}
	st, err := local.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = localDown(st, io.Discard) }) // whatever happens below

	// A second up on the same state directory is refused: it runs.
	if code := execute(ctx, up, io.Discard, &logs); code != exitInvalid || !strings.Contains(logs.String(), "already runs a local fleet") {
		t.Errorf("a second up = %d, want %d and \"already runs a local fleet\"; stderr:\n%s", code, exitInvalid, logs.String())
	}

	var status localStatus
	var sout bytes.Buffer
	if code := execute(ctx, []string{"local", "status", "--state-dir", dir, "-o", "json"}, &sout, &logs); code != exitOK {
		t.Fatalf("status = %d; stderr:\n%s", code, logs.String())
	}
	if err := json.Unmarshal(sout.Bytes(), &status); err != nil {
		t.Fatalf("status -o json: %v\n%s", err, sout.String())
	}
	var members []string
	for _, m := range status.Members {
		members = append(members, m.Name+" joined="+m.Joined)
	}
	if diff := cmp.Diff([]string{"member-1 joined=True", "member-2 joined=True"}, members); diff != "" {
		t.Errorf("status members (-want +got):\n%s", diff)
	}
	var procs []string
	for _, p := range status.Processes {
		procs = append(procs, fmt.Sprintf("%s running=%v", p.Name, p.Running))
	}
	wantProcs := []string{"etcd running=true", "hub-apiserver running=true", "fleet-hub running=true",
		"member-1-apiserver running=true", "fleet-member-member-1 running=true",
		"member-2-apiserver running=true", "fleet-member-member-2 running=true", "fleet-agent-machine-1 running=true"}
	if diff := cmp.Diff(wantProcs, procs); diff != "" {
		t.Errorf("status processes (-want +got):\n%s", diff)
	}

	// The sample placement, Available on both members.
	hubCfg, err := loadConfig(status.Hub.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	hub := testenv.Client(t, hubCfg)
	applyFile(t, hub, filepath.Join("..", "..", "config", "samples", "placement.yaml"))
	testenv.Eventually(t, "hello-placement Available on both members", func() error {
		crp := &v1beta1.ClusterResourcePlacement{}
		if err := hub.Get(ctx, client.ObjectKey{Name: "hello-placement"}, crp); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(crp.Status.Conditions, "ClusterResourcePlacementAvailable") {
			return fmt.Errorf("not Available: %v", crp.Status.Conditions)
		}
		var got []string
		for _, pl := range crp.Status.PlacementStatuses {
			if meta.IsStatusConditionTrue(pl.Conditions, "Available") {
				got = append(got, pl.ClusterName)
			}
		}
		if diff := cmp.Diff([]string{"member-1", "member-2"}, got); diff != "" {
			return fmt.Errorf("available on (-want +got):\n%s", diff)
		}
		return nil
	})
	for _, m := range status.Members {
		cfg, err := loadConfig(m.Kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		cm := &corev1.ConfigMap{}
		if err := testenv.Client(t, cfg).Get(ctx, client.ObjectKey{Namespace: "hello", Name: "hello-config"}, cm); err != nil {
			t.Errorf("%s: the placed ConfigMap: %v", m.Name, err)
		} else if cm.Data["greeting"] != "hello from the hub" {
			t.Errorf("%s: greeting %q", m.Name, cm.Data["greeting"])
		}
	}

	// The sample unit, running on the machine, through the fleet API with fleetctl's
	// credentials from fleetctl.env.
	api := fleetAPIClient(t, status.FleetctlEnv)
	unit := &fleethttp.Unit{Name: "hello.service", DesiredState: "launched", Options: []*fleethttp.UnitOption{
		{Section: "Unit", Name: "Description", Value: "Hello from fleet"},
		{Section: "Service", Name: "ExecStart", Value: "/bin/sh -c 'while true; do echo hello; sleep 5; done'"}}}
	if err := api.put("/units/hello.service", unit); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			var units fleethttp.UnitPage
			_ = api.get("/units", &units)
			b, _ := json.Marshal(units)
			t.Logf("units: %s\nhub log:\n%s\nagent log:\n%s", b, local.Tail(filepath.Join(dir, "hub", "fleet-hub.log"), 30),
				local.Tail(filepath.Join(dir, "machine-1", "fleet-agent.log"), 30))
		}
	})
	testenv.Eventually(t, "hello.service running on machine-1", func() error {
		var page fleethttp.UnitStatePage
		if err := api.get("/state", &page); err != nil {
			return err
		}
		for _, s := range page.States {
			if s.Name == "hello.service" && s.MachineID == "machine-1" && s.SystemdSubState == "running" {
				return nil
			}
		}
		b, _ := json.Marshal(page.States)
		return fmt.Errorf("states %s", b)
	})

	// down stops every recorded process; --purge removes the state.
	var downOut bytes.Buffer
	if code := execute(ctx, []string{"local", "down", "--state-dir", dir, "--purge"}, &downOut, &logs); code != exitOK {
		t.Fatalf("down = %d; stderr:\n%s", code, logs.String())
	}
	for _, p := range st.Processes {
		if p.Alive() {
			t.Errorf("%s (pid %d) still runs after down", p.Name, p.PID)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("state dir after down --purge: %v, want it gone", err)
	}
	if code := execute(ctx, []string{"local", "status", "--state-dir", dir}, io.Discard, &logs); code != exitFailed || !strings.Contains(logs.String(), "no local fleet") {
		t.Errorf("status after purge = %d, want %d and \"no local fleet\"", code, exitFailed)
	}
}

// applyFile creates every object of a multi-document YAML file.
func applyFile(t *testing.T, c client.Client, path string) {
	t.Helper()
	for _, u := range decodeFile(t, path) {
		if err := c.Create(context.Background(), u); err != nil {
			t.Fatalf("%s: create %s %s: %v", path, u.GetKind(), u.GetName(), err)
		}
	}
}

// fleetAPIHTTP is a fleet API v1 client with the credentials of a fleetctl.env.
type fleetAPIHTTP struct {
	base string
	hc   *http.Client
}

func fleetAPIClient(t *testing.T, envFile string) *fleetAPIHTTP {
	t.Helper()
	b, err := os.ReadFile(envFile)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		k, v, _ := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		env[k] = v
	}
	pem, err := os.ReadFile(env["FLEETCTL_CA_FILE"])
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	cert, err := tls.LoadX509KeyPair(env["FLEETCTL_CERT_FILE"], env["FLEETCTL_KEY_FILE"])
	if err != nil {
		t.Fatal(err)
	}
	return &fleetAPIHTTP{base: env["FLEETCTL_ENDPOINT"] + "/fleet/v1", hc: &http.Client{Timeout: 10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}}}}
}

func (a *fleetAPIHTTP) put(path string, body any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequest(http.MethodPut, a.base+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		msg, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("PUT %s: %s %s", path, resp.Status, msg)
	}
	return nil
}

func (a *fleetAPIHTTP) get(path string, out any) error {
	resp, err := a.hc.Get(a.base + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("GET %s: %s %s", path, resp.Status, msg)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}
