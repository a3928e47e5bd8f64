package units_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"pgregory.net/rapid"

	"github.com/fleetsim/fleetsim/model/units"
)

const roundTTL = 30 * time.Second

// beat is a machine whose agent last beat ago before t0, with metadata "key=value".
func beat(id string, ago time.Duration, md ...string) units.MachinePresence {
	m := machine(id, md...)
	return units.MachinePresence{ID: id, Metadata: m.Metadata, Reported: true, LastHeartbeat: t0.Add(-ago)}
}

// roundSummary is a round's outcome as the tables compare it: writes and unplaced units
// with their reasons, the lost machines, and LookAgain as an offset from t0 ("" if zero).
type roundSummary struct {
	Unschedule    []string // "unit@machine: reason"
	Schedule      []string // "unit@machine: reason"
	Unschedulable []string // "unit: reason"
	Lost          []string
	LookAgain     string
}

func summarizeRound(r units.RoundPlan) roundSummary {
	var s roundSummary
	for _, a := range r.Plan.Unschedule {
		s.Unschedule = append(s.Unschedule, a.Unit+"@"+a.Machine+": "+a.Reason)
	}
	for _, a := range r.Plan.Schedule {
		s.Schedule = append(s.Schedule, a.Unit+"@"+a.Machine+": "+a.Reason)
	}
	for _, u := range r.Plan.Unschedulable {
		s.Unschedulable = append(s.Unschedulable, u.Unit+": "+u.Reason)
	}
	s.Lost = r.Lost
	if !r.LookAgain.IsZero() {
		s.LookAgain = "t0+" + r.LookAgain.Sub(t0).String()
	}
	return s
}

