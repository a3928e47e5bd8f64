package fuzz

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
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
	Seed   uint64   `json:"seed"`
	Shard  int      `json:"shard"`
	Shards int      `json:"shards"`
	Files  []string `json:"files"`
	// Campaign is the rest of what defines the campaign: shards merge only when they agree
	// on it, their seed, their shard count and their files.
	Campaign   Spec           `json:"campaign"`
	Runs       int            `json:"runs"`
	Events     uint64         `json:"events"`
	Faults     map[string]int `json:"faults"`
	Checks     uint64         `json:"invariantsChecked"`
	Violations int            `json:"violations"`
	// ConvergenceChecks counts the members checked Joined and Healthy at a run's end.
	ConvergenceChecks int `json:"convergenceChecks"`
	// Digest sums a hash of (run index, trace hash) over the runs: shards' digests add up to
	// the unsharded campaign's.
	Digest          HexDigest `json:"digest"`
	Seconds         float64   `json:"seconds"`
	RunsPerSecond   float64   `json:"runsPerSecond"`
	EventsPerSecond float64   `json:"eventsPerSecond"`
	Failure         *Failure  `json:"failure,omitempty"`
}

// HexDigest is a 64-bit digest, written in JSON as a string of 16 hex digits: most JSON
// readers hold numbers as doubles and lose the digits of a number above 2^53. Reading
// accepts the number older summaries hold too.
type HexDigest uint64

func (d HexDigest) String() string { return fmt.Sprintf("%016x", uint64(d)) }

// MarshalJSON writes the digest as a hex string.
func (d HexDigest) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads a hex string, or a number (summaries written before the digest was a
// string).
func (d *HexDigest) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var n uint64
		if err := json.Unmarshal(b, &n); err != nil {
			return fmt.Errorf("digest: not a hex string: %s", b)
		}
		*d = HexDigest(n)
		return nil
	}
	n, err := strconv.ParseUint(s, 16, 64)
	if err != nil || len(s) == 0 || len(s) > 16 {
		return fmt.Errorf("digest %q: not up to 16 hex digits", s)
	}
	*d = HexDigest(n)
	return nil
}

// Spec is what defines a campaign beyond its seed, shard count and file names: the same
// spec, seed and files give the same runs, so shards belong to one campaign only when they
// agree on all of them.
type Spec struct {
	// Runs is the whole campaign's run budget (over all shards; 0: none), Time its wall-time
	// budget ("": none).
	Runs int    `json:"runBudget"`
	Time string `json:"timeBudget,omitempty"`
	// Kinds and MaxFaults are the fault kinds drawn from and the most faults in one run.
	Kinds     []string `json:"faultKinds"`
	MaxFaults int      `json:"maxFaults"`
	Converge  bool     `json:"converge"`
	// Scenarios is a hash of the targets: each one's path, text and run length (so another
	// --until, or a file edited between shards, is another campaign).
	Scenarios string `json:"scenarios"`
}

// spec returns the campaign's spec; o has its defaults.
func spec(targets []*Target, o *Options) Spec {
	sp := Spec{Runs: o.Runs, MaxFaults: o.MaxFaults, Converge: o.Converge, Kinds: []string{}}
	if o.Time > 0 {
		sp.Time = o.Time.String()
	}
	for _, k := range o.Kinds {
		sp.Kinds = append(sp.Kinds, string(k))
	}
	h := sha256.New()
	for _, t := range targets {
		fmt.Fprintf(h, "%d:%s\n%d:%s\n%d\n", len(t.Path), t.Path, len(t.data), t.data, t.Duration)
	}
	sp.Scenarios = hex.EncodeToString(h.Sum(nil)[:16])
	return sp
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
	sum := &Summary{Seed: o.Seed, Shard: o.Shard, Shards: o.Shards, Campaign: spec(targets, &o), Faults: map[string]int{}}
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
				out, err := t.runSafely(seed, faults, o.Converge)
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
				sum.Digest += HexDigest(digest(i, out.traceHash))
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

// runSafely runs one schedule of a campaign; a panic in the simulator (a bug the run
// found, not a violation an invariant names) is the run's error, not the process's end.
func (t *Target) runSafely(seed uint64, faults []Fault, converge bool) (out outcome, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the simulator panicked: %v", r)
		}
	}()
	out, _, err = t.run(seed, faults, t.Duration, nil, false, converge, nil)
	return out, err
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

// MergeError is a set of shard summaries Merge refuses. Part is the index of the summary at
// fault, -1 when the problem is the set (a shard missing); Name names it.
type MergeError struct {
	Part         int
	Name, Reason string
}

func (e *MergeError) Error() string {
	if e.Part < 0 {
		return "merge: " + e.Reason
	}
	return e.Name + ": " + e.Reason
}

// ShardRuns is how many runs shard I of N runs under a budget of runs: the run indexes
// below runs equal to I mod N.
func ShardRuns(runs, shard, shards int) int {
	if shard >= runs {
		return 0
	}
	return (runs - shard + shards - 1) / shards
}

