package units_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fleetsim/fleetsim/model/unitfile"
	"github.com/fleetsim/fleetsim/model/units"
)

// Machine IDs in the style of /etc/machine-id.
const (
	idA = "3a1b2c3d4e5f60718293a4b5c6d7e8f9"
	idB = "9f8e7d6c5b4a39281706f5e4d3c2b1a0"
)

// The machines of the documentation's MachineMetadata example (fleet's "Unit Files", "Schedule unit to machine with
// specific metadata").
func seedMachines() []units.MachineState {
	return []units.MachineState{
		machine("282f949f", "diskType=SSD", "region=us-east-1"),
		machine("f139c5a6", "region=us-east-1"),
		machine("fd1d3e94", "diskType=SSD", "region=us-west-1"),
	}
}

func three() []units.MachineState {
	return []units.MachineState{machine("m1"), machine("m2"), machine("m3")}
}

type schedCase struct {
	name     string
	machines []units.MachineState
	units    []units.Job
	want     summary
	// reasons maps "unschedule U", "schedule U" or "unschedulable U" to the exact reason.
	reasons map[string]string
}

// TestSchedule covers every [X-Fleet] option, its interplay with the others, machine loss,
// the least-loaded score and the documentation's examples.
func TestSchedule(t *testing.T) {
	var cases []schedCase
	cases = append(cases, basicCases(t)...)
	cases = append(cases, machineIDCases(t)...)
	cases = append(cases, metadataCases(t)...)
	cases = append(cases, machineOfCases(t)...)
	cases = append(cases, conflictCases(t)...)
	cases = append(cases, replacesCases(t)...)
	cases = append(cases, lossCases(t)...)
	cases = append(cases, templateCases(t)...)
	runSchedCases(t, cases)
}

func runSchedCases(t *testing.T, cases []schedCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := units.Input{Machines: tc.machines, Units: tc.units}
			got := units.Schedule(in)
			if diff := cmp.Diff(tc.want, summarize(got), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Schedule(%s) = %+v, want %+v (-want +got):\n%s", describe(in), summarize(got), tc.want, diff)
			}
			gotReasons := map[string]string{}
			for _, a := range got.Unschedule {
				gotReasons["unschedule "+a.Unit] = a.Reason
			}
			for _, a := range got.Schedule {
				gotReasons["schedule "+a.Unit] = a.Reason
			}
			for _, u := range got.Unschedulable {
				gotReasons["unschedulable "+u.Unit] = u.Reason
			}
			for k, want := range tc.reasons {
				if gotReasons[k] != want {
					t.Errorf("Schedule(%s): %s reason = %q, want %q", describe(in), k, gotReasons[k], want)
				}
			}
			for k, r := range gotReasons {
				if r == "" {
					t.Errorf("Schedule(%s): %s has no reason", describe(in), k)
				}
			}
			// The same decision whatever the input order.
			perm := units.Input{Machines: slices.Clone(tc.machines), Units: slices.Clone(tc.units)}
			slices.Reverse(perm.Machines)
			slices.Reverse(perm.Units)
			if diff := cmp.Diff(got, units.Schedule(perm)); diff != "" {
				t.Errorf("Schedule(%s) depends on input order (-forward +reversed):\n%s", describe(in), diff)
			}
			// Scheduling again after applying the plan changes nothing.
			again := units.Schedule(units.Input{Machines: tc.machines, Units: got.Apply(tc.units)})
			if !again.Empty() {
				t.Errorf("Schedule(after applying Schedule(%s)) = %+v, want no writes", describe(in), summarize(again))
			}
		})
	}
}

func basicCases(t *testing.T) []schedCase {
	return []schedCase{
		{
			name:     "least-loaded: ties broken by machine ID, input order irrelevant",
			machines: []units.MachineState{machine("m2"), machine("m3"), machine("m1")},
			units: []units.Job{free(mk(t, "d.service", launched)), free(mk(t, "a.service", launched)),
				free(mk(t, "c.service", launched)), free(mk(t, "b.service", loaded))},
			want: summary{Schedule: []string{"a.service@m1", "b.service@m2", "c.service@m3", "d.service@m1"}},
			reasons: map[string]string{
				"schedule a.service": "least-loaded eligible machine (load 0)",
				"schedule d.service": "least-loaded eligible machine (load 1)",
			},
		},
		{
			name:     "existing units count towards load",
			machines: three(),
			units: []units.Job{on(mk(t, "x.service", launched), "m1"), on(mk(t, "y.service", loaded), "m1"),
				on(mk(t, "z.service", launched), "m2"),
				free(mk(t, "a.service", launched)), free(mk(t, "b.service", launched)), free(mk(t, "c.service", launched))},
			want: summary{Schedule: []string{"a.service@m3", "b.service@m2", "c.service@m3"}},
		},
		{
			name:     "global units count towards load where they run",
			machines: []units.MachineState{machine("m1", "role=web"), machine("m2")},
			units: []units.Job{free(mk(t, "g.service", launched, "Global=true", "MachineMetadata=role=web")),
				free(mk(t, "a.service", launched)), free(mk(t, "b.service", launched))},
			want: summary{Schedule: []string{"a.service@m2", "b.service@m1"}},
		},
		{
			name:     "an inactive global unit runs nowhere and adds no load",
			machines: []units.MachineState{machine("m1"), machine("m2")},
			units:    []units.Job{free(mk(t, "g.service", inactive, "Global=true")), free(mk(t, "a.service", launched))},
			want:     summary{Schedule: []string{"a.service@m1"}},
		},
		{
			name:     "a global unit is never scheduled, and unscheduled if it was",
			machines: []units.MachineState{machine("m1")},
			units:    []units.Job{on(mk(t, "g.service", launched, "Global=true"), "m1"), free(mk(t, "h.service", launched, "Global=true"))},
			want:     summary{Unschedule: []string{"g.service@m1"}},
			reasons: map[string]string{
				"unschedule g.service": "global units are not scheduled by the engine: agents run them on every eligible machine",
			},
		},
		{
			name:     "inactive units are unscheduled and never placed",
			machines: []units.MachineState{machine("m1")},
			units: []units.Job{on(mk(t, "a.service", inactive), "m1"), free(mk(t, "b.service", inactive)),
				on(raw(t, "c.service", "running"), "m1")},
			want: summary{Unschedule: []string{"a.service@m1", "c.service@m1"}},
			reasons: map[string]string{
				"unschedule a.service": "target state inactive",
				"unschedule c.service": `invalid desired state "running"`,
			},
		},
		{
			name:     "scheduled units stay put: no rebalancing",
			machines: []units.MachineState{machine("m1"), machine("m2")},
			units: []units.Job{on(mk(t, "a.service", launched), "m1"), on(mk(t, "b.service", launched), "m1"),
				on(mk(t, "c.service", launched), "m1")},
		},
		{
			name:     "no machine alive",
			machines: []units.MachineState{dead("m1")},
			units:    []units.Job{free(mk(t, "a.service", launched))},
			want:     summary{Unschedulable: []string{"a.service"}},
			reasons:  map[string]string{"unschedulable a.service": "no machine is alive"},
		},
	}
}