// TestPlanRound: the cases the simulator's engine and `fleet hub`'s engine rely on: a unit
// moves off a machine whose TTL ran out (and not a moment before), least-loaded placement,
// global units left to the agents, units scheduled elsewhere left alone, target states,
// templates, machines never reported or leaving, and when to look again.
func TestPlanRound(t *testing.T) {
	lease := units.Lease{Holder: "engine-1", Token: 4, Expires: t0.Add(10 * time.Second)}
	const wentAway = "went away: its presence lapsed"
	tests := []struct {
		name     string
		machines []units.MachinePresence
		jobs     []units.Job
		ttl      time.Duration
		want     roundSummary
	}{
		{
			name:     "a unit moves off a machine whose TTL ran out, to the least-loaded machine",
			machines: []units.MachinePresence{beat("m1", 31*time.Second), beat("m2", 5*time.Second), beat("m3", 10*time.Second)},
			jobs:     []units.Job{on(mk(t, "a.service", launched), "m1"), on(mk(t, "b.service", launched), "m3")},
			want: roundSummary{
				Unschedule: []string{"a.service@m1: machine m1 " + wentAway},
				Schedule:   []string{"a.service@m2: least-loaded eligible machine (load 0)"},
				Lost:       []string{"m1"},
				LookAgain:  "t0+20s", // m3 beat first, so it lapses first
			},
		},
		{
			name:     "at the TTL the machine is already lost",
			machines: []units.MachinePresence{beat("m1", roundTTL), beat("m2", 0)},
			jobs:     []units.Job{on(mk(t, "a.service", loaded), "m1")},
			want: roundSummary{
				Unschedule: []string{"a.service@m1: machine m1 " + wentAway},
				Schedule:   []string{"a.service@m2: least-loaded eligible machine (load 0)"},
				Lost:       []string{"m1"},
				LookAgain:  "t0+30s",
			},
		},
		{
			name:     "just inside the TTL a machine keeps its units, and the round looks again when it would lapse",
			machines: []units.MachinePresence{beat("m1", roundTTL-time.Second), beat("m2", 0)},
			jobs:     []units.Job{on(mk(t, "a.service", launched), "m1")},
			want:     roundSummary{LookAgain: "t0+1s"},
		},
		{
			name:     "ttl <= 0 is the default TTL",
			machines: []units.MachinePresence{beat("m1", units.DefaultMachineTTL), beat("m2", units.DefaultMachineTTL-time.Second)},
			jobs:     []units.Job{on(mk(t, "a.service", launched), "m1")},
			ttl:      -1,
			want: roundSummary{
				Unschedule: []string{"a.service@m1: machine m1 " + wentAway},
				Schedule:   []string{"a.service@m2: least-loaded eligible machine (load 0)"},
				Lost:       []string{"m1"},
				LookAgain:  "t0+1s",
			},
		},
		{
			name:     "least-loaded, global units counted, ties to the smaller ID",
			machines: []units.MachinePresence{beat("m3", 0), beat("m1", 0, "role=web"), beat("m2", 0)},
			jobs: []units.Job{
				free(mk(t, "g.service", launched, "Global=true", "MachineMetadata=role=web")),
				free(mk(t, "x.service", launched)), free(mk(t, "y.service", launched)), free(mk(t, "z.service", launched)),
			},
			want: roundSummary{
				Schedule: []string{
					"x.service@m2: least-loaded eligible machine (load 0)",
					"y.service@m3: least-loaded eligible machine (load 0)",
					"z.service@m1: least-loaded eligible machine (load 1)",
				},
				LookAgain: "t0+30s",
			},
		},
		{
			name:     "global units are the agents': one written to a machine is taken off it",
			machines: []units.MachinePresence{beat("m1", 0)},
			jobs:     []units.Job{on(mk(t, "g.service", launched, "Global=true"), "m1")},
			want: roundSummary{
				Unschedule: []string{"g.service@m1: global units are not scheduled by the engine: agents run them on every eligible machine"},
				LookAgain:  "t0+30s",
			},
		},
		{
			name:     "units scheduled to another live machine stay there",
			machines: []units.MachinePresence{beat("m1", 0), beat("m2", 0)},
			jobs:     []units.Job{on(mk(t, "a.service", launched), "m2"), on(mk(t, "b.service", launched), "m2")},
			want:     roundSummary{LookAgain: "t0+30s"},
		},
		{
			name:     "target states: inactive leaves its machine, loaded and launched get one",
			machines: []units.MachinePresence{beat("m1", 0)},
			jobs: []units.Job{
				on(mk(t, "a.service", inactive), "m1"), free(mk(t, "b.service", loaded)),
				free(mk(t, "c.service", launched)), free(mk(t, "d.service", inactive)),
			},
			want: roundSummary{
				Unschedule: []string{"a.service@m1: target state inactive"},
				Schedule: []string{
					"b.service@m1: least-loaded eligible machine (load 0)",
					"c.service@m1: least-loaded eligible machine (load 1)",
				},
				LookAgain: "t0+30s",
			},
		},
		{
			name:     "templates are not scheduled; their instances are",
			machines: []units.MachinePresence{beat("m1", 0)},
			jobs: []units.Job{
				free(mk(t, "web@.service", inactive)), free(raw(t, "bad@.service", launched)),
				free(mk(t, "web@1.service", launched)),
			},
			want: roundSummary{
				Schedule:      []string{"web@1.service@m1: least-loaded eligible machine (load 0)"},
				Unschedulable: []string{"bad@.service: cannot activate template bad@.service: instantiate it"},
				LookAgain:     "t0+30s",
			},
		},
		{
			name: "machines never reported or leaving take no units and are lost",
			machines: []units.MachinePresence{
				{ID: "m1", Reported: false},
				{ID: "m2", Reported: true, LastHeartbeat: t0, Leaving: true},
				beat("m3", 10*time.Second),
			},
			jobs: []units.Job{on(mk(t, "a.service", launched), "m2"), free(mk(t, "b.service", launched))},
			want: roundSummary{
				Unschedule: []string{"a.service@m2: machine m2 " + wentAway},
				Schedule: []string{
					"a.service@m3: least-loaded eligible machine (load 0)",
					"b.service@m3: least-loaded eligible machine (load 1)",
				},
				Lost:      []string{"m1", "m2"},
				LookAgain: "t0+20s",
			},
		},
		{
			name:     "a unit of a machine the registry no longer has moves",
			machines: []units.MachinePresence{beat("m1", 0)},
			jobs:     []units.Job{on(mk(t, "a.service", launched), "m9")},
			want: roundSummary{
				Unschedule: []string{"a.service@m9: machine m9 went away: it is not registered"},
				Schedule:   []string{"a.service@m1: least-loaded eligible machine (load 0)"},
				LookAgain:  "t0+30s",
			},
		},
		{
			name:     "no machine alive: units wait, and nothing to look again for",
			machines: []units.MachinePresence{beat("m1", time.Minute), beat("m2", time.Hour)},
			jobs:     []units.Job{on(mk(t, "a.service", launched), "m1")},
			want: roundSummary{
				Unschedule:    []string{"a.service@m1: machine m1 " + wentAway},
				Unschedulable: []string{"a.service: no machine is alive"},
				Lost:          []string{"m1", "m2"},
			},
		},
		{
			name: "an empty registry",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ttl := tt.ttl
			if ttl == 0 {
				ttl = roundTTL
			}
			in := units.RoundInput{Now: t0, MachineTTL: ttl, Machines: tt.machines, Units: tt.jobs, Lease: lease}
			got := units.PlanRound(in)
			if diff := cmp.Diff(tt.want, summarizeRound(got), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("PlanRound (-want +got):\n%s", diff)
			}
			if got.Plan.Fence != lease.Fence() {
				t.Errorf("Plan.Fence = %+v, want the lease's %+v", got.Plan.Fence, lease.Fence())
			}
			// The same decision whatever order the registry listed things in.
			rev := in
			rev.Machines, rev.Units = slices.Clone(in.Machines), slices.Clone(in.Units)
			slices.Reverse(rev.Machines)
			slices.Reverse(rev.Units)
			if diff := cmp.Diff(got, units.PlanRound(rev)); diff != "" {
				t.Errorf("PlanRound with the inputs reversed (-in order +reversed):\n%s", diff)
			}
		})
	}
}

