package invariants

// Incremental rollout checks: a step changes the bindings of few placements (most steps
// none: heartbeats, status reports, member agents' work), yet Check and Snapshot read and
// copy every binding of every placement. A store that versions each placement's bindings
// (model/hub.VersionedStore: a version that changes whenever one of them is created,
// replaced or deleted) tells which placements a step touched, and a placement whose
// version did not move has exactly the bindings of its copy: CheckTouched and
// SnapshotTouched look only at the touched ones and find what Check and Snapshot find
// (TestIncrementalAgreesWithFull). Verify compares the incremental copy with a full one,
// for callers that cross-check at a sampled rate.

import (
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/placement"
)

// Versioned tells when a placement's bindings changed (every model/hub.VersionedStore).
type Versioned interface {
	BindingsVersion(placement string) uint64
}

// touched returns the placements whose bindings may differ from their copy: present ones
// whose version moved or that were never copied, and copied ones that are gone; sorted.
func (ro *Rollout) touched(r Reader, v Versioned) (present, gone []string) {
	names := r.PlacementNames()
	if ro.names == nil { // after a full Snapshot: every placement counts
		present = names
		for p := range ro.byPlacementOfFull() {
			if r.Placement(p) == nil {
				gone = append(gone, p)
			}
		}
		slices.Sort(gone)
		return present, gone
	}
	for _, p := range names {
		if ver, ok := ro.versions[p]; !ok || ver != v.BindingsVersion(p) {
			present = append(present, p)
		}
	}
	if len(ro.names) > len(names)-len(present) {
		for p := range ro.names {
			if r.Placement(p) == nil {
				gone = append(gone, p)
			}
		}
		slices.Sort(gone)
	}
	return present, gone
}

// byPlacementOfFull indexes a full copy's bindings by placement, names sorted.
func (ro *Rollout) byPlacementOfFull() map[string][]string {
	out := map[string][]string{}
	for _, name := range sortedKeys(ro.before) {
		p := ro.before[name].Placement
		out[p] = append(out[p], name)
	}
	return out
}

// CheckTouched is Check for a store that versions its bindings: it diffs only the
// placements whose bindings changed since the last snapshot.
func (ro *Rollout) CheckTouched(r Reader, v Versioned, created []placement.Binding, now time.Time) error {
	if ro.names == nil {
		return ro.Check(r, created, now)
	}
	d := &diff{placements: map[string]*placementDiff{}, created: created}
	present, gone := ro.touched(r, v)
	for _, p := range present {
		ro.diffBindings(r, d, p)
	}
	// listed: the names of a placement's current bindings, read once per placement (a
	// search of the list per copied binding was quadratic in a placement's bindings).
	listed := map[string]map[string]bool{}
	lists := func(p, name string) bool {
		set, ok := listed[p]
		if !ok {
			if r.Placement(p) != nil {
				bs := r.Bindings(p)
				set = make(map[string]bool, len(bs))
				for _, x := range bs {
					set[x.Name] = true
				}
			}
			listed[p] = set
		}
		return set[name]
	}
	for _, list := range [][]string{present, gone} {
		for _, p := range list {
			for _, name := range ro.names[p] {
				if b := r.Binding(name); b != nil && lists(b.Placement, name) {
					continue
				}
				old := ro.before[name]
				d.of(old.Placement).deleted = append(d.of(old.Placement).deleted, old)
			}
		}
	}
	ro.diffEvictions(r, d)
	return ro.check(r, d, now)
}

// SnapshotTouched is Snapshot for a store that versions its bindings: it copies again only
// the placements whose bindings changed.
func (ro *Rollout) SnapshotTouched(r Reader, v Versioned) {
	if ro.names == nil {
		ro.names, ro.versions = ro.byPlacementOfFull(), map[string]uint64{}
		ro.before = maps2(ro.before)
		for p := range ro.names {
			if r.Placement(p) != nil {
				ro.versions[p] = v.BindingsVersion(p)
			}
		}
		// Placements without bindings have a version too.
		for _, p := range r.PlacementNames() {
			ro.versions[p] = v.BindingsVersion(p)
		}
	}
	present, gone := ro.touched(r, v)
	for _, p := range gone {
		for _, name := range ro.names[p] {
			delete(ro.before, name)
		}
		delete(ro.names, p)
		delete(ro.versions, p)
	}
	for _, p := range present {
		bs := r.Bindings(p)
		names := make([]string, 0, len(bs))
		for _, b := range bs {
			c := *b
			if b.Conditions != nil { // a nil list stays nil, as a full copy keeps it
				// The copy replaced here lends its condition list: nothing else holds it (a
				// check's diff is gone once it returned).
				var spare []condition.Timed
				if prev, ok := ro.before[b.Name]; ok && cap(prev.Conditions) > 0 {
					spare = prev.Conditions[:0]
				}
				c.Conditions = append(spare, b.Conditions...)
				if c.Conditions == nil {
					c.Conditions = []condition.Timed{}
				}
			}
			ro.before[b.Name] = c
			names = append(names, b.Name)
		}
		slices.Sort(names)
		// The placement's copies of bindings it no longer lists go (a copy another
		// placement took over under the same name stays).
		for _, name := range ro.names[p] {
			if _, listed := slices.BinarySearch(names, name); !listed && ro.before[name].Placement == p {
				delete(ro.before, name)
			}
		}
		if len(names) == 0 {
			delete(ro.names, p)
		} else {
			ro.names[p] = names
		}
		ro.versions[p] = v.BindingsVersion(p)
	}
	ro.snapshotEvictions(r)
}

func maps2(m map[string]placement.Binding) map[string]placement.Binding {
	if m == nil {
		return map[string]placement.Binding{}
	}
	return m
}

// Verify compares the copy of the state with a full copy of r (the state at the last
// snapshot must be r's: call it right after a snapshot). A difference means a binding
// changed without its placement's version moving, which the incremental checks would miss.
func (ro *Rollout) Verify(r Reader) error {
	full := &Rollout{}
	full.Snapshot(r)
	for _, name := range sortedKeys(full.before) {
		got, ok := ro.before[name]
		if !ok {
			return fmt.Errorf("incremental rollout copy lacks binding %s", name)
		}
		if want := full.before[name]; !reflect.DeepEqual(got, want) {
			return fmt.Errorf("incremental rollout copy of binding %s is stale: its placement's bindings version did not move", name)
		}
	}
	for _, name := range sortedKeys(ro.before) {
		if _, ok := full.before[name]; !ok {
			return fmt.Errorf("incremental rollout copy holds binding %s, which the store no longer lists", name)
		}
	}
	if !reflect.DeepEqual(ro.evictions, full.evictions) && (len(ro.evictions) > 0 || len(full.evictions) > 0) {
		return fmt.Errorf("incremental rollout copy of the evictions differs from the store's")
	}
	return nil
}
