// Package eventq is the simulator's pending-event queue: the set of events
// that have been scheduled but not yet processed, handed out earliest first.
//
// The package owns the ordering of events and nothing else. It does not
// know what an event means, does not keep the clock (the event loop advances
// the mock clock to the At of each popped item) and does not run callbacks.
//
// # Why (At, Seq)
//
// Events are ordered by virtual time At and, among equal times, by Seq, a
// counter the queue assigns on Push. Many events share a time in practice
// (heartbeats on a fixed period, consequences scheduled "now"), and a heap or
// tree orders equal keys arbitrarily, in a way that depends on the history of
// the structure. Breaking ties by Seq makes equal-time events pop in the order
// they were pushed (FIFO), so the order of processing, and hence the trace
// hash, is a function of the scenario and seed alone. Seq is unique per queue,
// so (At, Seq) is a total order and the two implementations cannot disagree.
//
// # Implementations
//
// Heap4 is a 4-ary implicit heap in a slice: no per-item allocation and no
// interface boxing through container/heap. BTree is built on
// github.com/google/btree's BTreeG. Both satisfy Queue and are checked
// against each other and against a sorted reference by a property test.
//
// Calendar is a calendar queue (fixed-width time buckets, a ring of them for
// the near future and a far heap beyond); it orders by (At, Seq) exactly as
// the others do and is checked by the same property test. The simulator uses
// it directly (not through the Queue interface, so calls are direct): with
// thousands of members heartbeating, a heartbeat costs an append to its
// bucket and a sift through a heap of one bucket's events, instead of a sift
// through a heap of every pending event whose levels no longer fit in cache.
//
// New returns a Heap4. In the hold-model benchmark (pop the earliest event,
// push a successor a random delay later, at a steady queue size, which is the
// simulator's main loop) the heap took about half the time per operation of
// the B-tree at 10k pending events and about half at 1M, with no allocations
// (figures in reports/eventq.md). The simulator never needs what a B-tree
// offers beyond a heap, such as ordered iteration or deleting an arbitrary
// event, so the heap's simpler layout wins outright.
package eventq
