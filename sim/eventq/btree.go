package eventq

import (
	"time"

	"github.com/google/btree"
)

// btreeDegree comes from running BenchmarkHold with degrees 8 to 128:
// 16 to 64 were within noise of each other, 8 (more pointer hops) and 128
// (more copying inside a node) were slower.
const btreeDegree = 32

// BTree is a Queue backed by github.com/google/btree. It is kept as a
// cross-check for Heap4 and as the alternative measured in reports/eventq.md.
type BTree[T any] struct {
	tree *btree.BTreeG[Item[T]]
	seq  uint64
}

var _ Queue[int] = (*BTree[int])(nil)

// NewBTree returns an empty B-tree queue.
func NewBTree[T any]() *BTree[T] {
	return &BTree[T]{tree: btree.NewG(btreeDegree, less[T])}
}

// Push implements Queue.
func (q *BTree[T]) Push(at time.Duration, v T) uint64 {
	seq := q.seq
	q.seq++
	// Seq is unique, so this never replaces an existing item.
	q.tree.ReplaceOrInsert(Item[T]{At: at, Seq: seq, Value: v})
	return seq
}

// Pop implements Queue.
func (q *BTree[T]) Pop() (Item[T], bool) { return q.tree.DeleteMin() }

// Peek implements Queue.
func (q *BTree[T]) Peek() (Item[T], bool) { return q.tree.Min() }

// Len implements Queue.
func (q *BTree[T]) Len() int { return q.tree.Len() }

// ReplaceMin implements Queue.
func (q *BTree[T]) ReplaceMin(at time.Duration, v T) uint64 {
	q.tree.DeleteMin()
	return q.Push(at, v)
}
