package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/fleetsim/fleetsim/agentsystemd/machine/dbus/sdtest"
	"github.com/fleetsim/fleetsim/prod/fleethttp"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// proc is a process the test started; it is killed by PID when the test ends.
type proc struct {
	cmd *exec.Cmd
	log string
}

func startProc(t *testing.T, dir, name, bin string, args ...string) *proc {
	t.Helper()
	logPath := filepath.Join(dir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	p := &proc{cmd: cmd, log: logPath}
	t.Cleanup(func() {
		p.kill(syscall.SIGTERM)
		f.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("%s log (last 4 KiB):\n%s", name, tail(b, 4096))
		}
	})
	return p
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// kill signals the process by PID and waits for it.
func (p *proc) kill(sig syscall.Signal) {
	if p.cmd.ProcessState != nil {
		return
	}
	_ = p.cmd.Process.Signal(sig)
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// certs writes a CA, a server certificate for 127.0.0.1 and a client certificate for
// CN=fleet-admin in system:masters, and returns their paths.
func certs(t *testing.T, dir string) (ca, srvCert, srvKey, cliCert, cliKey string) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "e2e CA"}, IsCA: true, BasicConstraintsValid: true,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), KeyUsage: x509.KeyUsageCertSign}
	caDER, _ := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	caCert, _ := x509.ParseCertificate(caDER)
	ca = filepath.Join(dir, "ca.crt")
	writePEM(t, ca, "CERTIFICATE", caDER)
	issue := func(name string, serial int64, subj pkix.Name, ip net.IP) (string, string) {
		k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: subj, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
		if ip != nil {
			tmpl.IPAddresses = []net.IP{ip}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kd, _ := x509.MarshalECPrivateKey(k)
		c, kp := filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
		writePEM(t, c, "CERTIFICATE", der)
		writePEM(t, kp, "EC PRIVATE KEY", kd)
		return c, kp
	}
	srvCert, srvKey = issue("server", 2, pkix.Name{CommonName: "fleet-api"}, net.ParseIP("127.0.0.1"))
	cliCert, cliKey = issue("client", 3, pkix.Name{CommonName: "fleet-admin", Organization: []string{"system:masters"}}, nil)
	return
}

func kubeconfig(t *testing.T, cfg *rest.Config, dir string) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["hub"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts["hub"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: "admin"}
	kc.CurrentContext = "hub"
	p := filepath.Join(dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, p); err != nil {
		t.Fatal(err)
	}
	return p
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// fleetctl runs fleetctl in process and returns its exit code and output.
func fleetctl(g []string, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := execute(context.Background(), append(append([]string{}, g...), args...), &out, &errb)
	return code, out.String(), errb.String()
}

// cols is tabwriter output with each run of padding tabs as one space.
func cols(s string) string { return regexp.MustCompile("\t+").ReplaceAllString(s, " ") }

func eventually(t *testing.T, what string, f func() error) {
	t.Helper()
	var err error
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		if err = f(); err == nil {
			return
		}
	}
	t.Fatalf("%s: still %v after 2m", what, err)
}

func sdState(sb *sdtest.Sandbox, name string) string {
	out, _ := sb.Systemctl("show", "-p", "ActiveState", "-p", "SubState", "--value", name)
	return strings.Join(strings.Fields(out), "/")
}

