package bench

import (
	"maps"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/scheduler"
	"github.com/fleetsim/fleetsim/sim"
)

// Schedule measures one whole scheduling decision of policy over a generated fleet of the
// given size; wantPlaced, when not negative, is checked on every decision. The fleet
// comes with a store version (Input.MembersVersion) and a feed of status writes
// (Input.Status), as the simulator's store hands them over: nothing changes between
// decisions, so the index is not re-synced and no status is re-read, but every decision
// is made in full (it checks every candidate's eligibility at the time).
func Schedule(b *testing.B, members int, p *placement.PlacementPolicy, n int32, wantPlaced int) {
	fleet := Fleet(members, 1)
	snap := &placement.PolicySnapshot{Name: "crp-0", Placement: "crp", Policy: p, NumberOfClusters: n}
	in := scheduler.Input{Snapshot: snap, Members: fleet, Now: Epoch, MembersVersion: 1, Status: member.NewStatusFeed(0)}
	s := scheduler.New(scheduler.Options{})
	b.ReportAllocs()
	b.ResetTimer()
	start := CPUTime()
	for b.Loop() {
		decide(b, s, in, wantPlaced)
	}
	reportCPU(b, start)
}

// reportCPU reports the process's CPU time since start per op (cpu-ns/op): on a shared
// machine it moves less than wall time, which counts the time other processes hold the core.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(CPUTime()-start)/float64(b.N), "cpu-ns/op")
}

// ScheduleHeartbeats is Schedule with the fleet alive between decisions, as the hub sees it
// under a steady stream of heartbeats: before each decision the time moves on by a second
// and beats members receive a heartbeat (round robin, written in place and told to the
// store's feed, as the simulator's store does), so every member beats once a minute when
// beats is a sixtieth of the fleet. Writing the heartbeats is part of each op (a few
// hundred stores). feed false hands the decision no feed, as a store that keeps none.
func ScheduleHeartbeats(b *testing.B, members int, p *placement.PlacementPolicy, n int32, wantPlaced, beats int, feed bool) {
	fleet := Fleet(members, 1)
	snap := &placement.PolicySnapshot{Name: "crp-0", Placement: "crp", Policy: p, NumberOfClusters: n}
	in := scheduler.Input{Snapshot: snap, Members: fleet, Now: Epoch, MembersVersion: 1}
	if feed {
		in.Status = member.NewStatusFeed(0)
	}
	s := scheduler.New(scheduler.Options{})
	next := 0
	b.ReportAllocs()
	b.ResetTimer()
	start := CPUTime()
	for b.Loop() {
		in.Now = in.Now.Add(time.Second)
		for range beats {
			m := fleet[next]
			m.Agent.LastHeartbeat = in.Now
			if in.Status != nil {
				in.Status.Changed(m)
			}
			next = (next + 1) % len(fleet)
		}
		decide(b, s, in, wantPlaced)
	}
	reportCPU(b, start)
}

// decide makes one decision and fails b unless it placed wantPlaced clusters (any when
// negative).
func decide(b *testing.B, s *scheduler.Scheduler, in scheduler.Input, wantPlaced int) {
	plan, err := s.Schedule(in)
	if err != nil {
		b.Fatal(err)
	}
	if wantPlaced >= 0 && plan.Placed != wantPlaced {
		b.Fatalf("placed %d clusters, want %d", plan.Placed, wantPlaced)
	}
}

// ScheduleChurn is Schedule with one member's labels replaced before every decision (its
// zone label moved on, as the stores replace label maps) and the store's version moved:
// every decision finds the index changed and derives what it keeps per policy again.
func ScheduleChurn(b *testing.B, members int, p *placement.PlacementPolicy, n int32, wantPlaced int) {
	fleet := Fleet(members, 1)
	snap := &placement.PolicySnapshot{Name: "crp-0", Placement: "crp", Policy: p, NumberOfClusters: n}
	in := scheduler.Input{Snapshot: snap, Members: fleet, Now: Epoch, MembersVersion: 1, Status: member.NewStatusFeed(0)}
	s := scheduler.New(scheduler.Options{})
	next := 0
	b.ReportAllocs()
	b.ResetTimer()
	start := CPUTime()
	for b.Loop() {
		m := fleet[next]
		ls := maps.Clone(m.Labels)
		ls["zone"] = zones[(slices.Index(zones, ls["zone"])+1)%len(zones)]
		m.Labels = ls
		in.MembersVersion++
		next = (next + 7919) % len(fleet)
		decide(b, s, in, wantPlaced)
	}
	reportCPU(b, start)
}