func machineIDCases(t *testing.T) []schedCase {
	ms := []units.MachineState{machine(idA), machine(idB)}
	return []schedCase{
		{
			name: "MachineID: full ID", machines: ms,
			units:   []units.Job{free(mk(t, "a.service", launched, "MachineID="+idB))},
			want:    summary{Schedule: []string{"a.service@" + idB}},
			reasons: map[string]string{"schedule a.service": "matches MachineID " + idB},
		},
		{
			name: "MachineID: 8-character short ID", machines: ms,
			units: []units.Job{free(mk(t, "a.service", launched, "MachineID=9f8e7d6c"))},
			want:  summary{Schedule: []string{"a.service@" + idB}},
		},
		{
			name: "MachineID: prefix other than 8 characters does not match", machines: ms,
			units:   []units.Job{free(mk(t, "a.service", launched, "MachineID=9f8e7d"))},
			want:    summary{Unschedulable: []string{"a.service"}},
			reasons: map[string]string{"unschedulable a.service": "no alive machine matches MachineID 9f8e7d"},
		},
		{
			name: "MachineID: the pinned machine is dead", machines: []units.MachineState{machine(idA), dead(idB)},
			units: []units.Job{on(mk(t, "a.service", launched, "MachineID="+idB), idB)},
			want:  summary{Unschedule: []string{"a.service@" + idB}, Unschedulable: []string{"a.service"}},
			reasons: map[string]string{
				"unschedule a.service":    "machine " + idB + " went away: its presence lapsed",
				"unschedulable a.service": "no alive machine matches MachineID " + idB,
			},
		},
		{
			name: "MachineID: pinned units ignore load", machines: ms,
			units: []units.Job{on(mk(t, "x.service", launched), idA), free(mk(t, "a.service", launched, "MachineID="+idA))},
			want:  summary{Schedule: []string{"a.service@" + idA}},
		},
		{
			name: "X-ConditionMachineID (deprecated)", machines: ms,
			units: []units.Job{free(mk(t, "a.service", launched, "X-ConditionMachineID="+idB))},
			want:  summary{Schedule: []string{"a.service@" + idB}},
		},
		{
			name: "X-ConditionMachineBootID: a boot ID never matches a machine", machines: ms,
			units: []units.Job{free(mk(t, "a.service", launched, "X-ConditionMachineBootID=0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b"))},
			want:  summary{Unschedulable: []string{"a.service"}},
		},
		{
			name: "MachineID on a scheduled unit elsewhere moves it", machines: ms,
			units: []units.Job{on(mk(t, "a.service", launched, "MachineID="+idB), idA)},
			want:  summary{Unschedule: []string{"a.service@" + idA}, Schedule: []string{"a.service@" + idB}},
			reasons: map[string]string{
				"unschedule a.service": "machine " + idA + " does not match MachineID " + idB,
			},
		},
	}
}

