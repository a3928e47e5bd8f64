package units_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/units"
)

func TestGlobalTargets(t *testing.T) {
	two := []units.MachineState{machine("m1"), machine("m2")}
	tests := []struct {
		name     string
		u        *units.Unit
		machines []units.MachineState
		units    []units.Job
		want     []string
	}{
		{
			// fleet's "Unit Files", "Global=true" with diskType=SSD AND (us-east-1 OR us-west-1): the
			// fleetctl list-units output shows 282f949f and fd1d3e94.
			name: "seed: Global with MachineMetadata",
			u: mk(t, "app.service", launched, "Global=true", "MachineMetadata=region=us-east-1",
				"MachineMetadata=region=us-west-1", "MachineMetadata=diskType=SSD"),
			machines: seedMachines(),
			want:     []string{"282f949f", "fd1d3e94"},
		},
		{
			name: "no MachineMetadata: every alive machine", u: mk(t, "g.service", loaded, "Global=true"),
			machines: []units.MachineState{machine("m2"), dead("m3"), machine("m1")},
			want:     []string{"m1", "m2"},
		},
		{
			name: "own Conflicts keep it off a machine", u: mk(t, "g.service", launched, "Global=true", "Conflicts=db*.service"),
			machines: two, units: []units.Job{on(mk(t, "db1.service", launched), "m1")},
			want: []string{"m2"},
		},
		{
			name: "another unit's Conflicts keep it off a machine", u: mk(t, "g.service", launched, "Global=true"),
			machines: two, units: []units.Job{on(mk(t, "db1.service", launched, "Conflicts=g.service"), "m2")},
			want: []string{"m1"},
		},
		{
			name: "inactive or unscheduled units do not count", u: mk(t, "g.service", launched, "Global=true", "Conflicts=db*.service"),
			machines: two, units: []units.Job{on(mk(t, "db1.service", inactive), "m1"), free(mk(t, "db2.service", launched))},
			want: []string{"m1", "m2"},
		},
		{
			name: "Global with Conflicts and MachineMetadata", u: mk(t, "g.service", launched, "Global=true", "Conflicts=db*.service", "MachineMetadata=zone=a"),
			machines: []units.MachineState{machine("m1", "zone=a"), machine("m2", "zone=a"), machine("m3", "zone=b")},
			units:    []units.Job{on(mk(t, "db1.service", launched), "m2")},
			want:     []string{"m1"},
		},
		{
			name: "two conflicting global units: the smaller name runs", u: mk(t, "g2.service", launched, "Global=true"),
			machines: two, units: []units.Job{free(mk(t, "g1.service", launched, "Global=true", "Conflicts=g2.service"))},
			want: nil,
		},
		{
			name: "two conflicting global units: the smaller name wins", u: mk(t, "g1.service", launched, "Global=true", "Conflicts=g2.service"),
			machines: two, units: []units.Job{free(mk(t, "g2.service", launched, "Global=true"))},
			want: []string{"m1", "m2"},
		},
		{
			name: "unit replaced in the list by the argument", u: mk(t, "g.service", launched, "Global=true"),
			machines: two, units: []units.Job{free(mk(t, "g.service", inactive, "Global=true"))},
			want: []string{"m1", "m2"},
		},
		{name: "not global", u: mk(t, "a.service", launched), machines: two, want: nil},
		{name: "inactive global", u: mk(t, "g.service", inactive, "Global=true"), machines: two, want: nil},
		{name: "invalid global", u: raw(t, "g.service", launched, "Global=true", "MachineID=m1"), machines: two, want: nil},
		{name: "nil", u: nil, machines: two, want: nil},
	}
	for _, tc := range tests {
		got := units.GlobalTargets(tc.u, tc.machines, tc.units)
		if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: GlobalTargets = %v, want %v (-want +got):\n%s", tc.name, got, tc.want, diff)
		}
	}
}

func TestGlobalsOn(t *testing.T) {
	ms := []units.MachineState{machine("m1", "role=web"), machine("m2")}
	jobs := []units.Job{
		free(mk(t, "b.service", launched, "Global=true")),
		free(mk(t, "a.service", launched, "Global=true", "MachineMetadata=role=web")),
		free(mk(t, "c.service", launched, "Global=true", "Conflicts=x.service")),
		on(mk(t, "x.service", launched), "m2"),
	}
	for id, want := range map[string][]string{"m1": {"a.service", "b.service", "c.service"}, "m2": {"b.service"}, "m9": nil} {
		if diff := cmp.Diff(want, units.GlobalsOn(id, ms, jobs), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("GlobalsOn(%s) mismatch (-want +got):\n%s", id, diff)
		}
	}
}

