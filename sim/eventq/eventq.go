package eventq

import "time"

// Item is one pending event.
type Item[T any] struct {
	// At is the virtual time the event fires, measured from simulation start.
	At time.Duration
	// Seq is assigned by the queue on Push and breaks ties between equal At.
	Seq uint64
	// Value is the caller's payload; the queue never inspects it.
	Value T
}

// Queue is a priority queue of events ordered by (At, Seq).
type Queue[T any] interface {
	// Push schedules v at virtual time at and returns the sequence number
	// assigned to it. Sequence numbers start at 0 and increase by one per
	// Push on this queue.
	Push(at time.Duration, v T) uint64
	// Pop removes and returns the earliest event; false if the queue is empty.
	Pop() (Item[T], bool)
	// Peek returns the earliest event without removing it; false if empty.
	Peek() (Item[T], bool)
	// Len returns the number of pending events.
	Len() int
	// ReplaceMin removes the earliest event and schedules v at at, as Pop then Push
	// would (the same sequence number is assigned), in one step. It is the hot path of
	// a simulator whose periodic events reschedule themselves.
	ReplaceMin(at time.Duration, v T) uint64
}

// New returns the implementation that measured fastest on the simulator's
// workload (see doc.go and reports/eventq.md).
func New[T any]() Queue[T] {
	return NewHeap4[T]()
}

// less is the one ordering both implementations share, so they cannot drift
// apart.
func less[T any](a, b Item[T]) bool {
	if a.At != b.At {
		return a.At < b.At
	}
	return a.Seq < b.Seq
}
