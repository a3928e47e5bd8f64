package hub

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/triggers"
)

// bindingStore is a Store holding bindings only; the fan-in touches nothing else.
type bindingStore struct {
	Store
	bindings map[string]placement.Binding
}

func (s *bindingStore) Binding(name string) *placement.Binding {
	b, ok := s.bindings[name]
	if !ok {
		return nil
	}
	return &b
}

func (s *bindingStore) PutBinding(b placement.Binding) { s.bindings[b.Name] = b }

// recordingEnv counts the status changes fired.
type recordingEnv struct {
	Env
	now   time.Time
	fired int
}

func (e *recordingEnv) Now() time.Time                                          { return e.now }
func (e *recordingEnv) Record(string, string, string)                           {}
func (e *recordingEnv) Fire(c triggers.Change, _, _, _ string)                  { e.fired++ }
func (e *recordingEnv) RequeueAfter(triggers.Controller, string, time.Duration) {}

// TestReceiveWorkStatus: the fan-in copies Applied/Available, or DiffReported under
// ReportDiff, and the failed, drifted and diffed placements into the binding; a change in
// what drifted wakes the placement's status, a new observation of the same drift does not.
func TestReceiveWorkStatus(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cm := placement.ResourceIdentifier{Version: "v1", Kind: "ConfigMap", Name: "cm", Namespace: "app"}
	drift := func(seen time.Time, member string) []placement.DriftedPlacement {
		return []placement.DriftedPlacement{{ResourceIdentifier: cm, ObservationTime: seen, FirstDriftedObservedTime: t0,
			TargetClusterObservedGeneration: 2, ObservedDrifts: []placement.PatchDetail{{Path: "/data/k", ValueInHub: "a", ValueInMember: member}}}}
	}
	gen1 := int64(1)
	applied := condition.True(condition.TypeApplied, condition.ReasonAllWorkApplied, "applied")
	availableC := condition.True(condition.TypeAvailable, condition.ReasonAllWorkAvailable, "available")
	diffDone := condition.True(condition.TypeDiffReported, "DiffReportingCompleted", "done")
	types := func(b placement.Binding) []string {
		var out []string
		for _, c := range b.Conditions {
			out = append(out, c.Type)
		}
		return out
	}
	steps := []struct {
		name      string
		gen       int64
		report    placement.WorkReport
		wantTypes []string
		wantFired int
		check     func(t *testing.T, b placement.Binding)
	}{
		{name: "nothing reported yet is ignored", gen: 1, report: placement.WorkReport{}, wantTypes: []string{"RolloutStarted"}},
		{name: "a stale generation is ignored", gen: 0, report: placement.WorkReport{Applied: applied}, wantTypes: []string{"RolloutStarted"}},
		{name: "applied and available with a drift (Always, FullComparison)", gen: 1,
			report:    placement.WorkReport{Applied: applied, Available: &availableC, Drifted: drift(t0, "b")},
			wantTypes: []string{"RolloutStarted", "Applied", "Available"}, wantFired: 1,
			check: func(t *testing.T, b placement.Binding) {
				if diff := cmp.Diff(drift(t0, "b"), b.DriftedPlacements); diff != "" {
					t.Errorf("drifted placements (-want +got):\n%s", diff)
				}
			}},
		{name: "the same drift observed again wakes nobody", gen: 1,
			report:    placement.WorkReport{Applied: applied, Available: &availableC, Drifted: drift(t0.Add(time.Minute), "b")},
			wantTypes: []string{"RolloutStarted", "Applied", "Available"}, wantFired: 1,
			check: func(t *testing.T, b placement.Binding) {
				if got := b.DriftedPlacements[0].ObservationTime; !got.Equal(t0.Add(time.Minute)) {
					t.Errorf("observation time = %v, want the latest", got)
				}
			}},
		{name: "a different drift wakes the placement", gen: 1,
			report:    placement.WorkReport{Applied: applied, Available: &availableC, Drifted: drift(t0.Add(2*time.Minute), "c")},
			wantTypes: []string{"RolloutStarted", "Applied", "Available"}, wantFired: 2},
		{name: "ReportDiff: DiffReported replaces Applied and Available", gen: 1,
			report: placement.WorkReport{DiffReported: &diffDone, Diffed: []placement.DiffedPlacement{{ResourceIdentifier: cm, ObservationTime: t0,
				FirstDiffedObservedTime: t0, TargetClusterObservedGeneration: &gen1, ObservedDiffs: []placement.PatchDetail{{Path: "/data/k", ValueInHub: "a", ValueInMember: "b"}}}}},
			wantTypes: []string{"RolloutStarted", "DiffReported"}, wantFired: 3,
			check: func(t *testing.T, b placement.Binding) {
				if len(b.DriftedPlacements) != 0 || len(b.DiffedPlacements) != 1 || !condition.IsTrue(b.Conditions, condition.TypeDiffReported, 1) {
					t.Errorf("binding after a diff report: %+v", b)
				}
			}},
	}
	st := &bindingStore{bindings: map[string]placement.Binding{"b": {Name: "b", Placement: "crp", TargetCluster: "m1", Generation: 1,
		Conditions: []condition.Timed{{Condition: condition.True(condition.TypeRolloutStarted, "RolloutStarted", ""), ObservedGeneration: 1}}}}}
	env := &recordingEnv{now: t0}
	for _, s := range steps {
		ReceiveWorkStatus(st, env, "b", s.gen, []WorkStatus{{Work: "crp-work", Report: s.report}})
		b := st.bindings["b"]
		if diff := cmp.Diff(s.wantTypes, types(b)); diff != "" {
			t.Errorf("%s: condition types (-want +got):\n%s", s.name, diff)
		}
		if env.fired != s.wantFired {
			t.Errorf("%s: fired %d times in all, want %d", s.name, env.fired, s.wantFired)
		}
		if s.check != nil {
			s.check(t, b)
		}
	}
}

