package fuzz

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure a campaign.
type Options struct {
	Seed uint64
	// Runs is the number of runs of the whole campaign (over all shards); Time, when
	// positive, stops starting runs after that much wall time (Runs 0: no run limit).
	Runs int
	Time time.Duration
	// Kinds to draw faults from (default every kind); MaxFaults per run (default 6).
	Kinds     []Kind
	MaxFaults int
	// Parallel runs at once (default 1). Shard I of Shards runs the run indexes i with
	// i mod Shards = I (default 0 of 1).
	Parallel      int
	Shard, Shards int
	// Converge checks, at the end of each run, that every cluster the faults touched is
	// Joined and Healthy again (see Converged).
	Converge bool
	// Progress, when set, is called after each run with the runs done, one call at a time.
	Progress func(done int)
	// OnRun, when set, sees every run's index, seed and trace hash (from several goroutines).
	OnRun func(index int, seed uint64, traceHash string)
}

// Summary is a campaign's (or a shard's) result, as `fleetsim fuzz --output json` prints it
// and `fleetsim fuzz merge` combines.
type Summary struct {
	Seed       uint64         `json:"seed"`
	Shard      int            `json:"shard"`
	Shards     int            `json:"shards"`
	Files      []string       `json:"files"`
	Runs       int            `json:"runs"`
	Events     uint64         `json:"events"`
	Faults     map[string]int `json:"faults"`
	Checks     uint64         `json:"invariantsChecked"`
	Violations int            `json:"violations"`
	// ConvergenceChecks counts the members checked Joined and Healthy at a run's end.
	ConvergenceChecks int `json:"convergenceChecks"`
	// Digest sums a hash of (run index, trace hash) over the runs: shards' digests add up to
	// the unsharded campaign's.
	Digest          uint64   `json:"digest"`
	Seconds         float64  `json:"seconds"`
	RunsPerSecond   float64  `json:"runsPerSecond"`
	EventsPerSecond float64  `json:"eventsPerSecond"`
	Failure         *Failure `json:"failure,omitempty"`
}

// Failure is the minimal failing run found.
type Failure struct {
	CampaignSeed   uint64 `json:"campaignSeed"`
	Run            int    `json:"run"`
	Seed           uint64 `json:"seed"`
	Source         string `json:"source"`
	Invariant      string `json:"invariant"`
	Detail         string `json:"detail"`
	At             string `json:"at"`
	OriginalFaults int    `json:"originalFaults"`
	Faults         int    `json:"faults"`
	End            string `json:"end"`
	// Replays: `fleetsim run` on the written file shows the violation (false when a
	// scripted step the faults broke stops it first).
	Replays bool `json:"replays"`
	// Scenario is the replayable file's text.
	Scenario string `json:"-"`
	body     string
}

// Converged names the convergence check in failures: once faults stop, every cluster member
// a fault touched (and the scenario itself leaves alone) is Joined and Healthy again by the
// end of the run. A written failure carries it as `expect` entries.
const Converged = "converged"

// RunSeed derives run i's seed from the campaign seed (splitmix64).
func RunSeed(seed uint64, i int) uint64 {
	z := seed + uint64(i+1)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// schedule is run i's target and faults.
func schedule(targets []*Target, o *Options, i int) (*Target, uint64, []Fault) {
	t := targets[i%len(targets)]
	seed := RunSeed(o.Seed, i)
	r := rand.New(rand.NewPCG(seed, 0x66757a7a))
	return t, seed, t.draw(r, o.Kinds, o.MaxFaults)
}

func digest(i int, traceHash string) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s", i, traceHash)
	return h.Sum64()
}

