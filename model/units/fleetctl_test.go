package units_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetsim/fleetsim/model/unitfile"
	"github.com/fleetsim/fleetsim/model/units"
)

// TestInstanceFile: an instance that is not stored takes its stored template's file; a name
// that is not an instance, or whose template is not stored, takes none; a template whose file
// makes no valid instance is an InstanceError. ApplyCommand (the simulator) and cmd/fleetctl
// share the rule.
func TestInstanceFile(t *testing.T) {
	parse := func(text string) *unitfile.File {
		f, err := unitfile.Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	web := parse("[Service]\nExecStart=/bin/sleep 1000\n\n[X-Fleet]\nConflicts=web@*.service\n")
	bad := parse("[Service]\nExecStart=/bin/true\n\n[X-Fleet]\nMachineOf=db@%i.service\nConflicts=db@1.service\n")
	stored := map[string]*units.Unit{}
	for name, f := range map[string]*unitfile.File{"web@.service": web, "bad@.socket": bad} {
		u, err := units.New(name, f)
		if err != nil {
			t.Fatalf("New(%s): %v", name, err)
		}
		stored[name] = u
	}
	lookup := func(n string) *units.Unit { return stored[n] }
	tests := []struct {
		name     string
		want     *unitfile.File
		instance bool // an *InstanceError is expected
	}{
		{name: "web@1.service", want: web},
		{name: "web@a.b.service", want: web},
		{name: "web.service"},
		{name: "web@.service"},
		{name: "db@1.service"},
		{name: "web@1.socket"},
		{name: "bad@1.socket", instance: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := units.InstanceFile(lookup, tt.name)
			var ie *units.InstanceError
			if tt.instance != errors.As(err, &ie) || (!tt.instance && err != nil) {
				t.Fatalf("InstanceFile(%s) error = %v, want InstanceError: %v", tt.name, err, tt.instance)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("InstanceFile(%s) (-want +got):\n%s", tt.name, diff)
			}
		})
	}
	// ApplyCommand builds a started instance from the stored template.
	u, err := units.ApplyCommand(lookup, "web@2.service", nil, units.OpStart)
	if err != nil || u.Name != "web@2.service" || u.Hash != web.Hash() || u.DesiredState != units.StateLaunched {
		t.Errorf("ApplyCommand(start web@2.service) = %+v, %v", u, err)
	}
	if _, err := units.ApplyCommand(lookup, "db@2.service", nil, units.OpStart); err == nil {
		t.Error("ApplyCommand(start db@2.service) without a template: no error")
	}
}
