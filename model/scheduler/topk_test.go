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
		vals := rapid.SliceOfDistinct(rapid.Int32Range(0, 10000), func(v int32) int32 { return v }).Draw(rt, "vals")
		k := rapid.IntRange(0, len(vals)+2).Draw(rt, "k")
		better := func(a, b int32) bool { return a > b }
		got := topK(nil, slices.Clone(vals), k, better)
		want := slices.Clone(vals)
		slices.SortFunc(want, func(a, b int32) int { return int(b - a) })
		want = want[:min(max(k, 0), len(want))]
		if !slices.Equal(got, want) {
			rt.Fatalf("topK(%v, %d) = %v, want %v", vals, k, got, want)
		}
	})
}
