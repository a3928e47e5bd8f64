package fleethttp_test

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"github.com/fleetsim/fleetsim/apis/convert"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetsim/fleetsim/apis/fleet/v1alpha1"
	"github.com/fleetsim/fleetsim/prod/fleethttp"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

type caller struct {
	t     *testing.T
	base  string
	hc    *http.Client
	token string
}

type resp struct {
	code int
	body string
}

func (c caller) do(method, path, ctype, body string) resp {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	r, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	return resp{r.StatusCode, string(b)}
}

func grant(t *testing.T, c client.Client, subject rbacv1.Subject, name string, resources, verbs []string) {
	t.Helper()
	ctx := context.Background()
	if err := c.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"fleet.fleetsim.io"}, Resources: resources, Verbs: verbs}}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name},
		Subjects: []rbacv1.Subject{subject}}); err != nil {
		t.Fatal(err)
	}
}

func machine(t *testing.T, c client.Client, id, ip string, alive bool, md map[string]string, states ...fleetv1.UnitState) {
	t.Helper()
	m := &fleetv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: id}, Spec: fleetv1.MachineSpec{Metadata: md}}
	if err := c.Create(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	hb := time.Now()
	if !alive {
		hb = hb.Add(-time.Hour)
	}
	m.Status = fleetv1.MachineStatus{PublicIP: ip, LastHeartbeat: metav1.NewMicroTime(hb), Units: states}
	if err := c.Status().Update(context.Background(), m); err != nil {
		t.Fatal(err)
	}
}

func errorMessage(t *testing.T, r resp) string {
	t.Helper()
	var e struct {
		Error fleethttp.Error `json:"error"`
	}
	if err := json.Unmarshal([]byte(r.body), &e); err != nil || e.Error.Code != r.code {
		t.Fatalf("body %q is not the error JSON for %d: %v", r.body, r.code, err)
	}
	return e.Error.Message
}

