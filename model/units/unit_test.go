package units_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetsim/fleetsim/model/unitfile"
	"github.com/fleetsim/fleetsim/model/units"
)

// TestTransition checks every cell of the documentation's command table (fleet's "Unit states", "Unit states"): each
// operation from none and from each desired state.
func TestTransition(t *testing.T) {
	const none = units.StateNone
	type cell struct {
		next units.State
		err  string // substring of the error; "" for success
	}
	ok := func(s units.State) cell { return cell{next: s} }
	bad := func(s string) cell { return cell{err: s} }
	from := []units.State{none, inactive, loaded, launched}
	table := map[units.Op][4]cell{
		units.OpSubmit:  {ok(inactive), ok(inactive), ok(loaded), ok(launched)},
		units.OpLoad:    {ok(loaded), ok(loaded), ok(loaded), bad("load is valid from none or inactive only")},
		units.OpStart:   {ok(launched), ok(launched), ok(launched), ok(launched)},
		units.OpStop:    {bad("unit does not exist"), bad("stop is valid from launched only"), ok(loaded), ok(loaded)},
		units.OpUnload:  {bad("unit does not exist"), ok(inactive), ok(inactive), ok(inactive)},
		units.OpDestroy: {bad("unit does not exist"), ok(none), ok(none), ok(none)},
	}
	for op, cells := range table {
		for k, c := range cells {
			var cur *units.Unit
			if from[k] != none {
				cur = mk(t, "app.service", from[k])
			}
			got, err := units.Transition(cur, op)
			switch {
			case c.err == "" && err != nil:
				t.Errorf("Transition(%s, %s) error %v, want %s", from[k], op, err, c.next)
			case c.err == "" && got != c.next:
				t.Errorf("Transition(%s, %s) = %s, want %s", from[k], op, got, c.next)
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Errorf("Transition(%s, %s) = %s, %v, want error containing %q", from[k], op, got, err, c.err)
			case c.err != "":
				var te *units.TransitionError
				if !errors.As(err, &te) || te.Op != op || te.From != from[k] {
					t.Errorf("Transition(%s, %s) error = %#v, want a *TransitionError for that op and state", from[k], op, err)
				}
			}
		}
	}
}

func TestTransitionErrorMessages(t *testing.T) {
	tests := []struct {
		cur  *units.Unit
		op   units.Op
		want string
	}{
		{mk(t, "a.service", inactive), units.OpStop, "cannot stop a.service (desired state inactive): stop is valid from launched only"},
		{mk(t, "a.service", launched), units.OpLoad, "cannot load a.service (desired state launched): load is valid from none or inactive only"},
		{nil, units.OpDestroy, "cannot destroy unit (desired state none): unit does not exist"},
		{mk(t, "web@.service", inactive), units.OpStart, "cannot start web@.service (desired state inactive): cannot activate template; submit an instance such as web@<instance>.service"},
		{mk(t, "web@.service", inactive), units.OpLoad, "cannot load web@.service (desired state inactive): cannot activate template; submit an instance such as web@<instance>.service"},
	}
	for _, tc := range tests {
		_, err := units.Transition(tc.cur, tc.op)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Transition(%v, %s) error = %v, want %q", tc.cur, tc.op, err, tc.want)
		}
	}
	if _, err := units.Transition(nil, "restart"); err == nil {
		t.Errorf("Transition(nil, restart) = nil error, want unknown operation")
	}
}

func TestTemplateTransitions(t *testing.T) {
	tpl := mk(t, "web@.service", inactive)
	for _, op := range []units.Op{units.OpSubmit, units.OpUnload, units.OpDestroy} {
		if _, err := units.Transition(tpl, op); err != nil {
			t.Errorf("Transition(template, %s) = %v, want success", op, err)
		}
	}
	inst, err := units.Instantiate(tpl, "1")
	if err != nil {
		t.Fatalf("Instantiate: %v", err)
	}
	if got, err := units.Transition(inst, units.OpStart); err != nil || got != launched {
		t.Errorf("Transition(instance, start) = %s, %v, want launched", got, err)
	}
}