// TestBindingReport: the reports on a binding's Works fold into the binding's conditions as
// KubeFleet's work generator folds them, naming the first Work (by name) that holds the
// binding back.
func TestBindingReport(t *testing.T) {
	ptr := func(c condition.Condition) *condition.Condition { return &c }
	applied := condition.True(condition.TypeApplied, "AllManifestsApplied", "")
	notApplied := condition.False(condition.TypeApplied, "SomeManifestsAreNotApplied", "")
	available := ptr(condition.True(condition.TypeAvailable, "AllManifestsAvailable", ""))
	untracked := ptr(condition.True(condition.TypeAvailable, condition.ReasonWorkNotTrackable, ""))
	notAvailable := ptr(condition.False(condition.TypeAvailable, "SomeManifestsAreNotAvailable", ""))
	diffOK := ptr(condition.True(condition.TypeDiffReported, "AllManifestsDiffReported", ""))
	diffFailed := ptr(condition.False(condition.TypeDiffReported, "SomeManifestsHaveNotReportedDiff", ""))
	cm := func(name string) placement.ResourceIdentifier {
		return placement.ResourceIdentifier{Version: "v1", Kind: "ConfigMap", Name: name, Namespace: "app"}
	}
	failed := func(name string) placement.FailedPlacement {
		return placement.FailedPlacement{ResourceIdentifier: cm(name), Condition: condition.False(condition.TypeApplied, "ManifestApplyFailed", "x")}
	}
	cases := []struct {
		name  string
		works []WorkStatus
		want  placement.WorkReport
	}{
		{
			name:  "every work applied and available",
			works: []WorkStatus{{Work: "crp-work", Report: placement.WorkReport{Applied: applied, Available: available}}, {Work: "crp-0", Report: placement.WorkReport{Applied: applied, Available: available}}},
			want: placement.WorkReport{Applied: condition.True(condition.TypeApplied, "AllWorkHaveBeenApplied", "All corresponding work objects are applied"),
				Available: ptr(condition.True(condition.TypeAvailable, "AllWorkAreAvailable", "All corresponding work objects are available"))},
		},
		{
			name: "a work not yet reported holds Applied back, named",
			works: []WorkStatus{{Work: "crp-work", Report: placement.WorkReport{Applied: applied, Available: available}},
				{Work: "crp-work-envelope-1a2b", Report: placement.WorkReport{}}},
			want: placement.WorkReport{Applied: condition.False(condition.TypeApplied, "NotAllWorkHaveBeenApplied", "Work object crp-work-envelope-1a2b is not applied")},
		},
		{
			name: "the first failing work by name is named; failed manifests of all works are listed in work order",
			works: []WorkStatus{{Work: "crp-work", Report: placement.WorkReport{Applied: notApplied, Failed: []placement.FailedPlacement{failed("b")}}},
				{Work: "crp-0", Report: placement.WorkReport{Applied: notApplied, Failed: []placement.FailedPlacement{failed("a")}}}},
			want: placement.WorkReport{Applied: condition.False(condition.TypeApplied, "NotAllWorkHaveBeenApplied", "Work object crp-0 is not applied"),
				Failed: []placement.FailedPlacement{failed("a"), failed("b")}},
		},
		{
			name: "an unavailable work wins over an untrackable one",
			works: []WorkStatus{{Work: "a", Report: placement.WorkReport{Applied: applied, Available: untracked}},
				{Work: "b", Report: placement.WorkReport{Applied: applied, Available: notAvailable}}},
			want: placement.WorkReport{Applied: condition.True(condition.TypeApplied, "AllWorkHaveBeenApplied", "All corresponding work objects are applied"),
				Available: ptr(condition.False(condition.TypeAvailable, "NotAllWorkAreAvailable", "Work object b is not available"))},
		},
		{
			name: "an untrackable work makes the binding not trackable",
			works: []WorkStatus{{Work: "a", Report: placement.WorkReport{Applied: applied, Available: available}},
				{Work: "b", Report: placement.WorkReport{Applied: applied, Available: untracked}}},
			want: placement.WorkReport{Applied: condition.True(condition.TypeApplied, "AllWorkHaveBeenApplied", "All corresponding work objects are applied"),
				Available: ptr(condition.True(condition.TypeAvailable, "WorkNotTrackable", "The availability of work object b is not trackable"))},
		},
		{
			name:  "ReportDiff: one work failing to report its diff",
			works: []WorkStatus{{Work: "a", Report: placement.WorkReport{DiffReported: diffOK}}, {Work: "b", Report: placement.WorkReport{DiffReported: diffFailed}}},
			want:  placement.WorkReport{DiffReported: ptr(condition.False(condition.TypeDiffReported, "NotAllWorkHaveDiffReported", "Diff reporting failed in work object b"))},
		},
		{
			name:  "ReportDiff: every work reported",
			works: []WorkStatus{{Work: "a", Report: placement.WorkReport{DiffReported: diffOK}}},
			want:  placement.WorkReport{DiffReported: ptr(condition.True(condition.TypeDiffReported, "AllWorkHaveDiffReported", "Diff reporting has been completed in all corresponding work objects"))},
		},
	}
	for _, tc := range cases {
		if diff := cmp.Diff(tc.want, BindingReport(tc.works)); diff != "" {
			t.Errorf("%s: BindingReport (-want +got):\n%s", tc.name, diff)
		}
	}
}