// TestFleetAPIv1 drives every route of the spec's table against a real API server, over TLS,
// with client-certificate and bearer-token callers authorised by RBAC.
func TestFleetAPIv1(t *testing.T) {
	env := testenv.StartEnv(t)
	admin := testenv.Client(t, env.Config)
	ca := newCA(t)
	access, _ := newAccess(t, env.Config, ca, fleethttp.AccessOptions{})
	srv := &fleethttp.Server{Client: admin, Reader: admin, Access: access, MachineTTL: time.Minute, PageSize: 2}
	ts := httptest.NewUnstartedServer(srv.Handler())
	ts.TLS = &tls.Config{Certificates: []tls.Certificate{ca.issue(t, "fleet-api", nil, net.ParseIP("127.0.0.1"))},
		ClientCAs: ca.pool, ClientAuth: tls.VerifyClientCertIfGiven}
	ts.StartTLS()
	defer ts.Close()
	newCaller := func(cert *tls.Certificate, token string) caller {
		cfg := &tls.Config{RootCAs: ca.pool}
		if cert != nil {
			cfg.Certificates = []tls.Certificate{*cert}
		}
		return caller{t: t, base: ts.URL, hc: &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: time.Minute}, token: token}
	}
	aliceCert := ca.issue(t, "alice", []string{"fleet-admins"}, nil)
	bobCert := ca.issue(t, "bob", nil, nil)
	grant(t, admin, rbacv1.Subject{Kind: "Group", Name: "fleet-admins"}, "fleet-admin", []string{"units", "machines"}, []string{"*"})
	alice, bob, anon := newCaller(&aliceCert, ""), newCaller(&bobCert, ""), newCaller(nil, "")

	// A bearer token (a service account's) that may only list units.
	ctx := context.Background()
	if err := admin.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "viewer", Namespace: "default"}}); err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(env.Config)
	tr, err := cs.CoreV1().ServiceAccounts("default").CreateToken(ctx, "viewer", &authnv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token request: %v", err)
	}
	grant(t, admin, rbacv1.Subject{Kind: "ServiceAccount", Name: "viewer", Namespace: "default"}, "fleet-viewer", []string{"units"}, []string{"list", "get"})
	viewer := newCaller(nil, tr.Status.Token)

	const hello = `{"name":"hello.service","desiredState":"loaded","options":[{"section":"Service","name":"ExecStart","value":"/bin/sleep 60"}]}`
	hello2 := strings.Replace(hello, "sleep 60", "sleep 61", 1)
	hello2 = strings.Replace(hello2, `"desiredState":"loaded",`, "", 1)
	const j = "application/json"

	type step struct {
		who                     caller
		method, path, ctype, in string
		code                    int
		msg                     string // in the error JSON's message, when code >= 400
	}
	steps := []step{
		// authentication and authorisation
		{anon, "GET", "/fleet/v1/units", "", "", 401, "authentication required"},
		{newCaller(nil, "not-a-token"), "GET", "/fleet/v1/units", "", "", 401, "authentication required"},
		{bob, "GET", "/fleet/v1/units", "", "", 403, "bob may not list units"},
		{alice, "GET", "/fleet/v1/units", "", "", 200, ""},
		{alice, "GET", "/v1-alpha/units", "", "", 200, ""},
		// PUT checks, in the spec's order
		{alice, "PUT", "/fleet/v1/units/hello.service", "", hello, 415, "Content-Type"},
		{alice, "PUT", "/fleet/v1/units/hello.service", "text/plain", hello, 415, "Content-Type"},
		{alice, "PUT", "/fleet/v1/units/hello.service", j, "{bad", 400, "unable to decode body"},
		{alice, "PUT", "/fleet/v1/units/other.service", j, hello, 400, "differs from unit name"},
		{alice, "PUT", "/fleet/v1/units/hello", j, `{"name":"hello"}`, 400, "invalid unit name"},
		{alice, "PUT", "/fleet/v1/units/hello.service", j, `{"name":"hello.service","desiredState":"launched"}`, 409, "unit does not exist and options field empty"},
		{alice, "PUT", "/fleet/v1/units/hello.service", j, `{"name":"hello.service","options":[{"section":"X-Fleet","name":"Global","value":"true"},{"section":"X-Fleet","name":"MachineID","value":"abc"}]}`, 400, ""},
		{alice, "PUT", "/fleet/v1/units/hello.service", j, hello, 201, ""},
		{alice, "PUT", "/fleet/v1/units/hello.service", j, `{"name":"hello.service"}`, 409, "must provide DesiredState to update existing unit"},
		{alice, "PUT", "/fleet/v1/units/hello.service", j, `{"name":"hello.service","desiredState":"junk"}`, 400, "invalid desired state"},
		{alice, "PUT", "/fleet/v1/units/hello.service", j, `{"desiredState":"launched"}`, 204, ""},
		{alice, "PUT", "/fleet/v1/units/web@.service", j, `{"name":"web@.service","desiredState":"launched","options":[{"section":"Service","name":"ExecStart","value":"/bin/true"}]}`, 400, "template"},
		{alice, "PUT", "/fleet/v1/units/web@.service", j, `{"name":"web@.service","options":[{"section":"Service","name":"ExecStart","value":"/bin/true"}]}`, 201, ""},
		{alice, "PUT", "/fleet/v1/units/web@.service", j, `{"desiredState":"loaded"}`, 400, "template"},
		{viewer, "GET", "/fleet/v1/units/hello.service", "", "", 200, ""},
		{viewer, "PUT", "/fleet/v1/units/hello.service", j, `{"desiredState":"loaded"}`, 403, "may not update units"},
		{viewer, "PUT", "/fleet/v1/units/new.service", j, `{"options":[{"section":"Service","name":"ExecStart","value":"/bin/true"}]}`, 403, "may not create units"},
		{alice, "GET", "/fleet/v1/units/nope.service", "", "", 404, "unit does not exist"},
		{alice, "DELETE", "/fleet/v1/units/nope.service", "", "", 404, "unit does not exist"},
		// other methods and paths
		{alice, "POST", "/fleet/v1/units", j, "{}", 405, ""},
		{alice, "DELETE", "/fleet/v1/machines", "", "", 405, ""},
		{alice, "POST", "/fleet/v1/state", "", "", 405, ""},
		{alice, "PATCH", "/fleet/v1/units/hello.service", j, "{}", 405, ""},
		{alice, "GET", "/fleet/v1/", "", "", 405, ""},
		{alice, "GET", "/fleet/v1/nothing", "", "", 404, ""},
		{alice, "GET", "/fleet/v1/units/hello.service/", "", "", 404, ""},
		{alice, "GET", "/elsewhere", "", "", 404, ""},
		{alice, "POST", "/fleet/v1/discovery", "", "", 400, ""},
		{alice, "GET", "/fleet/v1/discovery", "", "", 200, ""},
		{alice, "GET", "/fleet/v1/state/hello.service", "", "", 404, "unit state does not exist"},
		{alice, "GET", "/fleet/v1/units?nextPageToken=!!!", "", "", 400, "invalid nextPageToken"},
		{alice, "GET", "/fleet/v1/units?nextPageToken=" + base64.URLEncoding.EncodeToString([]byte{100, 0, 'a'}), "", "", 400, "token limit must be 2"},
		{alice, "GET", "/fleet/v1/units?nextPageToken=a&nextPageToken=b", "", "", 400, "repeated"},
		// PATCH /machines
		{alice, "PATCH", "/fleet/v1/machines", j, `[{"op":"frob","path":"/m1/metadata/k","value":"v"}]`, 400, "invalid op"},
		{alice, "PATCH", "/fleet/v1/machines", j, `[{"op":"add","path":"/m1/metadata/bad key","value":"v"}]`, 400, "invalid path"},
		{alice, "PATCH", "/fleet/v1/machines", j, `[{"op":"add","path":"/m1/labels/k","value":"v"}]`, 400, "invalid path"},
		{alice, "PATCH", "/fleet/v1/machines", j, `[{"op":"add","path":"/m1/metadata/k"}]`, 400, "missing value"},
		{alice, "PATCH", "/fleet/v1/machines", j, `not json`, 400, "unable to decode"},
		{viewer, "PATCH", "/fleet/v1/machines", j, `[]`, 403, "may not patch machines"},
		{alice, "PATCH", "/fleet/v1/machines", j, `[{"op":"add","path":"/../metadata/x","value":"v"}]`, 400, `invalid path "/../metadata/x": machine ID ".."`},
		{alice, "PATCH", "/fleet/v1/machines", j, `[{"op":"add","path":"/M1/metadata/x","value":"v"}]`, 400, `machine ID "M1"`},
		// bodies over 1 MiB
		{alice, "PATCH", "/fleet/v1/machines", j, `[{"op":"add","path":"/m1/metadata/k","value":"` + strings.Repeat("v", 1<<20) + `"}]`, 413, "over the limit of 1048576 bytes"},
		{alice, "PUT", "/fleet/v1/units/big.service", j, `{"options":[{"section":"Service","name":"ExecStart","value":"` + strings.Repeat("v", 1<<20) + `"}]}`, 413, "over the limit of 1048576 bytes"},
		// options systemd would read otherwise than the API shows them (issue 31)
		{alice, "PUT", "/fleet/v1/units/inj6.service", j, `{"options":[{"section":"Service","name":"User","value":"nobody"},` +
			`{"section":"Service","name":"ExecStart","value":"/bin/true \\\\\nUser=root"}]}`, 400,
			`section "Service": option "ExecStart": value line 1 ends in an escaped backslash`},
		{alice, "PUT", "/fleet/v1/units/inj7.service", j, `{"options":[{"section":"Service","name":"ExecStart","value":"/bin/true \\\n# c"},` +
			`{"section":"Service","name":"User","value":"nobody"}]}`, 400,
			`section "Service": option "ExecStart": value line 2 starts with '#'`},
		{alice, "PUT", "/fleet/v1/units/injcr.service", j, `{"options":[{"section":"Service","name":"User","value":"nobody\rUser=root"}]}`, 400,
			`option "User": value line 1 holds a carriage return`},
	}
	for i, s := range steps {
		r := s.who.do(s.method, s.path, s.ctype, s.in)
		if r.code != s.code {
			t.Fatalf("step %d: %s %s: %d %s, want %d", i, s.method, s.path, r.code, r.body, s.code)
		}
		if s.code >= 400 {
			if msg := errorMessage(t, r); !strings.Contains(msg, s.msg) {
				t.Errorf("step %d: %s %s: message %q, want it to contain %q", i, s.method, s.path, msg, s.msg)
			}
		}
	}

	// GET a unit: the spec's shape.
	r := alice.do("GET", "/fleet/v1/units/hello.service", "", "")
	var u fleethttp.Unit
	if err := json.Unmarshal([]byte(r.body), &u); err != nil {
		t.Fatal(err)
	}
	want := fleethttp.Unit{Name: "hello.service", DesiredState: "launched", CurrentState: "inactive",
		Options: []*fleethttp.UnitOption{{Section: "Service", Name: "ExecStart", Value: "/bin/sleep 60"}}}
	if diff := cmp.Diff(want, u); diff != "" {
		t.Errorf("GET unit (-want +got):\n%s", diff)
	}
	// A multi-line value (continued with a backslash) is accepted and shown as it was sent;
	// systemd reads it as its lines joined (agentsystemd/machine/dbus
	// TestSystemdReadsWhatTheAPIShows).
	multi := []*fleethttp.UnitOption{{Section: "Service", Name: "ExecStart", Value: "/bin/sh -c 'echo a; \\\n  echo b'"}}
	body, _ := json.Marshal(fleethttp.Unit{Name: "multi.service", Options: multi})
	if r := alice.do("PUT", "/fleet/v1/units/multi.service", j, string(body)); r.code != 201 {
		t.Fatalf("PUT multi-line: %d %s", r.code, r.body)
	}
	u = fleethttp.Unit{}
	if err := json.Unmarshal([]byte(alice.do("GET", "/fleet/v1/units/multi.service", "", "").body), &u); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(multi, u.Options); diff != "" {
		t.Errorf("GET multi-line unit: options (-sent +shown):\n%s", diff)
	}
	if r := alice.do("DELETE", "/fleet/v1/units/multi.service", "", ""); r.code != 204 {
		t.Fatalf("DELETE multi.service: %d", r.code)
	}

	// New options under the same name re-create the unit, desired state reset (--replace).
	if r := alice.do("PUT", "/fleet/v1/units/hello.service", j, hello2); r.code != 201 {
		t.Fatalf("replace: %d %s", r.code, r.body)
	}
	r = alice.do("GET", "/fleet/v1/units/hello.service", "", "")
	if !strings.Contains(r.body, `"desiredState":"inactive"`) || !strings.Contains(r.body, "sleep 61") {
		t.Fatalf("after replace: %s", r.body)
	}

	// Machines: only live ones, paged by two, sorted by ID; PATCH edits metadata.
	st := fleetv1.UnitState{Name: "hello.service", Hash: "abc", LoadState: "loaded", ActiveState: "active", SubState: "running"}
	machine(t, admin, "m1", "10.0.0.1", true, map[string]string{"role": "web"}, st)
	machine(t, admin, "m2", "10.0.0.2", true, nil, st, fleetv1.UnitState{Name: "a.service", Hash: "def", LoadState: "loaded", ActiveState: "inactive", SubState: "dead"})
	machine(t, admin, "m3", "10.0.0.3", true, nil)
	machine(t, admin, "m0", "10.0.0.9", false, nil, st)
	var ids []string
	pages := 0
	for tok := ""; ; {
		r := alice.do("GET", "/fleet/v1/machines?nextPageToken="+tok, "", "")
		if tok == "" {
			r = alice.do("GET", "/fleet/v1/machines", "", "")
		}
		var p fleethttp.MachinePage
		if err := json.Unmarshal([]byte(r.body), &p); err != nil || r.code != 200 {
			t.Fatalf("machines page: %d %s", r.code, r.body)
		}
		pages++
		for _, m := range p.Machines {
			ids = append(ids, m.ID+"/"+m.PrimaryIP)
		}
		if tok = p.NextPageToken; tok == "" {
			break
		}
	}
	if diff := cmp.Diff([]string{"m1/10.0.0.1", "m2/10.0.0.2", "m3/10.0.0.3"}, ids); diff != "" || pages != 2 {
		t.Errorf("machines over %d pages (-want +got):\n%s", pages, diff)
	}
	r = alice.do("PATCH", "/fleet/v1/machines", j, `[{"op":"add","path":"/m1/metadata/disk","value":"ssd"},`+
		`{"op":"replace","path":"/m1/metadata/role","Value":{"value":"db"}},{"op":"add","path":"/m9/metadata/x","value":"y"},{"op":"remove","path":"/m2/metadata/none"}]`)
	if r.code != 204 {
		t.Fatalf("PATCH machines: %d %s", r.code, r.body)
	}
	var m1 fleetv1.Machine
	if err := admin.Get(ctx, client.ObjectKey{Name: "m1"}, &m1); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"role": "db", "disk": "ssd"}, m1.Spec.Metadata); diff != "" {
		t.Errorf("m1 metadata after PATCH (-want +got):\n%s", diff)
	}
	var m9 fleetv1.Machine
	if err := admin.Get(ctx, client.ObjectKey{Name: "m9"}, &m9); err != nil || m9.Spec.Metadata["x"] != "y" {
		t.Errorf("unregistered m9 not patched: %v %v", err, m9.Spec.Metadata)
	}

	// State: from live machines only, sorted by (name, machine), filtered, one by name.
	r = alice.do("GET", "/fleet/v1/state?unitName=hello.service", "", "")
	var sp fleethttp.UnitStatePage
	if err := json.Unmarshal([]byte(r.body), &sp); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range sp.States {
		got = append(got, s.MachineID+":"+s.SystemdActiveState+"/"+s.SystemdSubState)
	}
	if diff := cmp.Diff([]string{"m1:active/running", "m2:active/running"}, got); diff != "" {
		t.Errorf("state of hello.service (-want +got):\n%s", diff)
	}
	r = alice.do("GET", "/fleet/v1/state?machineID=m2", "", "")
	if !strings.Contains(r.body, `"name":"a.service"`) || strings.Contains(r.body, `"machineID":"m1"`) {
		t.Errorf("state of m2: %s", r.body)
	}
	r = alice.do("GET", "/fleet/v1/state/hello.service", "", "")
	var one fleethttp.UnitState
	if err := json.Unmarshal([]byte(r.body), &one); err != nil || r.code != 200 || one.MachineID != "m1" || one.SystemdLoadState != "loaded" || one.Hash != "abc" {
		t.Errorf("GET state: %d %s", r.code, r.body)
	}

	// Pagination under concurrent change: after page one (hello, web@), deleting hello and
	// adding aaa.service (sorted before) does not make the next page skip or repeat anything.
	for _, n := range []string{"x.service", "y.service"} {
		body := fmt.Sprintf(`{"name":%q,"options":[{"section":"Service","name":"ExecStart","value":"/bin/true"}]}`, n)
		if r := alice.do("PUT", "/fleet/v1/units/"+n, j, body); r.code != 201 {
			t.Fatalf("PUT %s: %d %s", n, r.code, r.body)
		}
	}
	names := func(body string) ([]string, string) {
		var p fleethttp.UnitPage
		if err := json.Unmarshal([]byte(body), &p); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, u := range p.Units {
			out = append(out, u.Name)
		}
		return out, p.NextPageToken
	}
	first, tok := names(alice.do("GET", "/fleet/v1/units", "", "").body)
	if diff := cmp.Diff([]string{"hello.service", "web@.service"}, first); diff != "" || tok == "" {
		t.Fatalf("first page (-want +got):\n%s (token %q)", diff, tok)
	}
	if r := alice.do("DELETE", "/fleet/v1/units/hello.service", "", ""); r.code != 204 {
		t.Fatalf("DELETE: %d %s", r.code, r.body)
	}
	if r := alice.do("PUT", "/fleet/v1/units/aaa.service", j, `{"name":"aaa.service","options":[{"section":"Service","name":"ExecStart","value":"/bin/true"}]}`); r.code != 201 {
		t.Fatalf("PUT: %d", r.code)
	}
	second, tok2 := names(alice.do("GET", "/fleet/v1/units?nextPageToken="+tok, "", "").body)
	if diff := cmp.Diff([]string{"x.service", "y.service"}, second); diff != "" || tok2 != "" {
		t.Errorf("second page (-want +got):\n%s (token %q; a full last page must not leave an empty page behind)", diff, tok2)
	}
	// DELETE twice.
	if r := alice.do("DELETE", "/fleet/v1/units/hello.service", "", ""); r.code != 404 {
		t.Errorf("second DELETE: %d", r.code)
	}
	var left fleetv1.UnitList
	if err := admin.List(ctx, &left); err != nil {
		t.Fatal(err)
	}
	if len(left.Items) != 4 || left.Items[0].Name != convert.UnitObjectName(left.Items[0].Spec.Name) {
		t.Errorf("%d units stored", len(left.Items))
	}
}