func metadataCases(t *testing.T) []schedCase {
	grouped := []units.MachineState{
		machine("n1", "region=us-east-1", "job=foo"), machine("n2", "region=us-west-1", "job=bar"),
		machine("n3", "region=us-east-1", "job=baz"), machine("n4", "region=eu-west-1", "job=foo"),
	}
	groupedOpts := []string{`MachineMetadata="region=us-east-1" "job=foo"`, `MachineMetadata="region=us-west-1" "job=bar"`}
	return []schedCase{
		{
			name: "seed: region=us-east-1 AND diskType=SSD", machines: seedMachines(),
			units: []units.Job{free(mk(t, "a.service", launched, `MachineMetadata="region=us-east-1" "diskType=SSD"`)),
				free(mk(t, "b.service", launched, `MachineMetadata="region=us-east-1" "diskType=SSD"`))},
			want: summary{Schedule: []string{"a.service@282f949f", "b.service@282f949f"}},
		},
		{
			name: "seed: the same key on two lines is ORed", machines: seedMachines(),
			units: []units.Job{
				free(mk(t, "a.service", launched, "MachineMetadata=region=us-east-1", "MachineMetadata=region=us-west-1")),
				free(mk(t, "b.service", launched, "MachineMetadata=region=us-east-1", "MachineMetadata=region=us-west-1")),
				free(mk(t, "c.service", launched, "MachineMetadata=region=us-east-1", "MachineMetadata=region=us-west-1")),
			},
			want: summary{Schedule: []string{"a.service@282f949f", "b.service@f139c5a6", "c.service@fd1d3e94"}},
		},
		{
			name: "seed: diskType=SSD AND (region=us-east-1 OR region=us-west-1)", machines: seedMachines(),
			units: []units.Job{
				free(mk(t, "a.service", launched, `MachineMetadata="region=us-east-1" "region=us-west-1" "diskType=SSD"`)),
				free(mk(t, "b.service", launched, `MachineMetadata="region=us-east-1" "region=us-west-1" "diskType=SSD"`)),
			},
			want: summary{Schedule: []string{"a.service@282f949f", "b.service@fd1d3e94"}},
		},
		{
			name: "seed: grouping pairs onto lines has no effect", machines: grouped,
			units: []units.Job{free(mk(t, "a.service", launched, groupedOpts...)), free(mk(t, "b.service", launched, groupedOpts...)),
				free(mk(t, "c.service", launched, groupedOpts...))},
			// (job=foo OR job=bar) AND (region=us-east-1 OR region=us-west-1): n1 and n2.
			want: summary{Schedule: []string{"a.service@n1", "b.service@n2", "c.service@n1"}},
		},
		{
			name: "MachineMetadata matching no machine", machines: seedMachines(),
			units: []units.Job{free(mk(t, "a.service", launched, "MachineMetadata=region=ap-south-1"))},
			want:  summary{Unschedulable: []string{"a.service"}},
			reasons: map[string]string{"unschedulable a.service": "no eligible machine among 3 alive: " +
				"machine 282f949f does not match MachineMetadata region=ap-south-1 (it has region=us-east-1); " +
				"machine f139c5a6 does not match MachineMetadata region=ap-south-1 (it has region=us-east-1); " +
				"machine fd1d3e94 does not match MachineMetadata region=ap-south-1 (it has region=us-west-1)"},
		},
		{
			name: "MachineMetadata key the machines lack; reasons capped at three", machines: append(seedMachines(), machine("ffff0000")),
			units: []units.Job{free(mk(t, "a.service", launched, `MachineMetadata="gpu=a100" "gpu=h100"`))},
			want:  summary{Unschedulable: []string{"a.service"}},
			reasons: map[string]string{"unschedulable a.service": "no eligible machine among 4 alive: " +
				"machine 282f949f does not match MachineMetadata gpu=a100|h100 (it has no gpu); " +
				"machine f139c5a6 does not match MachineMetadata gpu=a100|h100 (it has no gpu); " +
				"machine fd1d3e94 does not match MachineMetadata gpu=a100|h100 (it has no gpu); and 1 more"},
		},
		{
			name: "machine metadata changed: the unit moves", machines: seedMachines(),
			units: []units.Job{on(mk(t, "a.service", launched, "MachineMetadata=region=us-west-1"), "282f949f")},
			want:  summary{Unschedule: []string{"a.service@282f949f"}, Schedule: []string{"a.service@fd1d3e94"}},
			reasons: map[string]string{
				"unschedule a.service": "machine 282f949f does not match MachineMetadata region=us-west-1 (it has region=us-east-1)",
			},
		},
		{
			name: "X-ConditionMachineMetadata (deprecated)", machines: seedMachines(),
			units: []units.Job{free(mk(t, "a.service", launched, "X-ConditionMachineMetadata=region=us-west-1"))},
			want:  summary{Schedule: []string{"a.service@fd1d3e94"}},
		},
		{
			name: "malformed metadata items are ignored", machines: seedMachines(),
			units: []units.Job{free(mk(t, "a.service", launched, "MachineMetadata=region", "MachineMetadata=diskType=SSD"))},
			want:  summary{Schedule: []string{"a.service@282f949f"}},
		},
	}
}

