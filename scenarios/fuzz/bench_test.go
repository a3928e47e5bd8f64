package fuzz

import (
	"os"
	"path/filepath"
	"testing"
)

// libraryTargets prepares every library scenario, as `make fuzz-ci` does.
func libraryTargets(tb testing.TB) []*Target {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join("..", "*.yaml"))
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no library scenario: %v", err)
	}
	var out []*Target
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		t, err := Prepare(p, data, 0)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, t)
	}
	return out
}

// BenchmarkCampaign runs b.N runs of the CI campaign (seed 1) on one goroutine.
func BenchmarkCampaign(b *testing.B) {
	targets := libraryTargets(b)
	b.ResetTimer()
	sum, err := Campaign(targets, Options{Seed: 1, Runs: b.N, Parallel: 1, Converge: true})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(sum.Events)/float64(b.N), "events/run")
}
