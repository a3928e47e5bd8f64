package eventq

import "time"

// Heap4 is a 4-ary implicit min-heap stored in a slice. A wider node halves
// the tree height compared with a binary heap, and the four children sit
// next to each other in memory, so a sift-down touches fewer cache lines.
// The zero value is ready to use.
type Heap4[T any] struct {
	items []Item[T]
	seq   uint64
}

var _ Queue[int] = (*Heap4[int])(nil)

// NewHeap4 returns an empty 4-ary heap queue.
func NewHeap4[T any]() *Heap4[T] {
	return &Heap4[T]{}
}

// Push implements Queue.
func (h *Heap4[T]) Push(at time.Duration, v T) uint64 {
	seq := h.seq
	h.seq++
	h.items = append(h.items, Item[T]{At: at, Seq: seq, Value: v})
	h.up(len(h.items) - 1)
	return seq
}

// Pop implements Queue.
func (h *Heap4[T]) Pop() (Item[T], bool) {
	n := len(h.items)
	if n == 0 {
		return Item[T]{}, false
	}
	top := h.items[0]
	last := n - 1
	h.items[0] = h.items[last]
	// Clear the vacated slot so the backing array does not keep the payload
	// reachable after the caller is done with it.
	h.items[last] = Item[T]{}
	h.items = h.items[:last]
	if last > 0 {
		h.down(0)
	}
	return top, true
}

// Peek implements Queue.
func (h *Heap4[T]) Peek() (Item[T], bool) {
	if len(h.items) == 0 {
		return Item[T]{}, false
	}
	return h.items[0], true
}

// Len implements Queue.
func (h *Heap4[T]) Len() int { return len(h.items) }

// up and down are the sifts the calendar queue's buckets use too (calendar.go): they move a
// hole rather than swapping, so each level costs one copy instead of three.
func (h *Heap4[T]) up(i int) { siftUp(h.items, i) }

func (h *Heap4[T]) down(i int) { siftDown(h.items, i) }

// ReplaceMin implements Queue: one sift-down instead of a pop's and a push's.
func (h *Heap4[T]) ReplaceMin(at time.Duration, v T) uint64 {
	if len(h.items) == 0 {
		return h.Push(at, v)
	}
	seq := h.seq
	h.seq++
	h.items[0] = Item[T]{At: at, Seq: seq, Value: v}
	h.down(0)
	return seq
}