func machineOfCases(t *testing.T) []schedCase {
	return []schedCase{
		{
			name: "a follower lands with its leader in the same decision", machines: []units.MachineState{machine("m1"), machine("m2")},
			units: []units.Job{on(mk(t, "x.service", launched), "m1"),
				free(mk(t, "a.service", launched, "MachineOf=z.service")), free(mk(t, "z.service", launched))},
			want:    summary{Schedule: []string{"a.service@m2", "z.service@m2"}},
			reasons: map[string]string{"schedule a.service": "next to MachineOf z.service; least-loaded eligible machine (load 1)"},
		},
		{
			name: "a chain of followers lands together", machines: []units.MachineState{machine("m1"), machine("m2")},
			units: []units.Job{on(mk(t, "x.service", launched), "m1"),
				free(mk(t, "a.service", launched, "MachineOf=b.service")), free(mk(t, "b.service", launched, "MachineOf=c.service")),
				free(mk(t, "c.service", launched))},
			want: summary{Schedule: []string{"a.service@m2", "b.service@m2", "c.service@m2"}},
		},
		{
			name: "followers move with their leader off a lost machine", machines: []units.MachineState{dead("m1"), machine("m2"), machine("m3")},
			units: []units.Job{on(mk(t, "x.service", launched), "m2"),
				on(mk(t, "a.service", launched, "MachineOf=z.service"), "m1"), on(mk(t, "z.service", launched), "m1")},
			want: summary{Unschedule: []string{"a.service@m1", "z.service@m1"}, Schedule: []string{"a.service@m3", "z.service@m3"}},
		},
		{
			name: "a follower away from its leader joins it", machines: []units.MachineState{machine("m1"), machine("m2")},
			units: []units.Job{on(mk(t, "a.service", launched, "MachineOf=z.service"), "m1"), on(mk(t, "z.service", launched), "m2")},
			want:  summary{Unschedule: []string{"a.service@m1"}, Schedule: []string{"a.service@m2"}},
			reasons: map[string]string{
				"unschedule a.service": "machine m1 does not run MachineOf peer z.service",
			},
		},
		{
			name: "a follower of a missing unit is unschedulable", machines: three(),
			units:   []units.Job{free(mk(t, "a.service", launched, "MachineOf=z.service"))},
			want:    summary{Unschedulable: []string{"a.service"}},
			reasons: map[string]string{"unschedulable a.service": "MachineOf peer z.service does not exist"},
		},
		{
			name: "a follower of an unloaded leader is unscheduled with it", machines: three(),
			units: []units.Job{on(mk(t, "a.service", launched, "MachineOf=z.service"), "m1"), on(mk(t, "z.service", inactive), "m1")},
			want:  summary{Unschedule: []string{"a.service@m1", "z.service@m1"}, Unschedulable: []string{"a.service"}},
			reasons: map[string]string{
				"unschedule a.service":    "machine m1 does not run MachineOf peer z.service",
				"unschedulable a.service": "MachineOf peer z.service is inactive",
			},
		},
		{
			name: "a follower of an invalid unit", machines: three(),
			units: []units.Job{free(mk(t, "a.service", launched, "MachineOf=z.service")), free(raw(t, "z.service", launched, "MachineID=m1", "Global=true"))},
			want:  summary{Unschedulable: []string{"a.service", "z.service"}},
		},
		{
			name: "mutual MachineOf never schedules", machines: three(),
			units: []units.Job{free(mk(t, "a.service", launched, "MachineOf=b.service")), free(mk(t, "b.service", launched, "MachineOf=a.service"))},
			want:  summary{Unschedulable: []string{"a.service", "b.service"}},
			reasons: map[string]string{
				"unschedulable a.service": "MachineOf peer b.service is not scheduled",
			},
		},
		{
			name: "mutual MachineOf already together stays", machines: three(),
			units: []units.Job{on(mk(t, "a.service", launched, "MachineOf=b.service"), "m2"), on(mk(t, "b.service", launched, "MachineOf=a.service"), "m2")},
		},
		{
			name: "two peers on different machines", machines: three(),
			units: []units.Job{free(mk(t, "a.service", launched, "MachineOf=b.service", "MachineOf=c.service")),
				on(mk(t, "b.service", launched), "m1"), on(mk(t, "c.service", launched), "m2")},
			want: summary{Unschedulable: []string{"a.service"}},
			reasons: map[string]string{"unschedulable a.service": "no eligible machine among 3 alive: " +
				"machine m1 does not run MachineOf peer c.service; machine m2 does not run MachineOf peer b.service; " +
				"machine m3 does not run MachineOf peer b.service"},
		},
		{
			name: "dynamic requirement: MachineOf=%p.socket", machines: three(),
			units: []units.Job{on(mk(t, "x.service", launched), "m1"),
				free(mk(t, "foo.service", launched, "MachineOf=%p.socket")), free(mk(t, "foo.socket", launched))},
			want: summary{Schedule: []string{"foo.service@m2", "foo.socket@m2"}},
		},
		{
			name: "X-ConditionMachineOf (deprecated)", machines: three(),
			units: []units.Job{on(mk(t, "z.service", launched), "m3"), free(mk(t, "a.service", launched, "X-ConditionMachineOf=z.service"))},
			want:  summary{Schedule: []string{"a.service@m3"}},
		},
		{
			name: "MachineOf a global unit: any machine it runs on", machines: []units.MachineState{machine("m1"), machine("m2", "role=db"), machine("m3", "role=db")},
			units: []units.Job{free(mk(t, "g.service", launched, "Global=true", "MachineMetadata=role=db")),
				on(mk(t, "x.service", launched), "m2"),
				free(mk(t, "a.service", launched, "MachineOf=g.service"))},
			want: summary{Schedule: []string{"a.service@m3"}},
		},
		{
			name: "a follower conflicting with its leader's neighbour", machines: three(),
			units: []units.Job{on(mk(t, "z.service", launched), "m1"), on(mk(t, "y.service", launched), "m1"),
				free(mk(t, "a.service", launched, "MachineOf=z.service", "Conflicts=y.service"))},
			want: summary{Unschedulable: []string{"a.service"}},
			reasons: map[string]string{"unschedulable a.service": "no eligible machine among 3 alive: " +
				"machine m1 runs y.service, which conflicts with a.service (Conflicts=y.service in a.service matches y.service); " +
				"machine m2 does not run MachineOf peer z.service; machine m3 does not run MachineOf peer z.service"},
		},
	}
}