// TestFleetctlEndToEnd: the real `fleet` binary as a hub (with its fleet API v1 over TLS) and
// two agents, each on its own real systemd, driven by fleetctl with a client certificate, as
// upstream fleetctl's API driver is used.
func TestFleetctlEndToEnd(t *testing.T) {
	sbs := []*sdtest.Sandbox{sdtest.Start(t), sdtest.Start(t)}
	env := testenv.StartEnv(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "fleet")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/fleetsim/fleetsim/cmd/fleet").CombinedOutput(); err != nil {
		t.Fatalf("go build fleet: %v\n%s", err, out)
	}
	kc := kubeconfig(t, env.Config, dir)
	ca, sc, sk, cc, ck := certs(t, dir)
	api := freePort(t)
	hubArgs := []string{"hub", "--kubeconfig", kc, "--leader-elect=false", "--metrics-bind-address", "0", "--health-probe-bind-address", "0",
		"--machine-ttl", "15s", "--engine-lease-ttl", "3s", "--fleet-api-bind-address", api,
		"--fleet-api-tls-cert-file", sc, "--fleet-api-tls-key-file", sk, "--fleet-api-client-ca-file", ca}
	hub := startProc(t, dir, "hub", bin, hubArgs...)
	agents := map[string]*proc{}
	for i, sb := range sbs {
		id := fmt.Sprintf("m%d", i+1)
		agents[id] = startProc(t, dir, "agent-"+id, bin, "agent", "--kubeconfig", kc, "--machine-id", id, "--public-ip", fmt.Sprintf("10.0.0.%d", i+1),
			"--metadata", "role=web", "--dbus-address", sb.BusAddress, "--unit-dir", sb.UnitDir, "--interval", "1s", "--machine-ttl", "15s",
			"--metrics-bind-address", "0", "--health-probe-bind-address", "0")
	}
	sbOf := map[string]*sdtest.Sandbox{"m1": sbs[0], "m2": sbs[1]}
	g := []string{"--endpoint", "https://" + api, "--ca-file", ca, "--cert-file", cc, "--key-file", ck, "--request-timeout", "20"}

	eventually(t, "list-machines", func() error {
		code, out, errs := fleetctl(g, "list-machines", "--no-legend")
		if code != 0 || strings.Count(out, "\n") != 2 || !strings.Contains(cols(out), "m1 10.0.0.1 role=web") {
			return fmt.Errorf("exit %d: %q %s", code, out, errs)
		}
		return nil
	})
	// Without a client certificate the API refuses.
	if code, _, errs := fleetctl([]string{"--endpoint", "https://" + api, "--ca-file", ca}, "list-units"); code != 1 || !strings.Contains(errs, "authentication required") {
		t.Fatalf("unauthenticated list-units: exit %d, %s", code, errs)
	}

	hello := filepath.Join(dir, "hello.service")
	if err := os.WriteFile(hello, []byte("[Unit]\nDescription=Hello\n\n[Service]\nExecStart=/bin/sleep 3600\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := fleetctl(g, "start", hello)
	if code != 0 || !strings.HasPrefix(out, "Unit hello.service launched on m") {
		t.Fatalf("start: exit %d: %q %s", code, out, errs)
	}
	machine := strings.Split(strings.TrimPrefix(out, "Unit hello.service launched on "), "/")[0]
	if got := sdState(sbOf[machine], "hello.service"); got != "active/running" {
		t.Fatalf("systemd on %s shows hello.service %s", machine, got)
	}
	_, out, _ = fleetctl(g, "list-units", "--no-legend")
	if !strings.Contains(cols(out), "hello.service "+machine+"/10.0.0.") || !strings.Contains(cols(out), "active running") {
		t.Fatalf("list-units:\n%s", out)
	}
	_, out, _ = fleetctl(g, "list-unit-files", "--output", "json")
	var files []fleethttp.Unit
	if err := json.Unmarshal([]byte(out), &files); err != nil || len(files) != 1 || files[0].CurrentState != "launched" || files[0].MachineID != machine {
		t.Fatalf("list-unit-files --output json: %v\n%s", err, out)
	}
	if _, out, _ = fleetctl(g, "cat", "hello"); !strings.Contains(out, "ExecStart=/bin/sleep 3600") {
		t.Fatalf("cat:\n%s", out)
	}
	if _, out, _ = fleetctl(g, "status", "hello.service"); !strings.Contains(out, "Active: active (running)") {
		t.Fatalf("status:\n%s", out)
	}
	// Different content under the same name needs --replace.
	if err := os.WriteFile(hello, []byte("[Unit]\nDescription=Hello 2\n\n[Service]\nExecStart=/bin/sleep 3601\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := fleetctl(g, "submit", hello); code != 1 || !strings.Contains(errs, "--replace") {
		t.Fatalf("submit of changed content: exit %d %s", code, errs)
	}

	// stop, then destroy: in systemd too. destroy blocks by default (upstream's inverted wait).
	if code, out, errs := fleetctl(g, "stop", "hello.service"); code != 0 || !strings.HasPrefix(out, "Unit hello.service loaded on "+machine) {
		t.Fatalf("stop: exit %d %q %s", code, out, errs)
	}
	eventually(t, "hello stopped in systemd", func() error {
		if got := sdState(sbOf[machine], "hello.service"); got != "inactive/dead" {
			return fmt.Errorf("%s", got)
		}
		return nil
	})
	if code, out, errs := fleetctl(g, "destroy", "hello.service"); code != 0 || out != "Destroyed hello.service\n" {
		t.Fatalf("destroy: exit %d %q %s", code, out, errs)
	}
	if out, _ := sbOf[machine].Systemctl("show", "-p", "LoadState", "--value", "hello.service"); strings.TrimSpace(out) != "not-found" {
		t.Fatalf("after destroy (which waited) systemd still has hello.service: %s", out)
	}

	// A global unit runs on both machines.
	glob := filepath.Join(dir, "everywhere.service")
	if err := os.WriteFile(glob, []byte("[Service]\nExecStart=/bin/sleep 3600\n\n[X-Fleet]\nGlobal=true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := fleetctl(g, "start", glob); code != 0 || out != "Triggered global unit everywhere.service start\n" {
		t.Fatalf("start global: exit %d %q %s", code, out, errs)
	}
	eventually(t, "global unit on both machines", func() error {
		_, out, _ := fleetctl(g, "list-units", "--no-legend", "--fields", "unit,machine,active")
		if strings.Count(out, "everywhere.service") != 2 || strings.Count(out, "active") != 2 {
			return fmt.Errorf("%q", out)
		}
		return nil
	})

	fleetParity(t, g, dir, sbOf)

	// A restarted hub loses nothing.
	hub.kill(syscall.SIGTERM)
	startProc(t, dir, "hub2", bin, hubArgs...) // stopped by the test's cleanup
	mover := filepath.Join(dir, "mover.service")
	if err := os.WriteFile(mover, []byte("[Service]\nExecStart=/bin/sleep 3600\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var code2 int
	eventually(t, "start after the hub restart", func() error {
		code2, out, errs = fleetctl(g, "start", "--block-attempts", "30", mover)
		if code2 != 0 {
			return fmt.Errorf("exit %d %s", code2, errs)
		}
		return nil
	})
	from := strings.Split(strings.TrimPrefix(out, "Unit mover.service launched on "), "/")[0]
	if _, out, _ := fleetctl(g, "list-unit-files", "--no-legend", "--fields", "unit,dstate"); !strings.Contains(cols(out), "everywhere.service launched") {
		t.Fatalf("after the hub restart:\n%s", out)
	}

	// SIGKILL the agent running mover.service: after the TTL it runs on the other machine.
	to := map[string]string{"m1": "m2", "m2": "m1"}[from]
	agents[from].kill(syscall.SIGKILL)
	eventually(t, "mover.service moved to "+to, func() error {
		if got := sdState(sbOf[to], "mover.service"); got != "active/running" {
			return fmt.Errorf("systemd on %s: %s", to, got)
		}
		_, out, _ := fleetctl(g, "list-units", "--no-legend", "--fields", "unit,machine")
		if !strings.Contains(cols(out), "mover.service "+to+"/") {
			return fmt.Errorf("list-units: %q", out)
		}
		return nil
	})
}

// fleetParity: issue 30, items 8 to 10, through fleetctl, the fleet API and the real agents:
// currentState is what the agent acted on (a unit systemd refuses reports launched, so start
// fails with no active unit found instead of hanging; stop then works; a failed unit stopped
// reports loaded); a failing unit is started once, not on every round; an instance starts
// from a submitted template (or one next to the argument); restart restarts.
func fleetParity(t *testing.T, g []string, dir string, sbOf map[string]*sdtest.Sandbox) {
	t.Helper()
	write := func(name, text string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	unitState := func(name string) (state, machine string) {
		t.Helper()
		_, out, _ := fleetctl(g, "list-unit-files", "--output", "json")
		var files []fleethttp.Unit
		if err := json.Unmarshal([]byte(out), &files); err != nil {
			t.Fatalf("list-unit-files --output json: %v\n%s", err, out)
		}
		for _, f := range files {
			if f.Name == name {
				return f.CurrentState + "/" + f.DesiredState, f.MachineID
			}
		}
		return "", ""
	}

	// No ExecStart=: systemd refuses it (bad-setting). start reports that no active unit runs.
	noexec := write("noexec.service", "[Unit]\nDescription=no ExecStart\n\n[Service]\nType=simple\n")
	code, out, errs := fleetctl(g, "start", "--block-attempts", "30", noexec)
	if code != 1 || !strings.Contains(errs, "no active unit noexec.service found") || !strings.Contains(errs, "bad-setting") {
		t.Fatalf("start noexec.service: exit %d %q %s", code, out, errs)
	}
	if st, _ := unitState("noexec.service"); st != "launched/launched" {
		t.Fatalf("noexec.service current/desired after start: %s, want launched/launched", st)
	}
	if _, out, _ := fleetctl(g, "list-units", "--no-legend", "--fields", "unit,load,active"); !strings.Contains(cols(out), "noexec.service bad-setting inactive") {
		t.Fatalf("list-units shows systemd's view:\n%s", out)
	}
	if code, out, errs := fleetctl(g, "stop", "--block-attempts", "30", "noexec"); code != 0 || !strings.HasPrefix(out, "Unit noexec.service loaded on ") {
		t.Fatalf("stop noexec.service: exit %d %q %s", code, out, errs)
	}
	if st, _ := unitState("noexec.service"); st != "loaded/loaded" {
		t.Fatalf("noexec.service current/desired after stop: %s, want loaded/loaded", st)
	}

	// A unit that fails at once: started once however many rounds the agent makes (each run
	// appends a line to runs.log in its machine's unit directory), launched until stopped,
	// then loaded.
	falseText := func(m string) string {
		return "[Service]\nExecStart=/bin/sh -c 'echo run >> " + sbOf[m].UnitDir + "/runs.log; exec /bin/false'\n\n[X-Fleet]\nMachineID=" + m + "\n"
	}
	fails := write("fails.service", falseText("m1"))
	if code, _, errs := fleetctl(g, "start", "--no-block", fails); code != 0 {
		t.Fatalf("start --no-block fails.service: exit %d %s", code, errs)
	}
	eventually(t, "fails.service failed in systemd", func() error {
		if got := sdState(sbOf["m1"], "fails.service"); got != "failed/failed" {
			return fmt.Errorf("%s", got)
		}
		return nil
	})
	time.Sleep(6 * time.Second) // the agent's interval is 1 s: several rounds
	if b, err := os.ReadFile(filepath.Join(sbOf["m1"].UnitDir, "runs.log")); err != nil || strings.Count(string(b), "run\n") != 1 {
		t.Fatalf("fails.service ran %q (%v), want exactly once", b, err)
	}
	if st, _ := unitState("fails.service"); st != "launched/launched" {
		t.Fatalf("fails.service current/desired while failed: %s, want launched/launched", st)
	}
	if code, out, errs := fleetctl(g, "stop", "--block-attempts", "30", "fails.service"); code != 0 || !strings.HasPrefix(out, "Unit fails.service loaded on m1") {
		t.Fatalf("stop fails.service: exit %d %q %s", code, out, errs)
	}
	if st, _ := unitState("fails.service"); st != "loaded/loaded" {
		t.Fatalf("fails.service current/desired after stop: %s, want loaded/loaded", st)
	}
	for _, u := range []string{"noexec.service", "fails.service"} {
		if code, _, errs := fleetctl(g, "destroy", u); code != 0 {
			t.Fatalf("destroy %s: exit %d %s", u, code, errs)
		}
	}

	// Instances: from the submitted template, and from a template file next to the argument.
	web := write("web@.service", "[Service]\nExecStart=/bin/sleep 36%i\n")
	if code, _, errs := fleetctl(g, "submit", web); code != 0 {
		t.Fatalf("submit web@.service: exit %d %s", code, errs)
	}
	code, out, errs = fleetctl(g, "start", "--block-attempts", "30", "web@1.service")
	if code != 0 || !strings.HasPrefix(out, "Unit web@1.service launched on m") {
		t.Fatalf("start web@1.service from the submitted template: exit %d %q %s", code, out, errs)
	}
	webOn := strings.Split(strings.TrimPrefix(out, "Unit web@1.service launched on "), "/")[0]
	write("api@.service", "[Service]\nExecStart=/bin/sleep 37%i\n")
	if code, out, errs := fleetctl(g, "start", "--block-attempts", "30", filepath.Join(dir, "api@2.service")); code != 0 || !strings.HasPrefix(out, "Unit api@2.service launched on m") {
		t.Fatalf("start api@2.service from the template file: exit %d %q %s", code, out, errs)
	}
	if _, out, _ := fleetctl(g, "cat", "api@2"); !strings.Contains(out, "ExecStart=/bin/sleep 37%i") {
		t.Fatalf("cat api@2.service:\n%s", out)
	}

	// restart: a new process (systemd's InvocationID changes), through a command prefix.
	invocation := func() string {
		out, _ := sbOf[webOn].Systemctl("show", "-p", "InvocationID", "--value", "web@1.service")
		return strings.TrimSpace(out)
	}
	before := invocation()
	if code, out, errs := fleetctl(g, "resta", "--block-attempts", "30", "web@1"); code != 0 || !strings.HasPrefix(out, "Unit web@1.service restarted on "+webOn) {
		t.Fatalf("restart web@1: exit %d %q %s", code, out, errs)
	}
	if after := invocation(); after == "" || after == before || sdState(sbOf[webOn], "web@1.service") != "active/running" {
		t.Fatalf("web@1.service after restart: invocation %s (before %s), %s", after, before, sdState(sbOf[webOn], "web@1.service"))
	}
	for _, u := range []string{"web@1.service", "api@2.service", "web@.service"} {
		if code, _, errs := fleetctl(g, "destroy", u); code != 0 {
			t.Fatalf("destroy %s: exit %d %s", u, code, errs)
		}
	}
}
