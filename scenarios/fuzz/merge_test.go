package fuzz

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestMergeRefusesShardsThatDoNotBelongTogether: Merge takes every shard of one campaign
// exactly once and refuses anything else with a *MergeError naming the summary at fault:
// another scenario set, seed, budget, fault kinds or shard count; a duplicate, out-of-range
// or missing shard; a summary whose failure and counts disagree.
func TestMergeRefusesShardsThatDoNotBelongTogether(t *testing.T) {
	quick, taints := load(t, "quickstart.yaml", 0), load(t, "taints-tolerations.yaml", 0)
	shard := func(tg *Target, i, n int, o Options) *Summary {
		t.Helper()
		o.Runs, o.Shard, o.Shards, o.Parallel = max(o.Runs, 4), i, n, 2
		s, err := Campaign([]*Target{tg}, o)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a0, a1 := shard(quick, 0, 2, Options{}), shard(quick, 1, 2, Options{})
	if _, err := Merge([]*Summary{a0, a1}, nil); err != nil {
		t.Fatalf("Merge of the two shards of one campaign: %v", err)
	}
	edit := func(s *Summary, f func(*Summary)) *Summary {
		c := *s
		f(&c)
		return &c
	}
	failure := &Failure{CampaignSeed: a1.Seed, Run: 3, Source: a1.Files[0], Invariant: "rolloutBudgets"}
	type refusal struct {
		Part         int
		Name, Reason string
	}
	for _, tc := range []struct {
		name  string
		parts []*Summary
		want  refusal
	}{
		{"shard 1 of another scenario", []*Summary{a0, shard(taints, 1, 2, Options{})}, refusal{1, "b.json", "is of another campaign than a.json (shard 0/2): files"}},
		{"shard 1 of another seed", []*Summary{a0, shard(quick, 1, 2, Options{Seed: 9})}, refusal{1, "b.json", "seed 9, not 0"}},
		{"shard 1 of another budget", []*Summary{a0, shard(quick, 1, 2, Options{Runs: 6})}, refusal{1, "b.json", "budget --runs 6"}},
		{"shard 1 with other faults", []*Summary{a0, shard(quick, 1, 2, Options{Kinds: []Kind{Crash}})}, refusal{1, "b.json", `faults ["crash"]`}},
		{"shard 1 with another --until", []*Summary{a0, shard(load(t, "quickstart.yaml", time.Hour), 1, 2, Options{})}, refusal{1, "b.json", "the scenario files' contents or --until differ"}},
		{"shard 1 of three", []*Summary{a0, shard(quick, 1, 3, Options{})}, refusal{1, "b.json", "3 shards, not 2"}},
		{"a shard twice", []*Summary{a0, a1, a0}, refusal{2, "c.json", "shard 0/2 is given twice (a.json is shard 0 too)"}},
		{"shards 5 and 7 of 2", []*Summary{edit(a0, func(s *Summary) { s.Shard = 5 }), edit(a1, func(s *Summary) { s.Shard = 7 })}, refusal{0, "a.json", "shard 5 is not one of the 2 shards 0..1"}},
		{"a missing shard", []*Summary{a1}, refusal{-1, "", "1 of 2 shards given; missing shard 0"}},
		{"not a summary", []*Summary{{}}, refusal{0, "a.json", "shards is 0: not a shard summary"}},
		{"a failure counted as no violation", []*Summary{a0, edit(a1, func(s *Summary) { s.Failure = failure })}, refusal{1, "b.json", "holds a failure (run 3) but counts no violation"}},
		{"violations without a failure", []*Summary{a0, edit(a1, func(s *Summary) { s.Violations = 1 })}, refusal{1, "b.json", "counts 1 violations but holds no failure"}},
		{"another shard's failure", []*Summary{a0, edit(a1, func(s *Summary) {
			s.Violations, s.Failure = 1, &Failure{CampaignSeed: a1.Seed, Run: 2, Source: a1.Files[0]}
		})}, refusal{1, "b.json", "holds the failure of run 2, which is not a run of shard 1/2"}},
		{"more runs than the budget gives", []*Summary{a0, edit(a1, func(s *Summary) { s.Runs = 3 })}, refusal{1, "b.json", "shard 1/2 of a 4-run campaign ran 3 runs, not 2"}},
		{"fewer runs, nothing stopping it", []*Summary{a0, edit(a1, func(s *Summary) { s.Runs = 1 })}, refusal{1, "b.json", "ran 1 runs, not 2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Merge(tc.parts, []string{"a.json", "b.json", "c.json"})
			var me *MergeError
			if !errors.As(err, &me) {
				t.Fatalf("Merge = %+v, %v; want a *MergeError", m, err)
			}
			got := refusal{me.Part, me.Name, me.Reason}
			if strings.Contains(got.Reason, tc.want.Reason) {
				got.Reason = tc.want.Reason
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Merge refusal (-want +got):\n%s", diff)
			}
		})
	}
	// A shard that found a violation merges, and the merged summary carries its failure.
	b1 := edit(a1, func(s *Summary) { s.Runs, s.Violations, s.Failure = 1, 1, failure })
	m, err := Merge([]*Summary{a0, b1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.Failure != failure || m.Violations != 1 {
		t.Errorf("merged failure %+v, %d violations; want shard 1's", m.Failure, m.Violations)
	}
}