// Campaign runs a campaign over the targets. A run that cannot run (the scenario breaks
// under a fault, which is the scenario's problem, not an invariant's) is an error.
func Campaign(targets []*Target, o Options) (*Summary, error) {
	if len(targets) == 0 {
		return nil, fmt.Errorf("fuzz: no scenario")
	}
	if len(o.Kinds) == 0 {
		o.Kinds = Kinds
	}
	if o.MaxFaults <= 0 {
		o.MaxFaults = 6
	}
	o.Parallel = max(o.Parallel, 1)
	if o.Shards <= 0 {
		o.Shards = 1
	}
	if o.Shard < 0 || o.Shard >= o.Shards {
		return nil, fmt.Errorf("fuzz: shard %d is not in 0..%d", o.Shard, o.Shards-1)
	}
	if o.Runs <= 0 && o.Time <= 0 {
		return nil, fmt.Errorf("fuzz: need a number of runs or a time budget")
	}
	sum := &Summary{Seed: o.Seed, Shard: o.Shard, Shards: o.Shards, Faults: map[string]int{}}
	for _, t := range targets {
		sum.Files = append(sum.Files, t.Path)
	}
	start := time.Now()
	var (
		mu      sync.Mutex
		next    atomic.Int64 // k: the k-th run of this shard
		firstV  atomic.Int64 // lowest failing run index
		runErr  error
		errAt   = -1
		wg      sync.WaitGroup
		done    int
		failing = map[int]outcome{}
	)
	firstV.Store(-1)
	for range o.Parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1) - 1)
				i := o.Shard + k*o.Shards
				if o.Runs > 0 && i >= o.Runs {
					return
				}
				if v := firstV.Load(); v >= 0 && int64(i) > v {
					return
				}
				if o.Time > 0 && time.Since(start) >= o.Time {
					return
				}
				t, seed, faults := schedule(targets, &o, i)
				out, _, err := t.run(seed, faults, t.Duration, nil, false, o.Converge, nil)
				mu.Lock()
				if err != nil {
					if errAt < 0 || i < errAt {
						runErr, errAt = fmt.Errorf("run %d (seed %d) of %s: %w", i, seed, t.Path, err), i
					}
					firstV.CompareAndSwap(-1, int64(i))
					mu.Unlock()
					continue
				}
				sum.Runs++
				sum.Events += out.events
				sum.Checks += uint64(out.checks) * out.events
				sum.ConvergenceChecks += out.converge / 2
				sum.Digest += digest(i, out.traceHash)
				for _, f := range faults {
					sum.Faults[string(f.Kind)]++
				}
				if out.invariant != "" {
					sum.Violations++
					failing[i] = out
					for {
						v := firstV.Load()
						if (v >= 0 && v <= int64(i)) || firstV.CompareAndSwap(v, int64(i)) {
							break
						}
					}
				}
				done++
				if o.Progress != nil {
					o.Progress(done) // under the lock: one call at a time
				}
				mu.Unlock()
				if o.OnRun != nil {
					o.OnRun(i, seed, out.traceHash)
				}
			}
		}()
	}
	wg.Wait()
	if runErr != nil {
		return nil, runErr
	}
	if len(failing) > 0 {
		idx := make([]int, 0, len(failing))
		for i := range failing {
			idx = append(idx, i)
		}
		sort.Ints(idx)
		i := idx[0]
		t, seed, faults := schedule(targets, &o, i)
		f, err := Shrink(t, seed, faults, failing[i], o.Converge)
		if err != nil {
			return nil, err
		}
		f.CampaignSeed, f.Run = o.Seed, i
		f.Scenario = header(f) + f.body
		sum.Failure = f
	}
	sum.Seconds = time.Since(start).Seconds()
	if sum.Seconds > 0 {
		sum.RunsPerSecond = float64(sum.Runs) / sum.Seconds
		sum.EventsPerSecond = float64(sum.Events) / sum.Seconds
	}
	return sum, nil
}

