//go:build fleetsim_mutants

package fuzz

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMutantsKilledBySmallCampaign proves the mutation machinery end to end on a small
// campaign (40 runs of the library, seed 1): without a mutant it passes, and five planted
// bugs from five packages are each found by the invariant that guards them, with a shrunk
// scenario that replays. `make fuzz-mutants` runs the whole catalogue at CI's budget.
func TestMutantsKilledBySmallCampaign(t *testing.T) {
	targets := libraryTargets(t)
	opts := Options{Seed: 1, Runs: 40, Parallel: 2, Converge: true}
	clean, err := Campaign(targets, opts)
	if err != nil {
		t.Fatal(err)
	}
	if clean.Failure != nil {
		t.Fatalf("the campaign fails without a mutant: %s: %s", clean.Failure.Invariant, clean.Failure.Detail)
	}
	want := map[string]string{
		"rollout.maxUnavailablePlusOne":  "rolloutBudgets",
		"scheduler.pickNOneExtra":        "pickNWithinLimit",
		"staged.maxConcurrencyPlusOne":   "stagedMaxConcurrency",
		"units.conflictsOneDirection":    "unitConflicts",
		"eviction.pickAllBudgetAccepted": "rolloutBudgets",
	}
	var names []string
	for n := range want {
		names = append(names, n)
	}
	rs, err := Mutants(targets, opts, names, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range rs {
		got[r.Mutant.Name] = r.KilledBy()
		if f := r.Failure; f != nil {
			if !f.Replays {
				t.Errorf("%s: the shrunk scenario does not replay", r.Mutant.Name)
			}
			if f.Faults > f.OriginalFaults {
				t.Errorf("%s: shrinking grew the faults from %d to %d", r.Mutant.Name, f.OriginalFaults, f.Faults)
			}
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mutant → killed by (-want +got):\n%s", diff)
	}
	if s := Score(rs); s != 100 {
		t.Errorf("score %.0f %%, want 100 %%", s)
	}
}
