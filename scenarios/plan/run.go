package plan

import (
	"fmt"
	"hash/fnv"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fleetsim/fleetsim/scenarios/fuzz"
	"github.com/fleetsim/fleetsim/scenarios/runner"
	"github.com/fleetsim/fleetsim/sim"
)

// Options configure Execute.
type Options struct {
	// Parallel runs at once (default 1). Shard I of Shards runs the run indexes i with
	// i mod Shards = I (default 0 of 1), as fuzz campaigns shard.
	Parallel      int
	Shard, Shards int
	// Progress, when set, is called after each run with the runs done and the shard's
	// total, one call at a time.
	Progress func(done, total int)
}

// Results are a plan's (or one shard's) measured runs: what `fleetsim plan --format json`
// writes and `fleetsim plan merge` combines.
type Results struct {
	Plan   string `json:"plan"`
	File   string `json:"file"`
	Seed   uint64 `json:"seed"`
	Shard  int    `json:"shard"`
	Shards int    `json:"shards"`
	// Runs is the plan's whole run count (points × repetitions), over all shards.
	Runs int `json:"runs"`
	// Digest sums a hash of (run index, trace hash) over the runs held: the shards' digests
	// add up to the unsharded plan's.
	Digest  uint64      `json:"digest"`
	Seconds float64     `json:"seconds"`
	Results []RunResult `json:"results"`
}

// RunCount is the number of runs of the whole plan.
func (pl *Plan) RunCount() int { return pl.NumPoints() * pl.Repetitions }

// RunSeed is repetition r's seed: every point's r-th repetition shares it.
func (pl *Plan) RunSeed(rep int) uint64 { return fuzz.RunSeed(pl.Seed, rep) }

// RunOne runs run index i (point i / repetitions, repetition i % repetitions).
func (pl *Plan) RunOne(i int) (RunResult, error) {
	point, rep := i/pl.Repetitions, i%pl.Repetitions
	if i < 0 || point >= pl.NumPoints() {
		return RunResult{}, fmt.Errorf("run %d: the plan has runs 0 to %d", i, pl.RunCount()-1)
	}
	sc, err := pl.Scenario(point)
	if err != nil {
		return RunResult{}, err
	}
	seed := pl.RunSeed(rep)
	var col *collector
	calls := 0
	if sc.Hub != nil {
		calls = sc.Hub.CallsPerDecision
	}
	var until time.Duration
	start := time.Now()
	rep0, err := runner.Run(sc, runner.Options{Seed: &seed, Setup: func(s *sim.Sim, u time.Duration) {
		until = u
		col = newCollector(s, pl.Sample, pl.Phases)
		// At most MaxSamplesPerRun (Scenario checked the duration); counted, not summed, so
		// that no time overflows.
		for k := range min(u/pl.Sample, MaxSamplesPerRun) {
			s.Barrier(time.Duration(k+1)*pl.Sample, col.takeSample)
		}
	}})
	if err != nil {
		return RunResult{}, fmt.Errorf("run %d (%s, seed %d): %w", i, pl.Label(pl.Point(point)), seed, err)
	}
	r := col.result(until, calls)
	r.Index, r.Point, r.Rep, r.Seed = i, point, rep, seed
	r.TraceHash, r.Events, r.Simulated = rep0.TraceHash, rep0.Events, until.Seconds()
	r.Wall = time.Since(start).Seconds()
	return r, nil
}

func digest(i int, traceHash string) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s", i, traceHash)
	return h.Sum64()
}

// Execute runs the plan's runs of one shard, Parallel at a time. Runs are independent and
// deterministic per seed, so the results do not depend on Parallel.
func (pl *Plan) Execute(o Options) (*Results, error) {
	o.Parallel = max(o.Parallel, 1)
	if o.Shards <= 0 {
		o.Shards = 1
	}
	if o.Shard < 0 || o.Shard >= o.Shards {
		return nil, fmt.Errorf("plan: shard %d is not in 0..%d", o.Shard, o.Shards-1)
	}
	total := pl.RunCount()
	res := &Results{Plan: pl.Name, File: pl.Path, Seed: pl.Seed, Shard: o.Shard, Shards: o.Shards, Runs: total}
	// The shard's k-th run is Shard + k×Shards: computed, not listed, so a shard allocates
	// nothing per run before running it.
	n := shardRuns(total, o.Shard, o.Shards)
	idx := func(k int) int { return o.Shard + k*o.Shards }
	start := time.Now()
	var (
		mu     sync.Mutex
		next   atomic.Int64
		wg     sync.WaitGroup
		firstE error
		errAt  = -1
		done   int
	)
	for range o.Parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1) - 1)
				if k >= n {
					return
				}
				r, err := pl.RunOne(idx(k))
				mu.Lock()
				if err != nil {
					if errAt < 0 || idx(k) < errAt {
						firstE, errAt = err, idx(k)
					}
				} else {
					res.Results = append(res.Results, r)
					res.Digest += digest(r.Index, r.TraceHash)
				}
				done++
				if o.Progress != nil {
					o.Progress(done, n)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if firstE != nil {
		return nil, firstE
	}
	sort.Slice(res.Results, func(a, b int) bool { return res.Results[a].Index < res.Results[b].Index })
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// shardRuns is how many of runs 0..total-1 shard s of n holds (those with i mod n = s),
// without overflow for any n.
func shardRuns(total, s, n int) int {
	if s < 0 || s >= total || n < 1 {
		return 0
	}
	return (total-1-s)/n + 1
}

// Merge combines the shards of one plan's results.
func Merge(parts []*Results) (*Results, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("merge: no results")
	}
	out := &Results{Plan: parts[0].Plan, File: parts[0].File, Seed: parts[0].Seed, Shards: parts[0].Shards, Runs: parts[0].Runs}
	seen := map[int]bool{}
	for _, p := range parts {
		if p.Plan != out.Plan || p.Seed != out.Seed || p.Shards != out.Shards || p.Runs != out.Runs {
			return nil, fmt.Errorf("merge: shard %d/%d of plan %q (seed %d, %d runs) does not belong with plan %q (seed %d, %d runs, %d shards)",
				p.Shard, p.Shards, p.Plan, p.Seed, p.Runs, out.Plan, out.Seed, out.Runs, out.Shards)
		}
		if seen[p.Shard] {
			return nil, fmt.Errorf("merge: shard %d given twice", p.Shard)
		}
		seen[p.Shard] = true
		out.Digest += p.Digest
		out.Seconds = max(out.Seconds, p.Seconds)
		out.Results = append(out.Results, p.Results...)
	}
	if len(seen) != out.Shards {
		return nil, fmt.Errorf("merge: %d of %d shards given", len(seen), out.Shards)
	}
	sort.Slice(out.Results, func(a, b int) bool { return out.Results[a].Index < out.Results[b].Index })
	return out, nil
}
