package member

// StatusFeed is a store's record of the members whose agent status (Member.Agent) it wrote,
// for readers that keep a copy of the status between reads (the scheduler's fleet index):
// a store that hands one to a reader calls Changed after every write of a member's Agent.
// It remembers the latest writes only; a reader that falls further behind is told so by
// Since and reads every member again. It is pure bookkeeping: no time, no locking.
type StatusFeed struct {
	seq  uint64
	mask uint64 // len(ring)-1: the ring's length is a power of two
	ring []*Member
}

// DefaultStatusFeedSize is how many writes a StatusFeed from NewStatusFeed(0) remembers.
const DefaultStatusFeedSize = 4096

// NewStatusFeed returns a feed remembering at least the latest size writes (size is
// rounded up to a power of two; 0 means DefaultStatusFeedSize).
func NewStatusFeed(size int) *StatusFeed {
	if size <= 0 {
		size = DefaultStatusFeedSize
	}
	n := 1
	for n < size {
		n *= 2
	}
	return &StatusFeed{mask: uint64(n - 1), ring: make([]*Member, n)}
}

// Changed records that m's agent status was written.
func (f *StatusFeed) Changed(m *Member) {
	f.ring[f.seq&f.mask] = m
	f.seq++
}

// Version is the number of writes recorded so far.
func (f *StatusFeed) Version() uint64 { return f.seq }

// Since calls fn with every member whose status was written after version v (a member
// written several times may come several times), oldest first. It reports false, calling
// fn for none, when the feed no longer remembers them all or v is not one of its versions.
func (f *StatusFeed) Since(v uint64, fn func(*Member)) bool {
	if v > f.seq || f.seq-v > uint64(len(f.ring)) {
		return false
	}
	for s := v; s < f.seq; s++ {
		fn(f.ring[s&f.mask])
	}
	return true
}
