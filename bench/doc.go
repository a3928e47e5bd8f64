// Package bench owns the benchmark harness: deterministic generators of large fleets and
// placements, shared by the `go test -bench` benchmarks here and by `fleetsim bench`.
// Figures and the commands that produced them are recorded in reports/benchmarks.md.
package bench
