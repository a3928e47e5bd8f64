package hub

// Inline serving: a placement-wide decision runs, on its own state and within its one
// flush, the controllers its changes wake for the same placement (the placement chain,
// then the work generator for the bindings it changed). Separate because it is the
// production hub's own policy with its own bound (inlineRounds), which decision.go calls
// once and served.go accounts for.

import (
	"slices"

	mhub "github.com/fleetsim/fleetsim/model/hub"
	"github.com/fleetsim/fleetsim/model/triggers"
)

// placementChain is the order in which the placement-wide controllers wake each other for
// one placement: a new policy snapshot wakes the scheduler, new bindings the rollout.
var placementChain = []triggers.Controller{triggers.PolicySnapshot, triggers.Scheduler, triggers.Rollout}

// runInline runs, inside a placement-wide decision about placement key, the controllers
// later in placementChain that its changes wake for the same placement, on the state the
// earlier ones left, and then the work generator for the bindings they
// changed (generateWorksInline). A new placement is then snapshotted, scheduled, bound and
// given its Works in one decision and one flush instead of three decisions a queue hop
// apart, each writing the bindings again; the simulator runs the same controllers in the
// same order, one event each. Changes fired after a controller's inline run wake it as
// usual. The decision holds the placement's lock exclusively (rule 3 of consistency.go),
// and its scope loads every binding and Work of the placement.
//
// The work generator's changes (the bindings' Overridden and WorkSynchronized conditions)
// wake the chain again, and so may the chain's own: the chain then runs again, each
// controller for the wakes fired since it last ran, up to inlineRounds times, so that the
// decision's one flush holds the placement's status with its Works (not a second decision
// a queue hop later, which would write the placement's status again, and hold the
// placement's lock while its first reports come in).
//
// Queued wakes the decision serves as well (due) run too: a chain controller with a queued
// wake runs in the first round it comes to, a binding's queued work generator in the first
// generateWorksInline.
func runInline(ctrls *mhub.Controllers, st *state, env *decisionEnv, c triggers.Controller, key string, due dueWakes) *inlined {
	in := &inlined{placement: key, wide: map[triggers.Controller]int{}, works: map[string]int{}}
	i := slices.Index(placementChain, c)
	if i < 0 {
		// An eviction or a staged update run: the chain's wakes go to the queue.
		generateWorksInline(ctrls, st, env, in.works, due.works)
		return in
	}
	in.wide[c] = 0 // its own wakes wait for the next round
	for round := range inlineRounds {
		ran := false
		for _, next := range placementChain {
			if round == 0 && slices.Index(placementChain, next) <= i {
				continue
			}
			last, done := in.wide[next]
			if (!done && due.wide[next]) || wakes(env.fired[last:], next, key) {
				in.wide[next] = len(env.fired)
				ctrls.Reconcile(next, key)
				ran = true
			}
		}
		if !generateWorksInline(ctrls, st, env, in.works, due.works) && !ran {
			break
		}
	}
	return in
}

// inlineRounds bounds how often one decision runs the chain again: a new placement needs
// two (the chain, then the status of what the work generator made).
const inlineRounds = 3

// wakes tells whether any of the fired changes wakes controller c for placement p.
func wakes(fired []firing, c triggers.Controller, p string) bool {
	for _, f := range fired {
		for _, t := range triggers.For(f.change) {
			if t.Controller == c && ((t.Scope == triggers.OwningPlacement && f.placement == p) || (t.Scope == triggers.ThisObject && f.key == p)) {
				return true
			}
		}
	}
	return false
}

// generateWorksInline runs the work generator, inside a placement-wide decision (scheduler,
// rollout, eviction, staged update run), for every binding the decision changed (created,
// bound, moved to a new snapshot), as the trigger table would next: a rollout then writes
// each binding's spec and status once, with its Work, instead of a status write of its own
// and another by a work generator decision a queue hop later, and a scheduler's new
// bindings need no decision each to find nothing to generate yet. A binding the decision
// deleted is left to its own decision.
//
// served[b] is the number of fired changes the work generator has served for binding b: it
// runs again for b only on a change fired after that (its own changes to b are served).
// It says whether it ran.
func generateWorksInline(ctrls *mhub.Controllers, st *state, env *decisionEnv, served map[string]int, queued []string) bool {
	ran := false
	for i := 0; i < len(env.fired); i++ { // the work generator may fire more
		f := env.fired[i]
		if n, ok := served[f.key]; f.change != triggers.BindingChanged || (ok && i < n) || st.bindings[f.key] == nil {
			continue
		}
		ctrls.Reconcile(triggers.WorkGenerator, f.key)
		served[f.key] = len(env.fired)
		ran = true
	}
	for _, b := range queued { // once each, for wakes queued before the decision read
		if _, ok := served[b]; ok || st.bindings[b] == nil {
			continue
		}
		ctrls.Reconcile(triggers.WorkGenerator, b)
		served[b] = len(env.fired)
		ran = true
	}
	return ran
}