// Shrink minimises a failing schedule: it ends the run at the violation, drops faults one
// at a time while the same invariant still fails, and ends the run again at the (possibly
// earlier) violation. It returns the failure with the replayable scenario text.
func Shrink(t *Target, seed uint64, faults []Fault, first outcome, converge bool) (*Failure, error) {
	original := len(faults)
	inv := []string{first.invariant}
	conv := first.invariant == Converged
	converge = converge && conv // an invariant's failure is written without them
	if conv {
		inv = []string{} // the expectations check it; no invariant is needed
	}
	// Members the scenario makes unhealthy by itself get no convergence check in the
	// schedules tried, nor in the written file.
	var skip map[string]bool
	if converge {
		var err error
		if skip, err = t.unsteady(seed); err != nil {
			return nil, err
		}
	}
	end := t.Duration
	best := first
	// Shrinking keeps schedules that fail the same invariant when run as `fleetsim run`
	// runs the written file (strict), unless the original run only fails tolerantly.
	strict := true
	fails := func(fs []Fault, e time.Duration) (outcome, bool) {
		o, _, err := t.run(seed, fs, e, inv, strict, converge, skip)
		return o, err == nil && o.invariant == first.invariant
	}
	cut := func() {
		if conv {
			return // a convergence failure shows at the end
		}
		e := best.at.Truncate(time.Second)
		if e < best.at {
			e += time.Second
		}
		if e < end {
			if o, ok := fails(faults, e); ok {
				end, best = e, o
			}
		}
	}
	// A full check of the one invariant, at the original end, first: the invariants
	// checked alone must fail the same way.
	if _, ok := fails(faults, end); !ok && !conv {
		inv = nil // keep every invariant: the failure needs them together
	}
	if o, ok := fails(faults, end); ok {
		best = o
	} else {
		strict = false
	}
	cut()
	for changed := true; changed; {
		changed = false
		for j := 0; j < len(faults); j++ {
			cand := append(append([]Fault(nil), faults[:j]...), faults[j+1:]...)
			if o, ok := fails(cand, end); ok {
				faults, best, changed = cand, o, true
				j--
			}
		}
		cut()
	}
	// Faults starting after the end do nothing.
	kept := faults[:0]
	for _, f := range faults {
		if f.At <= end {
			kept = append(kept, f)
		}
	}
	faults = kept
	if inv == nil {
		inv = []string{first.invariant}
	}
	data, err := t.render(seed, faults, end, inv, converge, skip)
	if err != nil {
		return nil, err
	}
	// Does the written file replay under `fleetsim run`?
	final, _, err := t.run(seed, faults, end, inv, true, converge, skip)
	replays := err == nil && final.invariant == best.invariant
	f := &Failure{Replays: replays, Seed: seed, Source: t.Path, Invariant: best.invariant, Detail: best.detail, At: best.at.String(),
		OriginalFaults: original, Faults: len(faults), End: end.String()}
	f.body = string(data)
	f.Scenario = header(f) + f.body
	return f, nil
}

// Merge combines shard summaries of one campaign.
func Merge(parts []*Summary) (*Summary, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("merge: no summaries")
	}
	out := &Summary{Seed: parts[0].Seed, Shards: parts[0].Shards, Files: parts[0].Files, Faults: map[string]int{}}
	seen := map[int]bool{}
	for _, p := range parts {
		if p.Seed != out.Seed || p.Shards != out.Shards {
			return nil, fmt.Errorf("merge: shard %d/%d of seed %d does not belong to a campaign of %d shards with seed %d", p.Shard, p.Shards, p.Seed, out.Shards, out.Seed)
		}
		if seen[p.Shard] {
			return nil, fmt.Errorf("merge: shard %d given twice", p.Shard)
		}
		seen[p.Shard] = true
		out.Runs += p.Runs
		out.Events += p.Events
		out.Checks += p.Checks
		out.Violations += p.Violations
		out.ConvergenceChecks += p.ConvergenceChecks
		out.Digest += p.Digest
		out.Seconds = max(out.Seconds, p.Seconds)
		for k, v := range p.Faults {
			out.Faults[k] += v
		}
		if p.Failure != nil && (out.Failure == nil || p.Failure.Run < out.Failure.Run) {
			out.Failure = p.Failure
		}
	}
	if len(seen) != out.Shards {
		return nil, fmt.Errorf("merge: %d of %d shards given", len(seen), out.Shards)
	}
	if out.Seconds > 0 {
		out.RunsPerSecond = float64(out.Runs) / out.Seconds
		out.EventsPerSecond = float64(out.Events) / out.Seconds
	}
	return out, nil
}
