package hub

import (
	"sync"
	"time"

	"github.com/fleetsim/fleetsim/model/triggers"
)

// wakeLedger remembers which wakes of the hub's controllers are still to be served, so that
// a decision that ran a controller inline on current objects spares that controller's
// queued decision. A restarted hub wakes every binding's work generator and fan-in
// (10,000 each at 1,000 placements of PickN 10) and every placement's chain; the first
// placement-wide decision about a placement holds all of its bindings and Works and serves
// them all, and the queued ones that follow find nothing left to do.
//
// A wake is served by a decision that ran the controller for the key on a state read after
// the wake was fired: each wake takes the next sequence number, a decision notes the
// number reached when it took its locks (before it waits for the cache and reads), and
// when its writes have succeeded it serves the wakes up to that number. What fires a wake
// has made its change visible first: the informers hold an object before they tell of it,
// and a decision fires after its writes, which the serving decision's wait for the cache
// covers (rule 1 of consistency.go).
//
// A timed wake (a rollout waiting out an unavailable period) is due at a time: it is
// served only by a decision that started after that time.
type wakeLedger struct {
	mu      sync.Mutex
	seq     uint64
	pending map[wakeKey]wake
}

type wakeKey struct {
	c   triggers.Controller
	key string
}

// wake is what is still to be served for a controller and key: the latest wake's sequence
// number (0 for none) and the earliest time a timed wake is due (zero for none).
type wake struct {
	seq uint64
	due time.Time
}

// woke notes a wake of controller c for key.
func (l *wakeLedger) woke(c triggers.Controller, key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	w := l.pending[wakeKey{c, key}]
	w.seq = l.seq
	l.set(wakeKey{c, key}, w)
}

// wokeAt notes a timed wake of controller c for key, due at due.
func (l *wakeLedger) wokeAt(c triggers.Controller, key string, due time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.pending[wakeKey{c, key}]
	if w.due.IsZero() || due.Before(w.due) {
		w.due = due
	}
	l.set(wakeKey{c, key}, w)
}

func (l *wakeLedger) set(k wakeKey, w wake) {
	if l.pending == nil {
		l.pending = map[wakeKey]wake{}
	}
	l.pending[k] = w
}

// mark is where a decision stands in the ledger: the wakes fired before it read, and when.
type mark struct {
	seq uint64
	at  time.Time
}

// mark is taken by a decision once it holds its locks, before it reads.
func (l *wakeLedger) mark(at time.Time) mark {
	l.mu.Lock()
	defer l.mu.Unlock()
	return mark{seq: l.seq, at: at}
}

// due tells whether controller c has a wake for key that a decision at m would serve.
func (l *wakeLedger) due(c triggers.Controller, key string, m mark) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	w, ok := l.pending[wakeKey{c, key}]
	return ok && ((w.seq != 0 && w.seq <= m.seq) || (!w.due.IsZero() && !m.at.Before(w.due)))
}

// waiting tells whether controller c has any wake for key left to serve: a queued decision
// without one has been served inline and is skipped.
func (l *wakeLedger) waiting(c triggers.Controller, key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.pending[wakeKey{c, key}]
	return ok
}

// served notes that a decision at m ran controller c for key and wrote what it decided.
func (l *wakeLedger) served(c triggers.Controller, key string, m mark) {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := wakeKey{c, key}
	w, ok := l.pending[k]
	if !ok {
		return
	}
	if w.seq <= m.seq {
		w.seq = 0
	}
	if !w.due.IsZero() && !m.at.Before(w.due) {
		w.due = time.Time{}
	}
	if w.seq == 0 && w.due.IsZero() {
		delete(l.pending, k)
		return
	}
	l.pending[k] = w
}