func conflictCases(t *testing.T) []schedCase {
	return []schedCase{
		{
			name: "Conflicts spreads units", machines: []units.MachineState{machine("m1"), machine("m2")},
			units: []units.Job{free(mk(t, "a.service", launched, "Conflicts=b.service")), free(mk(t, "b.service", launched)),
				free(mk(t, "c.service", launched))},
			want: summary{Schedule: []string{"a.service@m1", "b.service@m2", "c.service@m1"}},
		},
		{
			name: "Conflicts holds in both directions; unschedulable when no machine is left", machines: []units.MachineState{machine("m1")},
			units: []units.Job{free(mk(t, "a.service", launched, "Conflicts=b.service")), free(mk(t, "b.service", launched))},
			want:  summary{Schedule: []string{"a.service@m1"}, Unschedulable: []string{"b.service"}},
			reasons: map[string]string{"unschedulable b.service": "no eligible machine among 1 alive: " +
				"machine m1 runs a.service, which conflicts with b.service (Conflicts=b.service in a.service matches b.service)"},
		},
		{
			name: "Conflicts glob: one instance per machine", machines: []units.MachineState{machine("m1"), machine("m2")},
			units: []units.Job{free(mk(t, "web@1.service", launched, "Conflicts=web@*.service")),
				free(mk(t, "web@2.service", launched, "Conflicts=web@*.service")), free(mk(t, "web@3.service", launched, "Conflicts=web@*.service"))},
			want: summary{Schedule: []string{"web@1.service@m1", "web@2.service@m2"}, Unschedulable: []string{"web@3.service"}},
		},
		{
			name: "Conflicts: space-separated globs", machines: []units.MachineState{machine("m1"), machine("m2")},
			units: []units.Job{free(mk(t, "a.service", launched, "Conflicts=b.service c.service")), free(mk(t, "b.service", launched)),
				free(mk(t, "c.service", launched))},
			want: summary{Schedule: []string{"a.service@m1", "b.service@m2", "c.service@m2"}},
		},
		{
			name: "X-Conflicts (deprecated)", machines: []units.MachineState{machine("m1"), machine("m2")},
			units: []units.Job{on(mk(t, "b.service", launched), "m2"), on(mk(t, "x.service", launched), "m1"),
				free(mk(t, "a.service", launched, "X-Conflicts=b*"))},
			want: summary{Schedule: []string{"a.service@m1"}},
		},
		{
			name: "two conflicting scheduled units: the greater name moves", machines: []units.MachineState{machine("m1"), machine("m2")},
			units: []units.Job{on(mk(t, "b.service", launched, "Conflicts=a.service"), "m1"), on(mk(t, "a.service", launched), "m1")},
			want:  summary{Unschedule: []string{"b.service@m1"}, Schedule: []string{"b.service@m2"}},
			reasons: map[string]string{"unschedule b.service": "machine m1 runs a.service, which conflicts with b.service " +
				"(Conflicts=a.service in b.service matches a.service); of two conflicting units the one with the greater name gives way"},
		},
		{
			name: "two conflicting scheduled units: the greater name moves, whoever has the glob", machines: []units.MachineState{machine("m1"), machine("m2")},
			units: []units.Job{on(mk(t, "b.service", launched), "m1"), on(mk(t, "a.service", launched, "Conflicts=b.service"), "m1")},
			want:  summary{Unschedule: []string{"b.service@m1"}, Schedule: []string{"b.service@m2"}},
		},
		{
			name: "three-way: evictions follow name order", machines: []units.MachineState{machine("m1")},
			units: []units.Job{on(mk(t, "a.service", launched, "Conflicts=b.service"), "m1"), on(mk(t, "b.service", launched, "Conflicts=c.service"), "m1"),
				on(mk(t, "c.service", launched), "m1")},
			// b gives way to a; then c no longer meets b and stays.
			want: summary{Unschedule: []string{"b.service@m1"}, Unschedulable: []string{"b.service"}},
		},
		{
			name: "a global unit's Conflicts keep it off a machine with a conflicting unit", machines: []units.MachineState{machine("m1"), machine("m2")},
			units: []units.Job{free(mk(t, "g.service", launched, "Global=true", "Conflicts=db*.service")),
				on(mk(t, "db1.service", launched), "m1"), free(mk(t, "db2.service", launched))},
			// g runs on m2 only (load 1 each): db2 cannot join g, so it goes to m1.
			want: summary{Schedule: []string{"db2.service@m1"}},
		},
		{
			name: "no unit is scheduled where a conflicting global unit runs", machines: []units.MachineState{machine("m1"), machine("m2")},
			units: []units.Job{free(mk(t, "g.service", launched, "Global=true", "Conflicts=x.service")), free(mk(t, "x.service", launched))},
			want:  summary{Unschedulable: []string{"x.service"}},
			reasons: map[string]string{"unschedulable x.service": "no eligible machine among 2 alive: " +
				"machine m1 runs global unit g.service, which conflicts with x.service (Conflicts=x.service in g.service matches x.service); " +
				"machine m2 runs global unit g.service, which conflicts with x.service (Conflicts=x.service in g.service matches x.service)"},
		},
		{
			name: "a global unit's Conflicts do not evict a scheduled unit", machines: []units.MachineState{machine("m1"), machine("m2")},
			units: []units.Job{free(mk(t, "g.service", launched, "Global=true", "Conflicts=x.service")), on(mk(t, "x.service", launched), "m1")},
		},
	}
}