// check refuses a summary that is not one shard's own result: a shard outside 0..N-1, more
// runs than its share of the budget (or fewer, without a time budget or a failure to stop
// it early), a failure of another shard or campaign, or a violation count that disagrees
// with the failure (a shard that finds a violation reports its minimal failure).
func (p *Summary) check() string {
	switch {
	case p.Shards < 1:
		return fmt.Sprintf("shards is %d: not a shard summary of `fleetsim fuzz --output json`", p.Shards)
	case p.Shard < 0 || p.Shard >= p.Shards:
		return fmt.Sprintf("shard %d is not one of the %d shards 0..%d", p.Shard, p.Shards, p.Shards-1)
	case len(p.Files) == 0:
		return "names no scenario file"
	case p.Runs < 0 || p.Violations < 0 || p.Violations > p.Runs:
		return fmt.Sprintf("%d violations in %d runs", p.Violations, p.Runs)
	}
	if b := p.Campaign.Runs; b > 0 {
		want := ShardRuns(b, p.Shard, p.Shards)
		if p.Runs > want || (p.Runs < want && p.Campaign.Time == "" && p.Failure == nil) {
			return fmt.Sprintf("shard %d/%d of a %d-run campaign ran %d runs, not %d", p.Shard, p.Shards, b, p.Runs, want)
		}
	}
	f := p.Failure
	switch {
	case f == nil && p.Violations > 0:
		return fmt.Sprintf("counts %d violations but holds no failure", p.Violations)
	case f == nil:
		return ""
	case p.Violations == 0:
		return fmt.Sprintf("holds a failure (run %d) but counts no violation", f.Run)
	case f.Run < 0 || f.Run%p.Shards != p.Shard:
		return fmt.Sprintf("holds the failure of run %d, which is not a run of shard %d/%d", f.Run, p.Shard, p.Shards)
	case f.CampaignSeed != p.Seed:
		return fmt.Sprintf("holds a failure of campaign seed %d, not %d", f.CampaignSeed, p.Seed)
	case !slices.Contains(p.Files, f.Source):
		return fmt.Sprintf("holds a failure of %q, not one of its files", f.Source)
	}
	return ""
}

// Merge combines the shard summaries of one campaign: every shard 0..N-1 exactly once, all
// of the same campaign (seed, shard count, files and Spec). Anything else is refused with a
// *MergeError naming the summary by names[i] (its file; "summary i+1" when names is
// short). The merged failure is the one of the lowest run index, as the unsharded campaign
// would report it.
func Merge(parts []*Summary, names []string) (*Summary, error) {
	if len(parts) == 0 {
		return nil, &MergeError{Part: -1, Reason: "no summaries"}
	}
	name := func(i int) string {
		if i < len(names) {
			return names[i]
		}
		return fmt.Sprintf("summary %d", i+1)
	}
	refuse := func(i int, format string, args ...any) error {
		return &MergeError{Part: i, Name: name(i), Reason: fmt.Sprintf(format, args...)}
	}
	first := parts[0]
	out := &Summary{Seed: first.Seed, Shards: first.Shards, Files: first.Files, Campaign: first.Campaign, Faults: map[string]int{}}
	seen := map[int]int{}
	for i, p := range parts {
		if reason := p.check(); reason != "" {
			return nil, refuse(i, "%s", reason)
		}
		if reason := sameCampaign(first, p); reason != "" {
			return nil, refuse(i, "shard %d/%d is of another campaign than %s (shard %d/%d): %s", p.Shard, p.Shards, name(0), first.Shard, first.Shards, reason)
		}
		if j, dup := seen[p.Shard]; dup {
			return nil, refuse(i, "shard %d/%d is given twice (%s is shard %d too)", p.Shard, p.Shards, name(j), p.Shard)
		}
		seen[p.Shard] = i
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
		var missing []string
		for s := range out.Shards {
			if _, ok := seen[s]; !ok {
				missing = append(missing, fmt.Sprint(s))
			}
			if len(missing) == 10 {
				missing = append(missing, "...")
				break
			}
		}
		return nil, &MergeError{Part: -1, Reason: fmt.Sprintf("%d of %d shards given; missing shard %s", len(seen), out.Shards, strings.Join(missing, ", "))}
	}
	if out.Seconds > 0 {
		out.RunsPerSecond = float64(out.Runs) / out.Seconds
		out.EventsPerSecond = float64(out.Events) / out.Seconds
	}
	return out, nil
}

// sameCampaign says how b differs from a's campaign, "" when it does not.
func sameCampaign(a, b *Summary) string {
	ca, cb := a.Campaign, b.Campaign
	switch {
	case a.Seed != b.Seed:
		return fmt.Sprintf("seed %d, not %d", b.Seed, a.Seed)
	case a.Shards != b.Shards:
		return fmt.Sprintf("%d shards, not %d", b.Shards, a.Shards)
	case !slices.Equal(a.Files, b.Files):
		return fmt.Sprintf("files %q, not %q", b.Files, a.Files)
	case ca.Scenarios != cb.Scenarios:
		return "the scenario files' contents or --until differ"
	case ca.Runs != cb.Runs || ca.Time != cb.Time:
		return fmt.Sprintf("budget --runs %d --time %q, not --runs %d --time %q", cb.Runs, cb.Time, ca.Runs, ca.Time)
	case !slices.Equal(ca.Kinds, cb.Kinds) || ca.MaxFaults != cb.MaxFaults:
		return fmt.Sprintf("faults %q (at most %d), not %q (at most %d)", cb.Kinds, cb.MaxFaults, ca.Kinds, ca.MaxFaults)
	case ca.Converge != cb.Converge:
		return fmt.Sprintf("--converge=%t, not %t", cb.Converge, ca.Converge)
	}
	return ""
}
