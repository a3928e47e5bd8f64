package whatif

// The report: per affected placement the clusters added, kept and removed with the
// scheduler's reasons, each cluster's manifests as a diff against what it holds now, the
// predicted timeline; the invariants and budgets the change breaks.

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
)

// Report is a preview's outcome.
type Report struct {
	Snapshot string   `json:"snapshot"`
	Changes  []string `json:"changes"`
	// ChangeAt is the simulated instant the change was made (after the fleet settled);
	// times in the report count from it (+1m30s).
	ChangeAt string `json:"changeAt"`
	Horizon  string `json:"horizon"`
	// Safe: no invariant and no user budget is broken.
	Safe       bool              `json:"safe"`
	Placements []PlacementReport `json:"placements"`
	Invariants []Broken          `json:"invariantsBroken"`
	Budgets    []Broken          `json:"budgetsBroken"`
	// Warnings: what makes the prediction less certain (the simulator not reproducing the
	// snapshot, an invariant already broken before the change).
	Warnings []string `json:"warnings,omitempty"`
}

// PlacementReport is one placement the change affects.
type PlacementReport struct {
	Name string `json:"name"`
	// Created or Deleted by the change.
	Created bool            `json:"created,omitempty"`
	Deleted bool            `json:"deleted,omitempty"`
	Added   []ClusterChange `json:"added"`
	Kept    []ClusterChange `json:"kept"`
	Removed []ClusterChange `json:"removed"`
	// Manifests are the clusters whose manifests change, with the diff.
	Manifests []ManifestDiff `json:"manifests"`
	Timeline  Timeline       `json:"timeline"`
}

// ClusterChange is a cluster and the scheduler's reason for it.
type ClusterChange struct {
	Cluster string `json:"cluster"`
	Reason  string `json:"reason"`
}

// ManifestDiff is what a cluster receives after the change against what it holds now, as
// a unified diff of the manifests' YAML (after overrides), with the manifests after.
type ManifestDiff struct {
	Cluster string     `json:"cluster"`
	Diff    string     `json:"diff"`
	After   []Manifest `json:"after"`
}

// Timeline is a placement's predicted rollout after the change.
type Timeline struct {
	// ToAvailable is how long until the placement holds its final clusters, all
	// available, for good ("never within the horizon" otherwise).
	ToAvailable string `json:"toAvailable"`
	Available   bool   `json:"available"`
	// PeakUnavailable is the most clusters the placement was short of at once (sampled
	// every second): how many fewer ready bindings it had than before the change, counting
	// no more than the clusters it holds in the end.
	PeakUnavailable int `json:"peakUnavailable"`
	// BudgetWaits are the times the rollout waited for maxUnavailable, maxSurge or a
	// disruption budget.
	BudgetWaits []Wait `json:"budgetWaits,omitempty"`
}

// Wait is one rollout wait.
type Wait struct {
	At      string `json:"at"`
	Binding string `json:"binding"`
	Reason  string `json:"reason"`
}

// Broken is an invariant or a user budget the change breaks.
type Broken struct {
	Name   string `json:"name"`
	At     string `json:"at,omitempty"`
	Detail string `json:"detail"`
}