func TestSubmitImmutable(t *testing.T) {
	a := file(t, "MachineMetadata=region=east")
	b := file(t, "MachineMetadata=region=west")
	cur := mk(t, "app.service", launched, "MachineMetadata=region=east")

	same, err := units.Submit(cur, "app.service", a)
	if err != nil || same != cur {
		t.Errorf("Submit(same file) = %v, %v, want the stored unit unchanged", same, err)
	}
	_, err = units.Submit(cur, "app.service", b)
	var ie *units.ImmutableError
	if !errors.As(err, &ie) {
		t.Fatalf("Submit(different file) error = %v, want *ImmutableError", err)
	}
	want := &units.ImmutableError{Name: "app.service", Have: a.Hash(), Want: b.Hash()}
	if diff := cmp.Diff(want, ie); diff != "" {
		t.Errorf("Submit(different file) error mismatch (-want +got):\n%s", diff)
	}
	for _, s := range []string{"app.service", a.Hash().String(), b.Hash().String()} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("Submit(different file) error %q does not name %s", err, s)
		}
	}
	// Comments and layout do not change the hash: the same unit.
	f, _ := unitfile.Parse("# comment\n[Service]\nExecStart=/usr/bin/sleep infinity\n\n[X-Fleet]\nMachineMetadata=region=east\n")
	if _, err := units.Submit(cur, "app.service", f); err != nil {
		t.Errorf("Submit(same options, other layout) = %v, want success", err)
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name, xfleet, err string
	}{
		{"app.service", "", ""},
		{"app", "", `invalid unit name "app"`},
		{"a.mount@x", "", "invalid unit name"},
		{"app.service", "MachineID=abc\nConflicts=x*", "[X-Fleet] MachineID: cannot be combined with Conflicts"},
		{"app.service", "Global=true\nMachineOf=b.service", "[X-Fleet] Global: cannot be combined with MachineOf"},
	}
	for _, tc := range tests {
		var lines []string
		if tc.xfleet != "" {
			lines = strings.Split(tc.xfleet, "\n")
		}
		u, err := units.New(tc.name, file(t, lines...))
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("New(%s, %q) = %v", tc.name, tc.xfleet, err)
		case tc.err == "" && (u.DesiredState != inactive || u.Options == nil || u.Hash != u.File.Hash()):
			t.Errorf("New(%s, %q) = %+v, want an inactive unit with options and hash", tc.name, tc.xfleet, u)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("New(%s, %q) error = %v, want %q", tc.name, tc.xfleet, err, tc.err)
		}
	}
	u, err := units.New("empty.service", nil)
	if err != nil || u.Hash.String() != "da39a3ee5e6b4b0d3255bfef95601890afd80709" {
		t.Errorf("New(nil file) = %v, %v, want the empty file's hash", u, err)
	}
}

func TestApply(t *testing.T) {
	f := file(t)
	u, err := units.Apply(nil, "app.service", f, units.OpStart)
	if err != nil || u.DesiredState != launched || u.Name != "app.service" {
		t.Fatalf("Apply(nil, start) = %+v, %v, want a launched unit (submit+load+start)", u, err)
	}
	if u2, err := units.Apply(u, "app.service", nil, units.OpStop); err != nil || u2.DesiredState != loaded || u.DesiredState != launched {
		t.Errorf("Apply(launched, stop) = %+v, %v, want a loaded copy, input untouched", u2, err)
	}
	if u2, err := units.Apply(u, "app.service", nil, units.OpDestroy); err != nil || u2 != nil {
		t.Errorf("Apply(launched, destroy) = %+v, %v, want nil", u2, err)
	}
	if _, err := units.Apply(u, "app.service", file(t, "Global=true"), units.OpStart); err == nil {
		t.Errorf("Apply(start with another file) = nil error, want *ImmutableError")
	}
	if _, err := units.Apply(nil, "app.service", nil, units.OpLoad); err == nil || !strings.Contains(err.Error(), "no unit file") {
		t.Errorf("Apply(nil, load, no file) error = %v, want 'no unit file'", err)
	}
	if _, err := units.Apply(nil, "app.service", f, units.OpStop); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("Apply(nil, stop) error = %v, want 'does not exist'", err)
	}
	if _, err := units.Apply(nil, "web@.service", f, units.OpStart); err == nil || !strings.Contains(err.Error(), "cannot activate template") {
		t.Errorf("Apply(nil, start template) error = %v, want 'cannot activate template'", err)
	}
	if tpl, err := units.Apply(nil, "web@.service", f, units.OpSubmit); err != nil || tpl.DesiredState != inactive {
		t.Errorf("Apply(nil, submit template) = %+v, %v, want an inactive template", tpl, err)
	}
}

func TestInstantiate(t *testing.T) {
	tpl := mk(t, "web@.service", inactive, "Conflicts=web@*.service", "MachineOf=data@%i.service", "MachineMetadata=role=%p")
	inst, err := units.Instantiate(tpl, "7")
	if err != nil {
		t.Fatalf("Instantiate: %v", err)
	}
	want := &unitfile.XFleet{Name: "web@7.service", Conflicts: []string{"web@*.service"}, MachineOf: []string{"data@7.service"},
		MachineMetadata: unitfile.Metadata{"role": {"web"}}}
	if diff := cmp.Diff(want, inst.Options); diff != "" {
		t.Errorf("Instantiate(web@.service, 7).Options mismatch (-want +got):\n%s", diff)
	}
	if inst.Name != "web@7.service" || inst.Hash != tpl.Hash || inst.DesiredState != inactive {
		t.Errorf("Instantiate(web@.service, 7) = %s %s %s, want web@7.service, the template's hash, inactive", inst.Name, inst.Hash, inst.DesiredState)
	}
	for _, tc := range []struct {
		tpl      *units.Unit
		instance string
		err      string
	}{
		{mk(t, "web.service", inactive), "1", "not a template"},
		{tpl, "", "empty instance"},
		{tpl, "a/b", "invalid unit name"},
		{nil, "1", "no template"},
	} {
		if _, err := units.Instantiate(tc.tpl, tc.instance); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("Instantiate(%v, %q) error = %v, want %q", tc.tpl, tc.instance, err, tc.err)
		}
	}
}

func TestParseState(t *testing.T) {
	for _, s := range []string{"inactive", "loaded", "launched"} {
		if got, err := units.ParseState(s); err != nil || string(got) != s {
			t.Errorf("ParseState(%q) = %q, %v", s, got, err)
		}
	}
	for _, s := range []string{"", "Launched", "running", "none"} {
		if _, err := units.ParseState(s); err == nil {
			t.Errorf("ParseState(%q) = nil error, want an error", s)
		}
	}
}
