package units

// ScheduleScanningReasons is Schedule with every unplaced unit's reason found by trying
// every alive machine, as before settled decisions took the shortcut; tests compare the two.
func ScheduleScanningReasons(in Input) Plan {
	d := newDecision(in.Machines, in.Units)
	maxRounds := 2*len(d.jobs) + 4
	for round := 0; round < maxRounds; round++ {
		changed := d.keepPass()
		if d.placePass() {
			changed = true
		}
		if !changed {
			break
		}
	}
	return d.plan(in.Lease.Fence())
}
