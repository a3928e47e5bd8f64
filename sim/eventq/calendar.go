package eventq

import "time"

// Calendar is a calendar queue: time is cut into buckets of a fixed width, and a ring of
// buckets covers the near future. An event in the current bucket (or earlier) goes into a
// small 4-ary heap; an event in a later bucket of the ring is appended to it unsorted (one
// write, O(1)), and the bucket is heapified when it becomes current; an event beyond the
// ring waits in a far heap and joins the current heap when its bucket comes. Order is
// exactly (At, Seq), as with Heap4: buckets partition time, so the earliest event is
// always in the current heap.
//
// It wins when many events are pending and most are scheduled within the ring's horizon:
// a periodic event (a heartbeat) costs an append and a sift in a heap of one bucket's
// events, which stays in cache, instead of a sift through a heap of every pending event.
// The zero value is not usable; use NewCalendar.
type Calendar[T any] struct {
	width time.Duration
	// ring holds, per bucket of the near future, the first chunk of its events (-1: none);
	// a bucket's chunks are linked through chunk.next and its last chunk is tail.
	ring []bucketList
	mask int64
	// ringN counts the events in ring.
	ringN int
	// cur is the absolute index (At / width) of the current bucket, whose events (and any
	// pushed for earlier times) are in now, a 4-ary heap built when the bucket became
	// current: a heap of one bucket's events stays in cache.
	cur int64
	now []Item[T]
	// A current bucket of few events is kept sorted instead (sorted): its events are
	// now[head:] in order, so a pop moves nothing and compares nothing. Narrow buckets
	// mostly hold a handful of events; one that grows past sortedMax becomes a heap.
	sorted bool
	head   int
	far    []Item[T] // a 4-ary heap of events at or beyond bucket cur+len(ring)
	// chunks is the arena of ring chunks; free lists the unused ones. Memory thus follows
	// the events pending in the ring, not the busiest a bucket has ever been.
	chunks []chunk[T]
	free   []int32
	seq    uint64
	n      int
}

// sortedMax is the most events a current bucket holds sorted; a larger one is a heap.
const sortedMax = 32

// chunkSize is how many events one ring chunk holds: small, since narrow buckets hold few
// events and every non-empty bucket holds at least one chunk.
const chunkSize = 8

type chunk[T any] struct {
	items [chunkSize]Item[T]
	n     int32
	next  int32
}

type bucketList struct{ head, tail int32 }

var _ Queue[int] = (*Calendar[int])(nil)

// NewCalendar returns an empty calendar queue with buckets of the given width and a ring
// of at least the given number of buckets (rounded up to a power of two).
func NewCalendar[T any](width time.Duration, buckets int) *Calendar[T] {
	if width <= 0 {
		width = 1
	}
	nb := 1
	for nb < buckets {
		nb <<= 1
	}
	c := &Calendar[T]{width: width, ring: make([]bucketList, nb), mask: int64(nb - 1)}
	for i := range c.ring {
		c.ring[i] = bucketList{-1, -1}
	}
	return c
}

// bucket returns the absolute bucket of time at (floor division).
func (c *Calendar[T]) bucket(at time.Duration) int64 {
	k := int64(at / c.width)
	if at < 0 && at%c.width != 0 {
		k--
	}
	return k
}

// Push implements Queue.
func (c *Calendar[T]) Push(at time.Duration, v T) uint64 {
	seq := c.seq
	c.seq++
	c.n++
	c.insert(Item[T]{At: at, Seq: seq, Value: v})
	return seq
}

func (c *Calendar[T]) insert(it Item[T]) {
	switch k := c.bucket(it.At); {
	case k <= c.cur:
		c.pushNow(it)
	case k-c.cur < int64(len(c.ring)):
		c.appendRing(&c.ring[k&c.mask], it)
		c.ringN++
	default:
		c.far = append(c.far, it)
		siftUp(c.far, len(c.far)-1)
	}
}

// advance makes the current heap hold the earliest event, if there is any.
func (c *Calendar[T]) advance() {
	for len(c.now) == c.head && c.n > 0 {
		c.now, c.head = c.now[:0], 0
		if c.ringN == 0 {
			c.cur = c.bucket(c.far[0].At) // nothing in the ring: jump to the far minimum
		} else {
			c.cur++
		}
		if b := &c.ring[c.cur&c.mask]; b.head >= 0 {
			for k := b.head; k >= 0; {
				ch := &c.chunks[k]
				c.now = append(c.now, ch.items[:ch.n]...)
				c.ringN -= int(ch.n)
				clear(ch.items[:ch.n])
				next := ch.next
				c.free = append(c.free, k)
				k = next
			}
			*b = bucketList{-1, -1}
		}
		for len(c.far) > 0 && c.bucket(c.far[0].At) <= c.cur {
			c.now = append(c.now, popHeap(&c.far))
		}
		c.sorted = len(c.now) <= sortedMax
		if c.sorted {
			insertionSort(c.now)
		} else {
			heapify(c.now)
		}
	}
}