func replacesCases(t *testing.T) []schedCase {
	// l.service pins new.service (MachineOf) to m1, where old.service runs.
	base := func(old *units.Unit, more ...units.Job) []units.Job {
		return append([]units.Job{on(mk(t, "l.service", launched), "m1"), on(old, "m1"),
			free(mk(t, "new.service", launched, "MachineOf=l.service", "Replaces=old.service"))}, more...)
	}
	ssd := []units.MachineState{machine("m1", "disk=ssd"), machine("m2"), machine("m3", "disk=ssd")}
	return []schedCase{
		{
			name: "Replaces: the replacing unit takes the machine, the replaced one moves to the least-loaded other", machines: three(),
			units: base(mk(t, "old.service", launched)),
			want:  summary{Unschedule: []string{"old.service@m1"}, Schedule: []string{"new.service@m1", "old.service@m2"}},
			reasons: map[string]string{
				"schedule new.service":   "next to MachineOf l.service; least-loaded eligible machine (load 2); displaces old.service (Replaces)",
				"unschedule old.service": "machine m1 now runs new.service, which replaces it",
				"schedule old.service":   "least-loaded eligible machine (load 0)",
			},
		},
		{
			name: "Replaces (fix): the replaced unit keeps its MachineMetadata", machines: ssd,
			units: base(mk(t, "old.service", launched, "MachineMetadata=disk=ssd")),
			want:  summary{Unschedule: []string{"old.service@m1"}, Schedule: []string{"new.service@m1", "old.service@m3"}},
		},
		{
			name: "Replaces (fix): the replaced unit stays unscheduled when nothing else fits", machines: []units.MachineState{machine("m1", "disk=ssd"), machine("m2"), machine("m3")},
			units: base(mk(t, "old.service", launched, "MachineMetadata=disk=ssd")),
			want:  summary{Unschedule: []string{"old.service@m1"}, Schedule: []string{"new.service@m1"}, Unschedulable: []string{"old.service"}},
			reasons: map[string]string{"unschedulable old.service": "no eligible machine among 3 alive: " +
				"machine m1 runs new.service, which replaces old.service (Replaces=old.service); " +
				"machine m2 does not match MachineMetadata disk=ssd (it has no disk); machine m3 does not match MachineMetadata disk=ssd (it has no disk)"},
		},
		{
			name: "Replaces (fix): the replaced unit keeps its Conflicts", machines: three(),
			units: base(mk(t, "old.service", launched, "Conflicts=x.service"), on(mk(t, "x.service", launched), "m3"),
				on(mk(t, "y.service", launched), "m3")),
			want: summary{Unschedule: []string{"old.service@m1"}, Schedule: []string{"new.service@m1", "old.service@m2"}},
		},
		{
			name: "Replaces (fix): the replaced unit keeps its conflicts with others' globs", machines: three(),
			units: base(mk(t, "old.service", launched), on(mk(t, "x.service", launched, "Conflicts=old.service"), "m2")),
			want:  summary{Unschedule: []string{"old.service@m1"}, Schedule: []string{"new.service@m1", "old.service@m3"}},
		},
		{
			name: "Replaces (fix): the replaced unit keeps its MachineID", machines: three(),
			units: base(mk(t, "old.service", launched, "MachineID=m1")),
			want:  summary{Unschedule: []string{"old.service@m1"}, Schedule: []string{"new.service@m1"}, Unschedulable: []string{"old.service"}},
		},
		{
			name: "Replaces (fix): the replaced unit keeps its MachineOf", machines: three(),
			units: base(mk(t, "old.service", launched, "MachineOf=l.service")),
			want:  summary{Unschedule: []string{"old.service@m1"}, Schedule: []string{"new.service@m1"}, Unschedulable: []string{"old.service"}},
			reasons: map[string]string{"unschedulable old.service": "no eligible machine among 3 alive: " +
				"machine m1 runs new.service, which replaces old.service (Replaces=old.service); " +
				"machine m2 does not run MachineOf peer l.service; machine m3 does not run MachineOf peer l.service"},
		},
		{
			name: "Replaces: the replaced unit's followers move with it", machines: three(),
			units: base(mk(t, "old.service", launched), on(mk(t, "f.service", launched, "MachineOf=old.service"), "m1")),
			want: summary{Unschedule: []string{"f.service@m1", "old.service@m1"},
				Schedule: []string{"f.service@m2", "new.service@m1", "old.service@m2"}},
		},
		{
			name: "Replaces glob", machines: three(),
			units: []units.Job{on(mk(t, "l.service", launched), "m1"), on(mk(t, "old-1.service", launched), "m1"),
				free(mk(t, "new.service", launched, "MachineOf=l.service", "Replaces=old-*.service"))},
			want: summary{Unschedule: []string{"old-1.service@m1"}, Schedule: []string{"new.service@m1", "old-1.service@m2"}},
		},
		{
			name: "Replaces: already together, the replaced unit moves", machines: []units.MachineState{machine("m1"), machine("m2")},
			units: []units.Job{on(mk(t, "j.service", launched, "Replaces=r.service"), "m1"), on(mk(t, "r.service", launched), "m1")},
			want:  summary{Unschedule: []string{"r.service@m1"}, Schedule: []string{"r.service@m2"}},
			reasons: map[string]string{
				"unschedule r.service": "machine m1 runs j.service, which replaces r.service (Replaces=r.service)",
			},
		},
		{
			name: "Replaces: the replaced unit cannot come back", machines: []units.MachineState{machine("m1")},
			units: []units.Job{on(mk(t, "j.service", launched, "Replaces=r.service"), "m1"), free(mk(t, "r.service", launched))},
			want:  summary{Unschedulable: []string{"r.service"}},
		},
		{
			name: "Replaces does not attract the replacing unit: least-loaded decides", machines: []units.MachineState{machine("m1"), machine("m2")},
			units: []units.Job{on(mk(t, "r.service", launched), "m1"), free(mk(t, "j.service", launched, "Replaces=r.service"))},
			want:  summary{Schedule: []string{"j.service@m2"}},
		},
		{
			// b1 follows b2, which follows web@1, which b1 replaces: displacing web@1 would
			// take b2 and so b1 itself away. The Replaces is ignored, like a circular one.
			name: "Replaces of a unit one follows through MachineOf is ignored", machines: []units.MachineState{machine("m1"), machine("m2")},
			units: []units.Job{free(mk(t, "b1.service", launched, "MachineOf=b2.service", "Replaces=web@*.service")),
				free(mk(t, "b2.service", launched, "MachineOf=web@1.service")), on(mk(t, "web@1.service", launched), "m1")},
			want: summary{Schedule: []string{"b1.service@m1", "b2.service@m1"}},
		},
		{
			name: "circular Replaces (a pair) is ignored", machines: []units.MachineState{machine("m1"), machine("m2")},
			units: []units.Job{on(mk(t, "a.service", launched, "Replaces=b.service"), "m1"), on(mk(t, "b.service", launched, "Replaces=a.service"), "m1")},
		},
		{
			name: "circular Replaces (three units) is ignored; an edge into the cycle is not", machines: []units.MachineState{machine("m1"), machine("m2")},
			units: []units.Job{on(mk(t, "a.service", launched, "Replaces=b.service"), "m1"), on(mk(t, "b.service", launched, "Replaces=c.service"), "m1"),
				on(mk(t, "c.service", launched, "Replaces=a.service"), "m1"), on(mk(t, "d.service", launched, "Replaces=a.service"), "m2"),
				on(mk(t, "e.service", launched), "m2")},
			want: summary{},
		},
		{
			name: "circular Replaces (three units) is ignored; an edge into the cycle is not (co-located)", machines: []units.MachineState{machine("m1"), machine("m2")},
			units: []units.Job{on(mk(t, "a.service", launched, "Replaces=b.service"), "m1"), on(mk(t, "b.service", launched, "Replaces=c.service"), "m1"),
				on(mk(t, "c.service", launched, "Replaces=a.service"), "m1"), on(mk(t, "d.service", launched, "Replaces=a.service"), "m1")},
			want: summary{Unschedule: []string{"a.service@m1"}, Schedule: []string{"a.service@m2"}},
		},
	}
}

