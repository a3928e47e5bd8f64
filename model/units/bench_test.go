package units_test

import (
	"fmt"
	"testing"

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

func BenchmarkSchedule(b *testing.B) {
	for _, size := range []struct{ machines, units int }{{100, 1000}, {1000, 10000}} {
		b.Run(fmt.Sprintf("%dmachines-%dunits", size.machines, size.units), func(b *testing.B) {
			in := benchInput(b, size.machines, size.units)
			b.ReportAllocs()
			for b.Loop() {
				units.Schedule(in)
			}
		})
	}
}