// TestRoundsDecide walks one engine through a machine loss and return: each round of a
// Rounds, which keeps its decision, is the round PlanRound makes from scratch.
func TestRoundsDecide(t *testing.T) {
	var r units.Rounds
	lease := units.Lease{Holder: "engine", Token: 1}
	jobs := []units.Job{free(mk(t, "a.service", launched)), free(mk(t, "b.service", launched)), free(mk(t, "g.service", launched, "Global=true"))}
	steps := []struct {
		name     string
		now      time.Duration // after t0
		machines []units.MachinePresence
		submit   *units.Unit
		want     roundSummary
	}{
		{
			name: "first round", machines: []units.MachinePresence{beat("m1", 0), beat("m2", 0)},
			want: roundSummary{Schedule: []string{
				"a.service@m1: least-loaded eligible machine (load 1)",
				"b.service@m2: least-loaded eligible machine (load 1)",
			}, LookAgain: "t0+30s"},
		},
		{
			name: "m2 stays silent", now: 30 * time.Second, machines: []units.MachinePresence{beat("m1", -20*time.Second), beat("m2", 0)},
			want: roundSummary{
				Unschedule: []string{"b.service@m2: machine m2 went away: its presence lapsed"},
				Schedule:   []string{"b.service@m1: least-loaded eligible machine (load 2)"},
				Lost:       []string{"m2"}, LookAgain: "t0+50s",
			},
		},
		{
			name: "m2 is back and a unit is submitted", now: 40 * time.Second,
			machines: []units.MachinePresence{beat("m1", -20*time.Second), beat("m2", -40*time.Second)},
			submit:   mk(t, "c.service", launched),
			want: roundSummary{
				Schedule:  []string{"c.service@m2: least-loaded eligible machine (load 1)"},
				LookAgain: "t0+50s",
			},
		},
	}
	for _, st := range steps {
		if st.submit != nil {
			jobs = append(jobs, free(st.submit))
		}
		in := units.RoundInput{Now: t0.Add(st.now), MachineTTL: roundTTL, Machines: st.machines, Units: jobs, Lease: lease}
		got := r.Decide(in)
		if diff := cmp.Diff(units.PlanRound(in), got); diff != "" {
			t.Fatalf("%s: Rounds.Decide differs from PlanRound (-scratch +kept):\n%s", st.name, diff)
		}
		if diff := cmp.Diff(st.want, summarizeRound(got), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: (-want +got):\n%s", st.name, diff)
		}
		jobs = got.Plan.Apply(jobs) // the driver writes the plan
	}
}

// TestPropRounds: over random sequences of registries (machines beating, falling silent,
// leaving; plans written or lost), a Rounds keeping its decision makes the rounds PlanRound
// makes from scratch, and PlanRound's plan is Schedule's on the machines alive at Now.
func TestPropRounds(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var r units.Rounds
		lease := units.Lease{Holder: "engine", Token: 2}
		in := propInput(t)
		jobs := in.Units
		now := t0
		for step := range rapid.IntRange(1, 8).Draw(t, "steps") {
			label := fmt.Sprint("step ", step)
			if propMaybe(t, 30, label+" new registry?") {
				jobs = propInput(t).Units
			}
			now = now.Add(time.Duration(rapid.IntRange(0, 40).Draw(t, label+" seconds")) * time.Second)
			var ps []units.MachinePresence
			for _, m := range propMachines(t) {
				p := units.MachinePresence{ID: m.ID, Metadata: m.Metadata, Reported: !propMaybe(t, 5, label+" never "+m.ID),
					LastHeartbeat: now.Add(-time.Duration(rapid.IntRange(0, 40).Draw(t, label+" ago "+m.ID)) * time.Second),
					Leaving:       propMaybe(t, 5, label+" leaving "+m.ID)}
				ps = append(ps, p)
			}
			rin := units.RoundInput{Now: now, MachineTTL: roundTTL, Machines: ps, Units: jobs, Lease: lease}
			got := r.Decide(rin)
			want := units.PlanRound(rin)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("%s: Rounds.Decide differs from PlanRound (-scratch +kept):\n%s", label, diff)
			}
			sched := units.Schedule(units.Input{Machines: units.MachinesAt(ps, now, roundTTL), Units: jobs, Lease: lease})
			if diff := cmp.Diff(sched, want.Plan); diff != "" {
				t.Fatalf("%s: PlanRound's plan differs from Schedule's (-Schedule +PlanRound):\n%s", label, diff)
			}
			for _, id := range want.Lost {
				for _, p := range ps {
					if p.ID == id && p.Alive(now, roundTTL) {
						t.Fatalf("%s: %s is alive but listed lost", label, id)
					}
				}
			}
			if !want.LookAgain.IsZero() && !want.LookAgain.After(now) {
				t.Fatalf("%s: LookAgain %v is not after now %v", label, want.LookAgain, now)
			}
			if propMaybe(t, 70, label+" written?") {
				jobs = want.Plan.Apply(jobs)
			}
		}
	})
}
