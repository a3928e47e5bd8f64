package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fleetsim/fleetsim/scenarios"
	"github.com/fleetsim/fleetsim/scenarios/fuzz"
	"github.com/fleetsim/fleetsim/scenarios/input"
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

// Results are a plan's (or one shard's) measured runs: what `fleetsim plan -o json`
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
	hm, err := pl.HubModelAt(point)
	if err != nil {
		return RunResult{}, err
	}
	rep0, err := runner.Run(sc, runner.Options{Seed: &seed, HubModel: hm, NoMeasures: true, Setup: func(s *sim.Sim, u time.Duration) {
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

func digestOf(i int, traceHash string) uint64 {
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
					res.Digest += digestOf(r.Index, r.TraceHash)
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

// Shard is one shard's results and the file they were read from.
type Shard struct {
	Path    string
	Results *Results
}

// LoadShard reads a shard's results (fleetsim plan --shard I/N), up to
// MaxShardBytes. A file that is not JSON of a shard is refused as a
// *scenarios.Error naming the file and, where the JSON decoder knows them, the line and
// field.
func LoadShard(path string) (*Results, error) {
	data, err := input.ReadFileLimit(path, MaxShardBytes)
	if err != nil {
		return nil, err
	}
	if what := notAShard(data); what != "" {
		return nil, &scenarios.Error{Path: path, Line: 1, Reason: what + ", not a shard's results: a shard is what fleetsim plan FILE --shard I/N writes (JSON, whatever -o says)"}
	}
	var r Results
	if err := json.Unmarshal(data, &r); err != nil {
		e := &scenarios.Error{Path: path, Reason: "not a shard's results (fleetsim plan --shard I/N): " + strings.TrimPrefix(err.Error(), "json: ")}
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syn):
			e.Line = 1 + bytes.Count(data[:min(max(syn.Offset, 0), int64(len(data)))], []byte("\n"))
		case errors.As(err, &typ):
			e.Line = 1 + bytes.Count(data[:min(max(typ.Offset, 0), int64(len(data)))], []byte("\n"))
			e.Field = typ.Field
		}
		return nil, e
	}
	if r.Shards == 0 {
		return nil, &scenarios.Error{Path: path, Field: "shards", Reason: "missing: not a shard's results (fleetsim plan --shard I/N)"}
	}
	return &r, nil
}

// Merge combines the shards of pl's results into the unsharded plan's. It refuses, naming
// the file and field, a shard of another plan or seed or of another plan size, a shard that
// does not exist (5 of 2), one given twice, a run given twice, a run in the wrong shard or
// naming a point or seed the plan does not have, a shard missing runs or whose digest does
// not add up, and shards missing from the set.
func Merge(pl *Plan, parts []Shard) (*Results, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("merge: no results")
	}
	total := pl.RunCount()
	shards := parts[0].Results.Shards
	out := &Results{Plan: pl.Name, File: pl.Path, Seed: pl.Seed, Shards: shards, Runs: total}
	byShard := map[int]string{}
	byRun := map[int]string{}
	for _, part := range parts {
		p, at := part.Results, func(field, format string, args ...any) error {
			return &scenarios.Error{Path: part.Path, Field: field, Reason: fmt.Sprintf(format, args...)}
		}
		switch {
		case p.Plan != pl.Name:
			return nil, at("plan", "the results of plan %q, not of %s's %q", p.Plan, pl.Path, pl.Name)
		case p.Seed != pl.Seed:
			return nil, at("seed", "run with seed %d; %s has seed %d", p.Seed, pl.Path, pl.Seed)
		case p.Runs != total:
			return nil, at("runs", "a plan of %d runs; %s has %d (is it a shard of a --small run, or of another version of the plan?)", p.Runs, pl.Path, total)
		case p.Shards < 1:
			return nil, at("shards", "%d shards: there is at least one", p.Shards)
		case p.Shards != shards:
			return nil, at("shards", "shard %d of %d, but %s is a shard of %d", p.Shard, p.Shards, parts[0].Path, shards)
		case p.Shard < 0 || p.Shard >= p.Shards:
			return nil, at("shard", "shard %d of %d does not exist: the shards are 0 to %d", p.Shard, p.Shards, p.Shards-1)
		}
		if prev, dup := byShard[p.Shard]; dup {
			return nil, at("shard", "shard %d of %d is also %s: each shard once", p.Shard, p.Shards, prev)
		}
		byShard[p.Shard] = part.Path
		var digest uint64
		for k, r := range p.Results {
			field := fmt.Sprintf("results[%d]", k)
			switch {
			case r.Index < 0 || r.Index >= total:
				return nil, at(field+".index", "run %d does not exist: the plan has runs 0 to %d", r.Index, total-1)
			case r.Index%p.Shards != p.Shard:
				return nil, at(field+".index", "run %d belongs to shard %d of %d, not %d", r.Index, r.Index%p.Shards, p.Shards, p.Shard)
			case r.Point != r.Index/pl.Repetitions || r.Rep != r.Index%pl.Repetitions:
				return nil, at(field+".point", "run %d is repetition %d of point %d, not repetition %d of point %d", r.Index, r.Index%pl.Repetitions, r.Index/pl.Repetitions, r.Rep, r.Point)
			case r.Seed != pl.RunSeed(r.Rep):
				return nil, at(field+".seed", "run %d ran with seed %d; repetition %d of %s runs with %d", r.Index, r.Seed, r.Rep, pl.Path, pl.RunSeed(r.Rep))
			}
			if prev, dup := byRun[r.Index]; dup {
				return nil, at(field+".index", "run %d is also in %s: each run once", r.Index, prev)
			}
			byRun[r.Index] = part.Path
			digest += digestOf(r.Index, r.TraceHash)
		}
		if want := shardRuns(total, p.Shard, p.Shards); len(p.Results) != want {
			return nil, at("results", "%d runs; shard %d of %d has %d", len(p.Results), p.Shard, p.Shards, want)
		}
		if digest != p.Digest {
			return nil, at("digest", "%d does not add up to its runs' %d: the file was changed after the shard wrote it", p.Digest, digest)
		}
		out.Digest += p.Digest
		out.Seconds = max(out.Seconds, p.Seconds)
		out.Results = append(out.Results, p.Results...)
	}
	if len(byShard) != shards {
		var missing []string
		for s := 0; s < shards && len(missing) < 10; s++ {
			if _, ok := byShard[s]; !ok {
				missing = append(missing, strconv.Itoa(s))
			}
		}
		if shards-len(byShard) > len(missing) {
			missing = append(missing, "…")
		}
		return nil, fmt.Errorf("merge: %d of %d shards given; missing shard %s", len(byShard), shards, strings.Join(missing, ", "))
	}
	sort.Slice(out.Results, func(a, b int) bool { return out.Results[a].Index < out.Results[b].Index })
	return out, nil
}

// notAShard recognises the files plan merge is most often given by mistake, and says what
// they are: an HTML or Markdown report, or a whole report's JSON. "" for anything else.
func notAShard(data []byte) string {
	t := bytes.TrimSpace(data)
	switch {
	case bytes.HasPrefix(t, []byte("<")):
		return "an HTML report (it starts with <)"
	case bytes.HasPrefix(t, []byte("# ")):
		return "a Markdown report"
	case bytes.HasPrefix(t, []byte("{")):
		var probe struct {
			Points  json.RawMessage `json:"points"`
			Summary json.RawMessage `json:"summary"`
		}
		if json.Unmarshal(t, &probe) == nil && probe.Points != nil && probe.Summary != nil {
			return "a plan's report (fleetsim plan -o json)"
		}
	}
	return ""
}
