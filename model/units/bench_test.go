package units_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/model/units"
)

// benchInput is a fleet of machines across three regions and units of every kind: plain,
// metadata-constrained, conflicting instances, followers and global units. A tenth of the
// machines is dead, with their units still scheduled there.
func benchInput(b *testing.B, machines, nUnits int) units.Input {
	var in units.Input
	regions := []string{"east", "west", "north"}
	for i := range machines {
		m := machine(fmt.Sprintf("%032x", i), "region="+regions[i%3])
		m.Alive = i%10 != 9
		in.Machines = append(in.Machines, m)
	}
	for i := range nUnits {
		name := fmt.Sprintf("u%05d.service", i)
		var u *units.Unit
		switch i % 10 {
		case 0:
			u = mk(b, name, launched, "MachineMetadata=region=east")
		case 1:
			u = mk(b, fmt.Sprintf("web@%d.service", i), launched, "Conflicts=web@*.service")
		case 2:
			u = mk(b, name, launched, fmt.Sprintf("MachineOf=u%05d.service", i-2))
		case 3:
			if i%1000 == 3 {
				u = mk(b, name, launched, "Global=true", "MachineMetadata=region=west")
			} else {
				u = mk(b, name, loaded)
			}
		default:
			u = mk(b, name, launched)
		}
		j := units.Job{Unit: u}
		if i%2 == 0 && !u.IsGlobal() {
			j.Machine = in.Machines[i%machines].ID
		}
		in.Units = append(in.Units, j)
	}
	return in
}

// reportCPU reports the CPU time per op since start (untimed work included): the machine the
// figures come from is shared, so wall time (ns/op) overstates under load.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

func BenchmarkSchedule(b *testing.B) {
	for _, size := range []struct{ machines, units int }{{100, 1000}, {1000, 10000}} {
		b.Run(fmt.Sprintf("%dmachines-%dunits", size.machines, size.units), func(b *testing.B) {
			in := benchInput(b, size.machines, size.units)
			b.ReportAllocs()
			start := cpuTime()
			for b.Loop() {
				units.Schedule(in)
			}
			reportCPU(b, start)
		})
	}
}

// BenchmarkUnitsFullSchedule5k10k is one whole decision over 5,000 machines and 10,000
// units (issue 14's goal: at most one second on one core).
func BenchmarkUnitsFullSchedule5k10k(b *testing.B) {
	in := benchInput(b, 5000, 10000)
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		units.Schedule(in)
	}
	reportCPU(b, start)
}

// settledEngine returns an engine over benchInput(machines, nUnits) with its first
// decision applied.
func settledEngine(b *testing.B, machines, nUnits int) (*units.Engine, units.Input) {
	in := benchInput(b, machines, nUnits)
	e := units.NewEngine(in)
	e.Apply(e.Schedule(units.Lease{}))
	if p := e.Schedule(units.Lease{}); !p.Empty() {
		b.Fatalf("a second decision writes %d units", len(p.Schedule)+len(p.Unschedule))
	}
	return e, e.Input()
}

// BenchmarkUnitsMachineLoss is the engine's decision after one alive machine of 5,000
// (10,000 units) is lost, its writes applied. Between ops, untimed, the machine comes back
// and the engine settles again.
func BenchmarkUnitsMachineLoss(b *testing.B) {
	e, in := settledEngine(b, 5000, 10000)
	var alive []units.MachineState
	for _, m := range in.Machines {
		if m.Alive {
			alive = append(alive, m)
		}
	}
	b.ReportAllocs()
	k := 0
	var cpu time.Duration // of the timed part only
	for b.Loop() {
		m := alive[k%len(alive)]
		k++
		start := cpuTime()
		m.Alive = false
		e.SetMachine(m)
		e.Apply(e.Schedule(units.Lease{}))
		cpu += cpuTime() - start
		b.StopTimer()
		m.Alive = true
		e.SetMachine(m)
		e.Apply(e.Schedule(units.Lease{}))
		b.StartTimer()
	}
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
}

// BenchmarkUnitsMachineLossFull is the same decision made from scratch with Schedule, as
// the engine did before it kept its state.
func BenchmarkUnitsMachineLossFull(b *testing.B) {
	_, in := settledEngine(b, 5000, 10000)
	for i := range in.Machines {
		if in.Machines[i].Alive {
			in.Machines[i].Alive = false
			break
		}
	}
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		units.Schedule(in)
	}
	reportCPU(b, start)
}

// BenchmarkUnitsUnitChange is the engine's decision after one unit of 10,000 (on 5,000
// machines) is stopped and unloaded, then after it is started again: a re-index and the
// units the change affects.
func BenchmarkUnitsUnitChange(b *testing.B) {
	e, in := settledEngine(b, 5000, 10000)
	b.ReportAllocs()
	k := 0
	start := cpuTime()
	for b.Loop() {
		j := in.Units[(k*7919)%len(in.Units)]
		k++
		e.SetUnit(units.Job{Unit: j.Unit.WithState(units.StateInactive), Machine: j.Machine})
		e.Apply(e.Schedule(units.Lease{}))
		e.SetUnit(units.Job{Unit: j.Unit, Machine: ""})
		e.Apply(e.Schedule(units.Lease{}))
	}
	reportCPU(b, start)
}

// BenchmarkUnitsUnitDestroySubmit is the engine's decision after one unit of 10,000 (on
// 5,000 machines) is destroyed, then after it is submitted and started again: each
// re-indexes the engine.
func BenchmarkUnitsUnitDestroySubmit(b *testing.B) {
	e, in := settledEngine(b, 5000, 10000)
	b.ReportAllocs()
	k := 0
	start := cpuTime()
	for b.Loop() {
		j := in.Units[(k*7919)%len(in.Units)]
		k++
		e.RemoveUnit(j.Unit.Name)
		e.Apply(e.Schedule(units.Lease{}))
		e.SetUnit(units.Job{Unit: j.Unit})
		e.Apply(e.Schedule(units.Lease{}))
	}
	reportCPU(b, start)
}
