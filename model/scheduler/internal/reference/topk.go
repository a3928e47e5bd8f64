package reference

import "slices"

// topK appends to dst the k best of items, best first, ranked by better (a strict total
// order). It keeps a bounded heap of the best seen so far, so choosing 50 of 10,000
// candidates costs about one comparison per candidate instead of a full sort.
func topK(dst, items []int32, k int, better func(a, b int32) bool) []int32 {
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
		dst = append(dst, items...)
		selectFirst(dst, k, better)
		dst = dst[:k]
	default:
		// A heap whose root is the worst of the best k: a newcomer only enters if it beats it.
		dst = append(dst, items[:k]...)
		worse := func(a, b int32) bool { return better(b, a) }
		for i := k/2 - 1; i >= 0; i-- {
			siftDown(dst, i, worse)
		}
		for _, it := range items[k:] {
			if better(it, dst[0]) {
				dst[0] = it
				siftDown(dst, 0, worse)
			}
		}
	}
	slices.SortFunc(dst, func(a, b int32) int {
		switch {
		case better(a, b):
			return -1
		case better(b, a):
			return 1
		}
		return 0
	})
	return dst
}

// siftDown restores the heap property below i, where less(a, b) puts a nearer the root.
func siftDown(h []int32, i int, less func(a, b int32) bool) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && less(h[r], h[l]) {
			m = r
		}
		if !less(h[m], h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// selectFirst reorders h so that its first k items are the k best (in no particular order),
// by quickselect with a median-of-three pivot; deterministic for a given input order.
func selectFirst(h []int32, k int, better func(a, b int32) bool) {
	lo, hi := 0, len(h)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		// Order h[lo], h[mid], h[hi] and use the middle one as the pivot.
		if better(h[mid], h[lo]) {
			h[mid], h[lo] = h[lo], h[mid]
		}
		if better(h[hi], h[lo]) {
			h[hi], h[lo] = h[lo], h[hi]
		}
		if better(h[hi], h[mid]) {
			h[hi], h[mid] = h[mid], h[hi]
		}
		pivot := h[mid]
		i, j := lo, hi
		for i <= j {
			for better(h[i], pivot) {
				i++
			}
			for better(pivot, h[j]) {
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