func TestDuplicates(t *testing.T) {
	g := mk(t, "g.service", launched, "Global=true")
	a := mk(t, "a.service", launched)
	b := mk(t, "b.service", launched)
	jobs := []units.Job{free(g), on(a, "m2"), on(b, "m1")}
	running := func(u, m, active string) units.ReportedState {
		return units.ReportedState{Unit: u, Machine: m, LoadState: "loaded", ActiveState: active, SubState: "running"}
	}
	reported := []units.ReportedState{
		// a ran on m1, which was partitioned; the engine rescheduled it to m2.
		running("a.service", "m1", "active"), running("a.service", "m2", "activating"),
		running("a.service", "m2", "active"), // reported twice by m2: counted once
		// b runs once; its old copy on m3 has stopped.
		running("b.service", "m1", "active"), running("b.service", "m3", "inactive"),
		running("b.service", "m4", "failed"),
		// global units run everywhere by design.
		running("g.service", "m1", "active"), running("g.service", "m2", "active"),
		// an orphan (destroyed, still running on two machines).
		running("o.service", "m3", "deactivating"), running("o.service", "m1", "reloading"),
	}
	want := []units.Duplicate{
		{Unit: "a.service", Machines: []string{"m1", "m2"}, Scheduled: "m2"},
		{Unit: "o.service", Machines: []string{"m1", "m3"}},
	}
	if diff := cmp.Diff(want, units.Duplicates(jobs, reported)); diff != "" {
		t.Errorf("Duplicates mismatch (-want +got):\n%s", diff)
	}
}

// TestPartitionDuplicates walks the partition story of the package documentation: m1 is cut
// off, its units are rescheduled, m1 keeps running them, so they run twice until m1 comes
// back and stops them.
func TestPartitionDuplicates(t *testing.T) {
	a := mk(t, "a.service", launched)
	jobs := []units.Job{on(a, "m1")}
	p := units.Schedule(units.Input{Machines: []units.MachineState{dead("m1"), machine("m2")}, Units: jobs})
	jobs = p.Apply(jobs)
	if diff := cmp.Diff([]units.Job{on(a, "m2")}, jobs); diff != "" {
		t.Fatalf("after m1 went away: jobs mismatch (-want +got):\n%s", diff)
	}
	reported := []units.ReportedState{
		{Unit: "a.service", Machine: "m1", ActiveState: "active"}, // still running behind the partition
		{Unit: "a.service", Machine: "m2", ActiveState: "active"},
	}
	want := []units.Duplicate{{Unit: "a.service", Machines: []string{"m1", "m2"}, Scheduled: "m2"}}
	if diff := cmp.Diff(want, units.Duplicates(jobs, reported)); diff != "" {
		t.Errorf("Duplicates during the partition mismatch (-want +got):\n%s", diff)
	}
	// m1 reconnects: it is alive again, but a.service stays on m2 (no rebalancing).
	again := units.Schedule(units.Input{Machines: []units.MachineState{machine("m1"), machine("m2")}, Units: jobs})
	if !again.Empty() {
		t.Errorf("Schedule(after m1 reconnects) = %+v, want no writes", again)
	}
}

func TestMachinesFromMembers(t *testing.T) {
	beat := func(name string, ago time.Duration, mut ...func(*member.Member)) *member.Member {
		m := &member.Member{Name: name, Kind: member.KindMachine, Labels: map[string]string{"region": "east"},
			Agent: member.AgentStatus{Present: true, LastHeartbeat: t0.Add(-ago)}}
		for _, f := range mut {
			f(m)
		}
		return m
	}
	members := []*member.Member{
		beat("fresh", 10*time.Second),
		beat("stale", 31*time.Second),
		beat("edge", 30*time.Second), // the key expires exactly at the TTL
		beat("never", 0, func(m *member.Member) { m.Agent.Present = false }),
		beat("leaving", 0, func(m *member.Member) { m.Leaving = true }),
		beat("cluster", 0, func(m *member.Member) { m.Kind = member.KindCluster }),
		nil,
	}
	east := map[string]string{"region": "east"}
	want := []units.MachineState{
		{ID: "fresh", Metadata: east, Alive: true},
		{ID: "stale", Metadata: east},
		{ID: "edge", Metadata: east},
		{ID: "never", Metadata: east},
		{ID: "leaving", Metadata: east},
	}
	if diff := cmp.Diff(want, units.MachinesFromMembers(members, t0, 0)); diff != "" {
		t.Errorf("MachinesFromMembers(ttl default) mismatch (-want +got):\n%s", diff)
	}
	if got := units.MachinesFromMembers(members[1:2], t0, time.Minute); !got[0].Alive {
		t.Errorf("MachinesFromMembers(stale, ttl 1m) = %+v, want alive", got)
	}
}

func TestIsGlobal(t *testing.T) {
	if !mk(t, "g.service", launched, "Global=yes").IsGlobal() || mk(t, "a.service", launched).IsGlobal() || raw(t, "r.service", launched, "Global=true").IsGlobal() {
		t.Errorf("IsGlobal: want true only for a unit with resolved options and Global=true")
	}
}