func lossCases(t *testing.T) []schedCase {
	return []schedCase{
		{
			name: "units of a lost machine are rescheduled in the same decision", machines: []units.MachineState{dead("m1"), machine("m2"), machine("m3")},
			units: []units.Job{on(mk(t, "a.service", launched), "m1"), on(mk(t, "b.service", loaded), "m1"), on(mk(t, "c.service", launched), "m2")},
			want:  summary{Unschedule: []string{"a.service@m1", "b.service@m1"}, Schedule: []string{"a.service@m3", "b.service@m2"}},
			reasons: map[string]string{
				"unschedule a.service": "machine m1 went away: its presence lapsed",
				"schedule a.service":   "least-loaded eligible machine (load 0)",
			},
		},
		{
			name: "a machine no longer registered", machines: []units.MachineState{machine("m1")},
			units:   []units.Job{on(mk(t, "a.service", launched), "m9")},
			want:    summary{Unschedule: []string{"a.service@m9"}, Schedule: []string{"a.service@m1"}},
			reasons: map[string]string{"unschedule a.service": "machine m9 went away: it is not registered"},
		},
		{
			name: "a lost machine's units respect their constraints elsewhere", machines: []units.MachineState{dead("m1", "disk=ssd"), machine("m2"), machine("m3", "disk=ssd")},
			units: []units.Job{on(mk(t, "a.service", launched, "MachineMetadata=disk=ssd"), "m1"), on(mk(t, "b.service", launched, "Conflicts=a.service"), "m1")},
			want:  summary{Unschedule: []string{"a.service@m1", "b.service@m1"}, Schedule: []string{"a.service@m3", "b.service@m2"}},
		},
		{
			name: "the only machine is lost", machines: []units.MachineState{dead("m1")},
			units: []units.Job{on(mk(t, "a.service", launched), "m1")},
			want:  summary{Unschedule: []string{"a.service@m1"}, Unschedulable: []string{"a.service"}},
		},
	}
}

func templateCases(t *testing.T) []schedCase {
	tpl := mk(t, "web@.service", inactive, "Conflicts=web@*.service", "MachineMetadata=role=%p")
	inst := func(i string, s units.State) *units.Unit {
		u, err := units.Instantiate(tpl, i)
		if err != nil {
			t.Fatalf("Instantiate(%s): %v", i, err)
		}
		return u.WithState(s)
	}
	ms := []units.MachineState{machine("m1", "role=web"), machine("m2", "role=web"), machine("m3", "role=db")}
	return []schedCase{
		{
			name: "instances of a template, spread by their Conflicts", machines: ms,
			units: []units.Job{free(tpl), free(inst("1", launched)), free(inst("2", launched)), free(inst("3", loaded))},
			want:  summary{Schedule: []string{"web@1.service@m1", "web@2.service@m2"}, Unschedulable: []string{"web@3.service"}},
		},
		{
			name: "a template cannot be scheduled", machines: ms,
			units: []units.Job{free(raw(t, "web@.service", launched)), on(raw(t, "app@.service", loaded), "m1")},
			want:  summary{Unschedule: []string{"app@.service@m1"}, Unschedulable: []string{"app@.service", "web@.service"}},
			reasons: map[string]string{
				"unschedulable web@.service": "cannot activate template web@.service: instantiate it",
				"unschedule app@.service":    "cannot activate template app@.service: instantiate it",
			},
		},
	}
}

