package units

import (
	"fmt"
	"time"
)

// DefaultLeaseTTL is fleet's engine lease TTL: 5 × the 2 s reconcile interval.
const DefaultLeaseTTL = 10 * time.Second

// Lease is the engine lease: only its holder may schedule units. Token is a fencing token:
// it grows by one every time the lease changes hands (or is taken again after expiring or
// being released) and never otherwise, so every write the holder makes can carry it and the
// store can refuse writes from an earlier holder ([Admit]). Upstream's lease index was not
// checked on writes, so a paused ex-leader could still write (CoreOS fleet's engine).
//
// The zero Lease has never been held: no holder, token 0.
type Lease struct {
	// Holder is the machine ID of the engine holding the lease; "" once released.
	Holder string
	// Token is the fencing token of the current (or last) tenure; 0 if never held.
	Token uint64
	// Expires is when the lease lapses unless renewed.
	Expires time.Time
}

// Expired reports whether l has lapsed at now: it has no holder, or now is at or after
// Expires.
func (l Lease) Expired(now time.Time) bool {
	return l.Holder == "" || !now.Before(l.Expires)
}

// HeldBy reports whether candidate holds l at now.
func (l Lease) HeldBy(candidate string, now time.Time) bool {
	return candidate != "" && l.Holder == candidate && !l.Expired(now)
}

// Fence returns the fencing stamp for writes made under l.
func (l Lease) Fence() FencedWrite { return FencedWrite{Holder: l.Holder, Token: l.Token} }

// Acquire tries to take the lease l (nil if there is none yet) for candidate at now. If l is
// missing, released or expired, candidate gets a new tenure: token = the old token + 1,
// expiring at now+ttl. If candidate already holds l, it is returned unchanged (same token;
// use [Renew] to extend it). If another engine holds an unexpired lease, Acquire returns l
// unchanged and false. ttl <= 0 means [DefaultLeaseTTL].
//
// Like upstream's CAS on the lease key, the caller must store the result atomically with a
// comparison on the lease it read.
func Acquire(l *Lease, candidate string, now time.Time, ttl time.Duration) (Lease, bool) {
	if ttl <= 0 {
		ttl = DefaultLeaseTTL
	}
	var cur Lease
	if l != nil {
		cur = *l
	}
	if candidate == "" {
		return cur, false
	}
	if !cur.Expired(now) {
		return cur, cur.Holder == candidate
	}
	return Lease{Holder: candidate, Token: cur.Token + 1, Expires: now.Add(ttl)}, true
}

// Renew extends holder's unexpired lease to now+ttl, keeping its token. It fails (returning
// l unchanged and false) if l is missing, held by another engine, or already expired: an
// expired lease must be acquired again, under a new token, because another engine may have
// held it in between. ttl <= 0 means [DefaultLeaseTTL].
func Renew(l *Lease, holder string, now time.Time, ttl time.Duration) (Lease, bool) {
	if ttl <= 0 {
		ttl = DefaultLeaseTTL
	}
	if l == nil {
		return Lease{}, false
	}
	if !l.HeldBy(holder, now) {
		return *l, false
	}
	return Lease{Holder: holder, Token: l.Token, Expires: now.Add(ttl)}, true
}

// Claim is what an engine does with the lease at the start of each round: it renews the
// lease it holds (same token, expiry now+ttl) and otherwise tries to acquire it (a new
// token once the old tenure has expired). Both engines, the simulator's and fleet hub's,
// claim through it, so neither lets its own lease lapse between rounds; a lapsed lease
// would move the fence and refuse the plan writes of the tenure still in flight.
func Claim(l *Lease, holder string, now time.Time, ttl time.Duration) (Lease, bool) {
	if l != nil && l.HeldBy(holder, now) {
		return Renew(l, holder, now, ttl)
	}
	return Acquire(l, holder, now, ttl)
}

// Release gives up holder's lease: the holder is cleared and the token kept, so the next
// [Acquire] starts a new tenure with a greater token. It fails if holder does not hold l
// at now.
func Release(l *Lease, holder string, now time.Time) (Lease, bool) {
	if l == nil {
		return Lease{}, false
	}
	if !l.HeldBy(holder, now) {
		return *l, false
	}
	return Lease{Token: l.Token}, true
}

// FencedWrite is the stamp an engine puts on each registry write (schedule and unschedule a
// unit): the lease tenure under which the decision was made.
type FencedWrite struct {
	Holder string
	Token  uint64
}

// FenceError is a write refused by [Admit].
type FenceError struct {
	Write   FencedWrite
	Current Lease
	Reason  string
}

func (e *FenceError) Error() string {
	return fmt.Sprintf("fenced write from %q with token %d rejected: %s", e.Write.Holder, e.Write.Token, e.Reason)
}

// Admit is the store's check on a fenced write, made atomically with the write itself: it
// accepts only writes stamped with the token of the current lease, by its holder. Writes of
// an earlier tenure (an ex-leader that was paused past its lease and has since been
// replaced), unstamped writes (token 0) and writes while the lease is released are refused
// with a [*FenceError].
//
// Admit does not look at the clock: a holder whose lease lapsed but which nobody has
// replaced yet still writes under the newest token, and no other engine can have written in
// between, so its writes cannot conflict with a newer leader's.
func Admit(write FencedWrite, current Lease) error {
	fail := func(format string, args ...any) error {
		return &FenceError{Write: write, Current: current, Reason: fmt.Sprintf(format, args...)}
	}
	switch {
	case write.Token == 0:
		return fail("the write carries no lease token")
	case current.Holder == "":
		return fail("no engine holds the lease (last token %d)", current.Token)
	case write.Token < current.Token:
		return fail("stale token: the lease is now held by %q with token %d", current.Holder, current.Token)
	case write.Token > current.Token:
		return fail("token is newer than the lease's token %d", current.Token)
	case write.Holder != current.Holder:
		return fail("token %d belongs to %q", current.Token, current.Holder)
	}
	return nil
}
