package plan

// The bounds of a plan: every number a plan file gives, and everything a plan makes from
// them (points, rendered scenarios, samples), is bounded here, so that a bad plan is refused
// by Parse with its file, line and field, in bounded time and memory, instead of hanging,
// exhausting memory or wrapping around. scenarios/plan/README.md and `fleetsim plan --help`
// state them; the scenario a point renders is bounded further by scenarios.Limits.

import "github.com/fleetsim/fleetsim/scenarios"

// MaxPlanBytes is the largest plan file, and the largest scenarioFile template, a plan
// reads. The plans here are at most 4 KB; YAML parsing takes up to about a hundred bytes of
// memory per byte of input (a long flow list of small numbers), so 1 MiB costs at most
// about 120 MB, where the 64 MiB every fleetsim input may have (input.MaxFileBytes) could
// take 8 GB.
const MaxPlanBytes = 1 << 20

// MaxPoints is the most points a sweep may have: the product of its axes' lengths, with
// small: applied or not. It is counted with overflow-safe arithmetic before any point is
// made. Every point is rendered and validated before the first run (about a millisecond for
// the plans here) and is a row of every table of the report, so 10,000 points validate in
// seconds and already make tables no one reads.
const MaxPoints = 10_000

// MaxRepetitions is the most seeds per point (repetitions, small.repetitions): with
// MaxPoints, a plan has at most 10^8 runs, far from overflowing a run index.
const MaxRepetitions = 10_000

// MaxRenderedBytes is the largest scenario a point's template may render. The largest plan
// here (kubefleet-scale at 1,000 members) renders 0.5 MB; 8 MiB is sixteen times that and
// keeps a rendered scenario's YAML tree, parsed once per run in flight, well under a
// gigabyte. A template that writes more is stopped when it crosses the bound.
const MaxRenderedBytes = 8 << 20

// MaxTemplateSteps bounds the work of rendering one point: every iteration of a range (over
// seq, a number, a list or a map), every call of a defined template and every value seq
// makes is a step. A template that takes more is stopped, so a loop that writes nothing
// (`{{range 1000000}}{{range 1000000}}{{end}}{{end}}`, a template calling itself twice) ends
// too. A million steps is ten per member of a 100,000-member fleet (kubefleet-scale at full
// size takes 5,000) and about a second of rendering.
const MaxTemplateSteps = 1_000_000

// MaxSamplesPerRun is the most time-series samples one run takes (the scenario's duration /
// sample). A day sampled every 10 s is 8,640; a sample is about 100 bytes of a run's JSON,
// and a plot has fewer pixels across than that. Without it, `sample: 1s` over a 2,000,000 h
// scenario would schedule 7.2 × 10^9 samples before the run starts.
const MaxSamplesPerRun = 10_000

// The hub model's bounds are the scenario's (scenarios.HubMax*), since every point renders a
// scenario whose hub: section the scenario parser checks again.
const (
	MaxWorkers          = scenarios.HubMaxWorkers
	MinQPS              = scenarios.HubMinQPS
	MaxQPS              = scenarios.HubMaxQPS
	MaxBurst            = scenarios.HubMaxBurst
	MaxCallsPerDecision = scenarios.HubMaxCallsPerDecision
	MaxAPILatency       = scenarios.HubMaxDecisionTime
)

// MaxShardBytes is the largest shard file plan merge reads: a shard holds each of its runs'
// samples and sketches (up to about 1.5 MB a run at full size), so a shard of a hundred or more
// of large runs is rightly far over the 64 MiB most inputs may have.
const MaxShardBytes = 256 << 20