// TestScheduleInvalidOptions checks that every combination unit.ParseXFleet rejects makes
// an active unit unschedulable with the parse error, and unschedules it if it was scheduled.
func TestScheduleInvalidOptions(t *testing.T) {
	rejected := []struct {
		name  string
		lines []string
	}{
		{"MachineID + MachineOf", []string{"MachineID=m1", "MachineOf=b.service"}},
		{"MachineID + Conflicts", []string{"MachineID=m1", "Conflicts=b.service"}},
		{"MachineID + Global", []string{"MachineID=m1", "Global=true"}},
		{"MachineID + Replaces", []string{"MachineID=m1", "Replaces=b.service"}},
		{"X-ConditionMachineID + X-Conflicts", []string{"X-ConditionMachineID=m1", "X-Conflicts=b.service"}},
		{"Global + MachineOf", []string{"Global=true", "MachineOf=b.service"}},
		{"Global + Replaces", []string{"Global=yes", "Replaces=b.service"}},
		{"Conflicts + Replaces", []string{"Conflicts=b.service", "Replaces=c.service"}},
		{"MachineOf peer matched by own Conflicts", []string{"MachineOf=b.service", "Conflicts=b*"}},
		{"MachineOf peer matched by own Replaces", []string{"MachineOf=b.service", "Replaces=*.service"}},
		{"empty MachineID", []string{"MachineID="}},
		{"empty MachineOf", []string{"MachineOf="}},
		{"malformed Conflicts glob", []string{"Conflicts=[b"}},
		{"malformed Replaces glob", []string{"Replaces=[b"}},
	}
	ms := []units.MachineState{machine("m1"), machine("m2")}
	for _, tc := range rejected {
		f := file(t, tc.lines...)
		_, perr := unitfile.ParseXFleet(f, "a.service")
		if perr == nil {
			t.Errorf("%s: ParseXFleet accepted %q; this table expects a rejected combination", tc.name, tc.lines)
			continue
		}
		wantReason := "invalid unit options: " + perr.Error()
		a := raw(t, "a.service", launched, tc.lines...)
		b := mk(t, "b.service", launched)
		for _, at := range []string{"", "m1"} {
			in := units.Input{Machines: ms, Units: []units.Job{on(a, at), on(b, "m2")}}
			got := units.Schedule(in)
			want := units.Plan{Unschedulable: []units.Unplaced{{Unit: "a.service", Reason: wantReason}}}
			if at != "" {
				want.Unschedule = []units.Action{{Unit: "a.service", Machine: at, Reason: wantReason}}
			}
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s: Schedule(%s) = %+v, want %+v (-want +got):\n%s", tc.name, describe(in), got, want, diff)
			}
		}
	}

	// Hand-built options are validated too.
	bad := &units.Unit{Name: "a.service", DesiredState: launched, Options: &unitfile.XFleet{Name: "a.service", MachineID: "m1", Global: true}}
	got := units.Schedule(units.Input{Machines: ms, Units: []units.Job{free(bad)}})
	if len(got.Unschedulable) != 1 || !strings.Contains(got.Unschedulable[0].Reason, "MachineID: cannot be combined with Global") {
		t.Errorf("Schedule(hand-built invalid options) = %+v, want a.service unschedulable for MachineID+Global", got)
	}
	// Invalid names too.
	got = units.Schedule(units.Input{Machines: ms, Units: []units.Job{free(raw(t, "bad", launched))}})
	if len(got.Unschedulable) != 1 || !strings.Contains(got.Unschedulable[0].Reason, `invalid unit name "bad"`) {
		t.Errorf("Schedule(invalid name) = %+v, want it unschedulable with the name error", got)
	}
}

// TestSchedulePlanExact pins a whole plan, reasons and fence included.
func TestSchedulePlanExact(t *testing.T) {
	in := units.Input{
		Machines: []units.MachineState{dead("m1"), machine("m2", "region=us-east"), machine("m3", "region=eu")},
		Units: []units.Job{
			on(mk(t, "api.service", launched, "MachineMetadata=region=us-east"), "m1"),
			on(mk(t, "cache.service", launched, "MachineOf=api.service"), "m1"),
			on(mk(t, "old.service", inactive), "m2"),
			free(mk(t, "eu.service", launched, "MachineMetadata=region=us-west")),
		},
		Lease: units.Lease{Holder: "m2", Token: 9, Expires: t0},
	}
	want := units.Plan{
		Fence: units.FencedWrite{Holder: "m2", Token: 9},
		Unschedule: []units.Action{
			{Unit: "api.service", Machine: "m1", Reason: "machine m1 went away: its presence lapsed"},
			{Unit: "cache.service", Machine: "m1", Reason: "machine m1 went away: its presence lapsed"},
			{Unit: "old.service", Machine: "m2", Reason: "target state inactive"},
		},
		Schedule: []units.Action{
			{Unit: "api.service", Machine: "m2", Reason: "least-loaded eligible machine (load 0)"},
			{Unit: "cache.service", Machine: "m2", Reason: "next to MachineOf api.service; least-loaded eligible machine (load 1)"},
		},
		Unschedulable: []units.Unplaced{{Unit: "eu.service", Reason: "no eligible machine among 2 alive: " +
			"machine m2 does not match MachineMetadata region=us-west (it has region=us-east); " +
			"machine m3 does not match MachineMetadata region=us-west (it has region=eu)"}},
	}
	got := units.Schedule(in)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Schedule(%s) = %+v, want %+v (-want +got):\n%s", describe(in), got, want, diff)
	}
}

func TestPlanApply(t *testing.T) {
	a, b, c := mk(t, "a.service", launched), mk(t, "b.service", launched), mk(t, "c.service", launched)
	jobs := []units.Job{on(a, "m1"), on(b, "m1"), free(c)}
	p := units.Plan{
		Unschedule: []units.Action{{Unit: "a.service", Machine: "m1"}, {Unit: "b.service", Machine: "m1"}},
		Schedule:   []units.Action{{Unit: "b.service", Machine: "m2"}, {Unit: "c.service", Machine: "m3"}},
	}
	want := []units.Job{free(a), on(b, "m2"), on(c, "m3")}
	if diff := cmp.Diff(want, p.Apply(jobs)); diff != "" {
		t.Errorf("Plan.Apply mismatch (-want +got):\n%s", diff)
	}
	if jobs[0].Machine != "m1" {
		t.Errorf("Plan.Apply modified its input")
	}
}

func TestFilters(t *testing.T) {
	want := []string{"MachineID", "MachineMetadata", "MachineOf", "Conflicts", "Replaces"}
	if diff := cmp.Diff(want, units.Filters()); diff != "" {
		t.Errorf("Filters() mismatch (-want +got):\n%s", diff)
	}
}