// comparePlacements lists the placements whose clusters, binding states or manifests
// differ before and after, in name order.
func comparePlacements(before, after State, rec *recorder) []PlacementReport {
	names := sortedKeys(before.Placements)
	for _, n := range sortedKeys(after.Placements) {
		if _, ok := before.Placements[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	var out []PlacementReport
	for _, name := range names {
		b, a := before.Placements[name], after.Placements[name]
		pr := PlacementReport{Name: name, Created: b == nil, Deleted: a == nil, Added: []ClusterChange{}, Kept: []ClusterChange{}, Removed: []ClusterChange{}, Manifests: []ManifestDiff{}}
		changed := b == nil || a == nil
		clusters := map[string]bool{}
		for _, c := range before.Clusters(name) {
			clusters[c] = true
		}
		for _, c := range after.Clusters(name) {
			clusters[c] = true
		}
		for _, c := range sortedKeys(clusters) {
			bc, ac := before.cluster(name, c), after.cluster(name, c)
			switch {
			case bc == nil:
				pr.Added = append(pr.Added, ClusterChange{Cluster: c, Reason: ac.Reason})
				changed = true
			case ac == nil:
				reason := "the placement is deleted"
				if a != nil {
					reason = "unscheduled"
					if r, ok := rec.unscheduled[name+"/"+c]; ok {
						reason = "unscheduled: " + r
					} else if r, ok := a.reasons[c]; ok {
						reason = "unscheduled: " + r
					}
				}
				pr.Removed = append(pr.Removed, ClusterChange{Cluster: c, Reason: reason})
				changed = true
			default:
				pr.Kept = append(pr.Kept, ClusterChange{Cluster: c, Reason: ac.Reason})
				changed = changed || bc.Binding != ac.Binding
			}
			var bm, am []Manifest
			if bc != nil {
				bm = bc.Manifests
			}
			if ac != nil {
				am = ac.Manifests
			}
			if d := diffManifests(c+" (now)", c+" (after the change)", bm, am); d != "" {
				pr.Manifests = append(pr.Manifests, ManifestDiff{Cluster: c, Diff: d, After: am})
				changed = true
			}
		}
		if !changed {
			continue
		}
		pr.Timeline = rec.timeline(name, before, after)
		out = append(out, pr)
	}
	if out == nil {
		out = []PlacementReport{}
	}
	return out
}

func manifestsText(ms []Manifest) string {
	var b strings.Builder
	for _, m := range ms {
		fmt.Fprintf(&b, "# %s\n%s---\n", m.ID, m.YAML)
	}
	return b.String()
}

func diffManifests(from, to string, before, after []Manifest) string {
	bt, at := manifestsText(before), manifestsText(after)
	if bt == at {
		return ""
	}
	d, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(bt), B: difflib.SplitLines(at),
		FromFile: from, ToFile: to, Context: 3,
	})
	if err != nil {
		return fmt.Sprintf("cannot diff: %v", err)
	}
	return d
}

// checkBudgets checks the user's budgets: --max-unavailable against each affected
// placement's peak, --must-keep against the clusters each placement loses.
func checkBudgets(ps []PlacementReport, before, after State, opts Options) []Broken {
	out := []Broken{}
	if opts.MaxUnavailable >= 0 {
		for _, p := range ps {
			if p.Timeline.PeakUnavailable > opts.MaxUnavailable {
				out = append(out, Broken{Name: "max-unavailable", Detail: fmt.Sprintf("placement %s has %d cluster(s) unavailable at once, more than %d", p.Name, p.Timeline.PeakUnavailable, opts.MaxUnavailable)})
			}
		}
	}
	for _, c := range opts.MustKeep {
		for _, name := range sortedKeys(before.Placements) {
			if before.cluster(name, c) != nil && after.cluster(name, c) == nil {
				out = append(out, Broken{Name: "must-keep", Detail: fmt.Sprintf("placement %s loses cluster %s", name, c)})
			}
		}
	}
	return out
}

// WriteText renders the report for people.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "What-if on %s: %s (change made at %s of the simulated run, followed for %s)\n", r.Snapshot, strings.Join(r.Changes, ", "), r.ChangeAt, r.Horizon)
	for _, wn := range r.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", wn)
	}
	if len(r.Placements) == 0 {
		b.WriteString("\nNo placement changes.\n")
	}
	for _, p := range r.Placements {
		what := ""
		switch {
		case p.Created:
			what = " (created)"
		case p.Deleted:
			what = " (deleted)"
		}
		fmt.Fprintf(&b, "\nPlacement %s%s\n", p.Name, what)
		for _, g := range []struct {
			label string
			cs    []ClusterChange
		}{{"added", p.Added}, {"kept", p.Kept}, {"removed", p.Removed}} {
			for _, c := range g.cs {
				fmt.Fprintf(&b, "  %-8s %s: %s\n", g.label, c.Cluster, c.Reason)
			}
		}
		tl := p.Timeline
		fmt.Fprintf(&b, "  timeline: available after %s, peak unavailable %d, %d budget wait(s)\n", tl.ToAvailable, tl.PeakUnavailable, len(tl.BudgetWaits))
		for _, wt := range tl.BudgetWaits {
			fmt.Fprintf(&b, "    %s %s: %s\n", wt.At, wt.Binding, wt.Reason)
		}
		for _, m := range p.Manifests {
			fmt.Fprintf(&b, "  manifests on %s:\n", m.Cluster)
			for _, l := range strings.SplitAfter(strings.TrimRight(m.Diff, "\n"), "\n") {
				fmt.Fprintf(&b, "    %s", l)
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("\n")
	for _, i := range r.Invariants {
		fmt.Fprintf(&b, "BROKEN invariant %s at %s: %s\n", i.Name, i.At, i.Detail)
	}
	for _, bd := range r.Budgets {
		fmt.Fprintf(&b, "BROKEN budget %s: %s\n", bd.Name, bd.Detail)
	}
	if r.Safe {
		b.WriteString("Safe: no invariant or budget broken.\n")
	} else {
		b.WriteString("Not safe.\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
