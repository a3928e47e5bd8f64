package hub

// The wake ledger's accounts (the ledger itself is wakes.go): which controllers' wakes it
// keeps, a queued decision skipped because another decision served it, the queued wakes a
// placement-wide decision finds due, and what it tells the ledger it served. Separate from
// inline.go, which runs the controllers: this file only keeps the books that queue.go and
// decision.go consult.

import (
	"maps"
	"slices"

	"github.com/fleetsim/fleetsim/model/triggers"
)

// ledgered are the controllers whose wakes other decisions can serve inline (wakes.go).
var ledgered = map[triggers.Controller]bool{
	triggers.PolicySnapshot: true, triggers.Scheduler: true, triggers.Rollout: true,
	triggers.WorkGenerator: true, WorkStatus: true,
}

// servedInline tells whether controller c's decision about key has nothing left to serve:
// another decision ran c for key on objects newer than every wake (wakes.go).
func (h *Hub) servedInline(c triggers.Controller, key string) bool {
	if !ledgered[c] || h.wakes.waiting(c, key) {
		return false
	}
	wakesServedInline.WithLabelValues(string(c)).Inc()
	return true
}

// dueWakes are the wakes a placement-wide decision serves besides its own and the fan-ins
// (fanInsFirst): the queued work generator runs of its placement's bindings, and the
// queued decisions of the other controllers of placementChain for the placement.
type dueWakes struct {
	works []string
	wide  map[triggers.Controller]bool
}

// dueWakes finds, in sorted binding order, what a placement-wide decision at m about
// placement serves besides its own wake.
func (h *Hub) dueWakes(st *state, placement string, m mark) dueWakes {
	var d dueWakes
	for _, b := range slices.Sorted(maps.Keys(st.bindings)) {
		if st.bindings[b].Placement != placement {
			continue
		}
		if h.wakes.due(triggers.WorkGenerator, b, m) {
			d.works = append(d.works, b)
		}
	}
	for _, c := range placementChain {
		if h.wakes.due(c, placement, m) {
			if d.wide == nil {
				d.wide = map[triggers.Controller]bool{}
			}
			d.wide[c] = true
		}
	}
	return d
}

// inlined are the wakes a placement-wide decision served by running controllers inline:
// fired changes before index wide[c] woke controller c for the placement, which then ran
// on the state they made; fired changes before index works[b] woke the work generator for
// binding b, which then ran on it.
type inlined struct {
	placement string
	wide      map[triggers.Controller]int
	works     map[string]int
}

// note tells the ledger which queued wakes the decision at m served (in may be nil).
func (in *inlined) note(l *wakeLedger, m mark) {
	if in == nil {
		return
	}
	for c := range in.wide {
		l.served(c, in.placement, m)
	}
	for b := range in.works {
		l.served(triggers.WorkGenerator, b, m)
	}
}

// skip says which wakes of the i-th fired change are already served (nil: none).
func (in *inlined) skip(i int) func(triggers.Controller, string) bool {
	if in == nil {
		return nil
	}
	return func(c triggers.Controller, key string) bool {
		if c == triggers.WorkGenerator {
			n, ok := in.works[key]
			return ok && i < n
		}
		return key == in.placement && i < in.wide[c]
	}
}
