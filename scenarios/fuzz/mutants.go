//go:build fleetsim_mutants

package fuzz

// Mutation testing of the campaign (`make fuzz-mutants`): the campaign runs once per
// planted bug of model/mutant, and a mutant is killed when the campaign fails (an
// invariant or the convergence check is violated, or a run cannot run at all).

import (
	"fmt"
	"strings"
	"time"

	"github.com/fleetsim/fleetsim/model/mutant"
)

// MutantResult is what one mutant's campaign found.
type MutantResult struct {
	Mutant mutant.Mutant
	Killed bool
	// Runs the campaign ran before it stopped (all of the budget for a survivor).
	Runs int
	// Failure is the shrunk failing schedule of a kill by an invariant; Err the run error of
	// a kill by a run that could not run (a panic, a scenario the mutant broke).
	Failure *Failure
	Err     string
	Seconds float64
}

// Mutants runs the campaign o over the targets once per named mutant (every mutant of the
// catalogue when names is empty), one after the other, each with that mutant on. each,
// when set, sees every result as it comes.
func Mutants(targets []*Target, o Options, names []string, each func(MutantResult)) ([]MutantResult, error) {
	if len(names) == 0 {
		for _, m := range mutant.All {
			names = append(names, m.Name)
		}
	}
	var out []MutantResult
	for _, n := range names {
		m := mutant.Find(n)
		if m == nil {
			return out, fmt.Errorf("mutant %q is not one of the %d in the catalogue", n, len(mutant.All))
		}
		r, err := runMutant(targets, o, *m)
		if err != nil {
			return out, err
		}
		if each != nil {
			each(r)
		}
		out = append(out, r)
	}
	return out, nil
}

func runMutant(targets []*Target, o Options, m mutant.Mutant) (MutantResult, error) {
	restore, err := mutant.Set(m.Name)
	if err != nil {
		return MutantResult{}, err
	}
	defer restore()
	start := time.Now()
	r := MutantResult{Mutant: m}
	sum, err := Campaign(targets, o)
	r.Seconds = time.Since(start).Seconds()
	switch {
	case err != nil:
		r.Killed, r.Err = true, err.Error()
	default:
		r.Runs = sum.Runs
		r.Failure = sum.Failure
		r.Killed = sum.Failure != nil
	}
	return r, nil
}

// KilledBy names what killed a mutant: the invariant, or "run error".
func (r MutantResult) KilledBy() string {
	switch {
	case r.Failure != nil:
		return r.Failure.Invariant
	case r.Err != "":
		return "run error"
	}
	return ""
}

// Score is the share of killed mutants, in percent.
func Score(rs []MutantResult) float64 {
	if len(rs) == 0 {
		return 0
	}
	k := 0
	for _, r := range rs {
		if r.Killed {
			k++
		}
	}
	return 100 * float64(k) / float64(len(rs))
}

// FailureFile is the file name a kill's shrunk scenario is written to.
func (r MutantResult) FailureFile() string {
	return "mutant-" + strings.ReplaceAll(r.Mutant.Name, ".", "-") + ".yaml"
}
