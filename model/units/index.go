package units

import (
	"cmp"
	"path"
	"slices"
	"strings"

	"github.com/fleetsim/fleetsim/model/mutant"
)

// indexConflicts matches every distinct Conflicts glob against the unit names once per
// decision, so that checking a pair of units costs a few binary searches and units that
// conflict with nothing cost nothing. A glob's literal prefix (up to its first '*', '?',
// '[' or '\') narrows the names it is tried on, since jobs are sorted by name.
func (d *decision) indexConflicts() {
	ids := make(map[string]int32)
	for i := range d.jobs {
		j := &d.jobs[i]
		if j.x == nil {
			continue
		}
		for _, g := range j.x.Conflicts {
			id, seen := ids[g]
			if !seen {
				id = int32(len(d.globMatches))
				ids[g] = id
				d.globMatches = append(d.globMatches, d.matchGlob(g))
			}
			if !slices.Contains(j.globs, id) {
				j.globs = append(j.globs, id)
			}
		}
	}
	for _, matched := range d.globMatches {
		for _, k := range matched {
			d.jobs[k].targeted = true
		}
	}
}

// matchGlob returns the (ascending) indices of the valid units whose names glob matches.
func (d *decision) matchGlob(glob string) []int32 {
	prefix := glob
	if k := strings.IndexAny(glob, `*?[\`); k >= 0 {
		prefix = glob[:k]
	}
	start, _ := slices.BinarySearchFunc(d.jobs, prefix, func(j job, p string) int { return cmp.Compare(j.name, p) })
	var out []int32
	for k := start; k < len(d.jobs) && strings.HasPrefix(d.jobs[k].name, prefix); k++ {
		if d.jobs[k].x == nil {
			continue
		}
		if ok, err := path.Match(glob, d.jobs[k].name); ok && err == nil {
			out = append(out, int32(k))
		}
	}
	return out
}

// conflict reports whether units a and b must not share a machine: a Conflicts glob of one
// matches the other's name (both directions). A unit never conflicts with itself.
func (d *decision) conflict(a, b int32) bool {
	if a == b {
		return false
	}
	ja, jb := &d.jobs[a], &d.jobs[b]
	if mutant.On("units.conflictsOneDirection") {
		return jb.targeted && d.anyMatch(ja.globs, b)
	}
	return (jb.targeted && d.anyMatch(ja.globs, b)) || (ja.targeted && d.anyMatch(jb.globs, a))
}

func (d *decision) anyMatch(globs []int32, k int32) bool {
	for _, g := range globs {
		if _, found := slices.BinarySearch(d.globMatches[g], k); found {
			return true
		}
	}
	return false
}

// refresh recomputes the global units running on machine m and its load after its units
// changed, keeping d.order sorted.
func (d *decision) refresh(m int32) {
	mm := &d.machines[m]
	inOrder := mm.Alive && d.order != nil
	if inOrder {
		pos, _ := slices.BinarySearchFunc(d.order, m, d.compareLoad)
		d.order = slices.Delete(d.order, pos, pos+1)
	}
	d.computeGlobals(m)
	mm.load = len(mm.units) + len(mm.globals)
	if inOrder {
		pos, _ := slices.BinarySearchFunc(d.order, m, d.compareLoad)
		d.order = slices.Insert(d.order, pos, m)
	}
}

// compareLoad orders machines by load, then ID (machine indices follow ID order).
func (d *decision) compareLoad(a, b int32) int {
	return cmp.Or(cmp.Compare(d.machines[a].load, d.machines[b].load), cmp.Compare(a, b))
}

// computeGlobals sets the global units running on machine m: in name order, every global
// unit whose MachineMetadata the machine matches and which conflicts neither with a unit
// scheduled there nor with a global unit already taken. Scheduled units win over global
// units: a global unit never displaces one.
func (d *decision) computeGlobals(m int32) {
	mm := &d.machines[m]
	mm.globals = mm.globals[:0]
	if !mm.Alive {
		return
	}
next:
	for _, g := range d.globals {
		if !d.jobs[g].x.MachineMetadata.Matches(mm.Metadata) && !mutant.On("units.globalMetadataIgnored") {
			continue
		}
		for _, v := range mm.units {
			if mutant.On("units.globalIgnoresScheduled") {
				break
			}
			if d.jobs[v].wants() && d.conflict(g, v) {
				continue next
			}
		}
		for _, h := range mm.globals {
			if d.conflict(g, h) {
				continue next
			}
		}
		mm.globals = append(mm.globals, g)
	}
}