// pushNow adds an event to the current bucket.
func (c *Calendar[T]) pushNow(it Item[T]) {
	if c.sorted && len(c.now)-c.head >= sortedMax {
		// Too many for a sorted bucket: make it a heap.
		n := copy(c.now, c.now[c.head:])
		clear(c.now[n:])
		c.now, c.head, c.sorted = c.now[:n], 0, false
		heapify(c.now)
	}
	c.now = append(c.now, it)
	if !c.sorted {
		siftUp(c.now, len(c.now)-1)
		return
	}
	j := len(c.now) - 1
	for j > c.head && less(it, c.now[j-1]) {
		c.now[j] = c.now[j-1]
		j--
	}
	c.now[j] = it
}

// popNow removes and returns the current bucket's minimum (there is one).
func (c *Calendar[T]) popNow() Item[T] {
	if !c.sorted {
		return popHeap(&c.now)
	}
	it := c.now[c.head]
	c.now[c.head] = Item[T]{}
	if c.head++; c.head == len(c.now) {
		c.now, c.head = c.now[:0], 0
	}
	return it
}

func heapify[T any](items []Item[T]) {
	for i := (len(items) - 2) / 4; len(items) > 1 && i >= 0; i-- {
		siftDown(items, i)
	}
}

// insertionSort sorts a few items by (At, Seq).
func insertionSort[T any](items []Item[T]) {
	for i := 1; i < len(items); i++ {
		it := items[i]
		j := i
		for j > 0 && less(it, items[j-1]) {
			items[j] = items[j-1]
			j--
		}
		items[j] = it
	}
}

// appendRing appends it to a ring bucket, taking a chunk from the free list when the
// bucket's last chunk is full.
func (c *Calendar[T]) appendRing(b *bucketList, it Item[T]) {
	if b.tail < 0 || c.chunks[b.tail].n == chunkSize {
		var k int32
		if n := len(c.free); n > 0 {
			k = c.free[n-1]
			c.free = c.free[:n-1]
		} else {
			k = int32(len(c.chunks))
			c.chunks = append(c.chunks, chunk[T]{})
		}
		c.chunks[k].n, c.chunks[k].next = 0, -1
		if b.tail < 0 {
			b.head = k
		} else {
			c.chunks[b.tail].next = k
		}
		b.tail = k
	}
	ch := &c.chunks[b.tail]
	ch.items[ch.n] = it
	ch.n++
}

// Pop implements Queue.
func (c *Calendar[T]) Pop() (Item[T], bool) {
	c.advance()
	if len(c.now) == c.head {
		return Item[T]{}, false
	}
	c.n--
	return c.popNow(), true
}

// Peek implements Queue.
func (c *Calendar[T]) Peek() (Item[T], bool) {
	c.advance()
	if len(c.now) == c.head {
		return Item[T]{}, false
	}
	return c.now[c.head], true
}

// Len implements Queue.
func (c *Calendar[T]) Len() int { return c.n }

// ReplaceMin implements Queue: an event for the current bucket replaces the minimum in one
// sift-down.
func (c *Calendar[T]) ReplaceMin(at time.Duration, v T) uint64 {
	c.advance()
	if len(c.now) == c.head {
		return c.Push(at, v)
	}
	seq := c.seq
	c.seq++
	it := Item[T]{At: at, Seq: seq, Value: v}
	if c.bucket(at) <= c.cur && !c.sorted {
		c.now[0] = it
		siftDown(c.now, 0)
		return seq
	}
	c.popNow()
	c.insert(it)
	return seq
}

// popHeap removes and returns the minimum of a non-empty 4-ary heap.
func popHeap[T any](h *[]Item[T]) Item[T] {
	items := *h
	top := items[0]
	last := len(items) - 1
	items[0] = items[last]
	items[last] = Item[T]{}
	items = items[:last]
	if last > 0 {
		siftDown(items, 0)
	}
	*h = items
	return top
}

// siftUp and siftDown move a hole in a 4-ary heap rather than swapping.
func siftUp[T any](items []Item[T], i int) {
	it := items[i]
	for i > 0 {
		p := (i - 1) / 4
		if !less(it, items[p]) {
			break
		}
		items[i] = items[p]
		i = p
	}
	items[i] = it
}

func siftDown[T any](items []Item[T], i int) {
	n := len(items)
	it := items[i]
	for {
		first := 4*i + 1
		if first >= n {
			break
		}
		best := first
		end := min(first+4, n)
		for c := first + 1; c < end; c++ {
			if less(items[c], items[best]) {
				best = c
			}
		}
		if !less(items[best], it) {
			break
		}
		items[i] = items[best]
		i = best
	}
	items[i] = it
}