// ScheduleSteady measures a decision that changes nothing: the placement's bindings are
// those its first decision created, as a store holds them once that plan is applied. It
// is the hub re-running the scheduler after a change that does not affect the placement
// (a heartbeat, another placement's binding), with the store's versions of the members and
// of the placement's bindings (Input.MembersVersion, Input.BindingsVersion) and the time
// moving on. ScheduleSteadyUnversioned is the same without versions.
func ScheduleSteady(b *testing.B, members int, p *placement.PlacementPolicy, n int32) {
	scheduleSteady(b, members, p, n, true)
}

// ScheduleSteadyUnversioned is ScheduleSteady from a store that keeps no versions: every
// decision looks at every member and binding.
func ScheduleSteadyUnversioned(b *testing.B, members int, p *placement.PlacementPolicy, n int32) {
	scheduleSteady(b, members, p, n, false)
}

func scheduleSteady(b *testing.B, members int, p *placement.PlacementPolicy, n int32, versioned bool) {
	fleet := Fleet(members, 1)
	snap := &placement.PolicySnapshot{Name: "crp-0", Placement: "crp", Policy: p, NumberOfClusters: n}
	in := scheduler.Input{Snapshot: snap, Members: fleet, Now: Epoch}
	s := scheduler.New(scheduler.Options{})
	first, err := s.Schedule(in)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range first.Create {
		in.Bindings = append(in.Bindings, &c.Binding)
	}
	if versioned {
		in.MembersVersion, in.BindingsVersion = 1, 1
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := CPUTime()
	for b.Loop() {
		in.Now = in.Now.Add(time.Second)
		plan, err := s.Schedule(in)
		if err != nil {
			b.Fatal(err)
		}
		if !plan.Empty() || plan.Placed != len(first.Create) || len(plan.Decisions) != len(first.Create) {
			b.Fatalf("steady decision wrote %d bindings and placed %d clusters, want none and %d", len(plan.Create)+len(plan.Update)+len(plan.Unschedule), plan.Placed, len(first.Create))
		}
	}
	reportCPU(b, start)
}

// SimHeartbeats measures simulating members heartbeating every 60s for the given simulated
// time with the hub evaluating their health; one op is the whole run. It reports events/op,
// events/s and the speed-up over real time.
func SimHeartbeats(b *testing.B, members int, d time.Duration) {
	fleet := Fleet(members, 1)
	b.ReportAllocs()
	var events uint64
	var live uint64 // the simulation's live heap at the end of the last run
	var cpu time.Duration
	base := heapAfterGC()
	for b.Loop() {
		start := CPUTime()
		s, err := sim.New(sim.Config{Seed: 1, HeartbeatJitter: time.Second})
		if err != nil {
			b.Fatal(err)
		}
		for _, m := range fleet {
			if err := s.AddMember(sim.MemberSpec{Name: m.Name, Labels: m.Labels, Properties: m.Properties, Resources: m.Resources}); err != nil {
				b.Fatal(err)
			}
		}
		res, err := s.Run(d)
		if err != nil {
			b.Fatal(err)
		}
		cpu += CPUTime() - start
		events = res.Events
		b.StopTimer()
		if got := len(s.Members()); got != members {
			b.Fatalf("%d members at the end, want %d", got, members)
		}
		live = heapAfterGC() - base
		runtime.KeepAlive(s)
		b.StartTimer()
	}
	perOp := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(live)/float64(members), "live-B/member")
	b.ReportMetric(float64(events), "events/op")
	b.ReportMetric(float64(events)/perOp, "events/s")
	b.ReportMetric(d.Seconds()/perOp, "x-realtime")
}

// heapAfterGC is the live heap: the heap in use right after a collection.
func heapAfterGC() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
