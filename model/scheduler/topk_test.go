package scheduler

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestTopK: for any items and k, topK returns exactly the k best in rank order, whichever
// strategy (heap or selection) it uses.
func TestTopK(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		keys := rapid.SliceOfDistinct(rapid.Int32Range(0, 10000), func(v int32) int32 { return v }).Draw(rt, "keys")
		var items []ranked
		for i, k := range keys {
			items = append(items, ranked{topo: int32(k % 3), key: rankKey(k/7-500, k%2 == 0, k), mi: int32(i)})
		}
		k := rapid.IntRange(0, len(items)+2).Draw(rt, "k")
		got := topK(nil, slices.Clone(items), k)
		want := slices.Clone(items)
		slices.SortFunc(want, func(a, b ranked) int {
			if a.topo != b.topo {
				return int(b.topo - a.topo)
			}
			ak, bk := a.key, b.key
			switch {
			case ak > bk:
				return -1
			case ak < bk:
				return 1
			}
			return 0
		})
		want = want[:min(max(k, 0), len(want))]
		if !slices.Equal(got, want) {
			rt.Fatalf("topK(%v, %d) = %v, want %v", items, k, got, want)
		}
		inPlace := slices.Clone(items)
		if got := topK(inPlace[:0], inPlace, k); !slices.Equal(got, want) {
			rt.Fatalf("topK in place (%v, %d) = %v, want %v", items, k, got, want)
		}
	})
}

// TestRankKeyOrder: the packed key orders as the affinity score, then an obsolete binding,
// then the name's rank.
func TestRankKeyOrder(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		a1, a2 := rapid.Int32().Draw(rt, "a1"), rapid.Int32().Draw(rt, "a2")
		o1, o2 := rapid.Bool().Draw(rt, "o1"), rapid.Bool().Draw(rt, "o2")
		r1, r2 := rapid.Int32Range(0, 1<<31-1).Draw(rt, "r1"), rapid.Int32Range(0, 1<<31-1).Draw(rt, "r2")
		want := false
		switch {
		case a1 != a2:
			want = a1 > a2
		case o1 != o2:
			want = o1
		default:
			want = r1 > r2
		}
		if got := rankKey(a1, o1, r1) > rankKey(a2, o2, r2); got != want {
			rt.Fatalf("rankKey(%d,%v,%d) > rankKey(%d,%v,%d) = %v, want %v", a1, o1, r1, a2, o2, r2, got, want)
		}
	})
}
