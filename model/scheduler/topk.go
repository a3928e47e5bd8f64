// topk.go holds the ranking order of candidates (a packed key after the topology score)
// and the choice of the best k without sorting them all.

package scheduler

import (
	"cmp"
	"slices"
)

// ranked is a candidate as the ranking sees it: its topology score, then a key packing the
// affinity score, an existing obsolete binding and the name's rank (rankKey), so that
// comparing two candidates is two integer comparisons.
type ranked struct {
	topo int32
	mi   int32 // the candidate's memo
	key  uint64
}

// beats reports whether a ranks before b (SCHED-SORT, DC-2).
func (a *ranked) beats(b *ranked) bool {
	if a.topo != b.topo {
		return a.topo > b.topo
	}
	return a.key > b.key
}

// rankKey packs what ranks candidates after the topology score: the higher affinity score,
// then an existing obsolete binding (less churn), then the greater name.
func rankKey(affinity int32, obsolete bool, rank int32) uint64 {
	k := uint64(uint32(affinity)^0x80000000)<<32 | uint64(uint32(rank))&0x7fffffff
	if obsolete {
		k |= 1 << 31
	}
	return k
}

// topK appends to dst the k best of items, best first. It keeps a bounded heap of the best
// seen so far, so choosing 50 of 10,000 candidates costs about one comparison per candidate
// instead of a full sort. items is reordered; dst may be items[:0].
func topK(dst, items []ranked, k int) []ranked {
	dst = dst[:0]
	if k <= 0 || len(items) == 0 {
		return dst
	}
	switch {
	case k >= len(items):
		dst = append(dst, items...)
	case k > len(items)/16:
		// Many of many (the ~950 decisions reported out of thousands of candidates): a
		// selection partition costs a few comparisons per item, a heap log(k) per insert.
		selectFirst(items, k)
		dst = append(dst, items[:k]...)
	default:
		// A heap whose root is the worst of the best k: a newcomer only enters if it beats it.
		dst = append(dst, items[:k]...)
		for i := k/2 - 1; i >= 0; i-- {
			siftDown(dst, i)
		}
		for i := k; i < len(items); i++ {
			if items[i].beats(&dst[0]) {
				dst[0] = items[i]
				siftDown(dst, 0)
			}
		}
	}
	slices.SortFunc(dst, func(a, b ranked) int {
		switch {
		case a.beats(&b):
			return -1
		case b.beats(&a):
			return 1
		}
		return 0
	})
	return dst
}

// siftDown restores the heap property below i; the root is the worst item.
func siftDown(h []ranked, i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h[l].beats(&h[r]) {
			m = r
		}
		if !h[i].beats(&h[m]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// selectFirst reorders h so that its first k items are the k best (in no particular order),
// by quickselect with a median-of-three pivot; deterministic for a given input order.
func selectFirst(h []ranked, k int) {
	lo, hi := 0, len(h)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		// Order h[lo], h[mid], h[hi] and use the middle one as the pivot.
		if h[mid].beats(&h[lo]) {
			h[mid], h[lo] = h[lo], h[mid]
		}
		if h[hi].beats(&h[lo]) {
			h[hi], h[lo] = h[lo], h[hi]
		}
		if h[hi].beats(&h[mid]) {
			h[hi], h[mid] = h[mid], h[hi]
		}
		pivot := h[mid]
		i, j := lo, hi
		for i <= j {
			for h[i].beats(&pivot) {
				i++
			}
			for pivot.beats(&h[j]) {
				j--
			}
			if i <= j {
				h[i], h[j] = h[j], h[i]
				i++
				j--
			}
		}
		switch {
		case k-1 <= j:
			hi = j
		case k-1 >= i:
			lo = i
		default:
			return
		}
	}
}

// topKSorted is topK for items sorted by key, best first: the best k by topology score,
// then key, are those of the best topology scores taken in key order. With many distinct
// topology scores it falls back to topK. dst must not share items' memory.
func topKSorted(dst, items []ranked, k int) []ranked {
	dst = dst[:0]
	if k <= 0 || len(items) == 0 {
		return dst
	}
	var levels [8]int32
	nl := 0
	for i := range items {
		t := items[i].topo
		if slices.Contains(levels[:nl], t) {
			continue
		}
		if nl == len(levels) {
			return topK(dst, items, k)
		}
		levels[nl] = t
		nl++
	}
	slices.SortFunc(levels[:nl], func(a, b int32) int { return cmp.Compare(b, a) })
	for _, t := range levels[:nl] {
		for i := range items {
			if items[i].topo == t {
				if dst = append(dst, items[i]); len(dst) == k {
					return dst
				}
			}
		}
	}
	return dst
}
