package agentk8s

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fleetsim/fleetsim/model/placement"
)

// fakeMember is a member cluster in memory for RunWork: objects by group/kind/namespace/name,
// with scripted refusals, read errors and write conflicts, recording what the loop did.
type fakeMember struct {
	objects map[string]*unstructured.Unstructured
	// refuse and unreadable name manifests (by name) whose applies the member refuses and
	// whose reads fail; conflicts is how many writes conflict before one succeeds.
	refuse, unreadable map[string]bool
	conflicts          int
	// writes lists the written objects' keys in order; backoffs the attempts waited after.
	writes   []string
	backoffs []int
}

func key(o *unstructured.Unstructured) string {
	gvk := o.GroupVersionKind()
	return gvk.Group + "/" + gvk.Kind + "/" + o.GetNamespace() + "/" + o.GetName()
}

func (f *fakeMember) Admit(m *unstructured.Unstructured) error {
	if f.refuse[m.GetName()] {
		return errors.New("refused")
	}
	return nil
}

// DryRun refuses what Admit refuses.
func (f *fakeMember) DryRun(m *unstructured.Unstructured) error { return f.Admit(m) }

func (f *fakeMember) Get(m *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if f.unreadable[m.GetName()] {
		return nil, errors.New("unreadable")
	}
	if o := f.objects[key(m)]; o != nil {
		return o.DeepCopy(), nil
	}
	return nil, nil
}

func (f *fakeMember) Write(d Decision) (*unstructured.Unstructured, error) {
	k := key(d.Object)
	f.writes = append(f.writes, k)
	if f.conflicts > 0 {
		f.conflicts--
		return nil, apierrors.NewConflict(schema.GroupResource{Resource: "things"}, d.Object.GetName(), errors.New("changed"))
	}
	o := d.Object.DeepCopy()
	o.SetGeneration(1)
	if live := f.objects[k]; live != nil {
		o.SetGeneration(live.GetGeneration() + 1)
	}
	if f.objects == nil {
		f.objects = map[string]*unstructured.Unstructured{}
	}
	f.objects[k] = o
	return o.DeepCopy(), nil
}

func (f *fakeMember) Backoff(attempt int) error {
	f.backoffs = append(f.backoffs, attempt)
	return nil
}

func (f *fakeMember) Available(_, live *unstructured.Unstructured, t Tracking) (Tracking, bool) {
	return t, Available(live)
}

// edit changes spec.replicas of the member's object of manifest m, as someone on the member
// would.
func (f *fakeMember) edit(t *testing.T, m *unstructured.Unstructured, replicas int64) {
	t.Helper()
	o := f.objects[key(m)]
	if o == nil {
		t.Fatalf("no %s on the member to edit", key(m))
	}
	if err := unstructured.SetNestedField(o.Object, replicas, "spec", "replicas"); err != nil {
		t.Fatal(err)
	}
	o.SetGeneration(o.GetGeneration() + 1)
}

// TestRunWorkFirstSeenByGroup: two manifests of the same kind name and object name in
// different API groups (the Deployment of apps and a CRD's Deployment in example.com) keep
// independent first-seen times of their drifts and diffs. A first-seen key without the
// group shares one time between them, and a round where one has no finding forgets the
// other's.
func TestRunWorkFirstSeenByGroup(t *testing.T) {
	const appsDoc = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: app}\nspec: {replicas: 2}"
	const crdDoc = "apiVersion: example.com/v1\nkind: Deployment\nmetadata: {name: web, namespace: app}\nspec: {replicas: 2}"
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	t1, t2 := t0.Add(time.Minute), t0.Add(2*time.Minute)
	type since struct{ Drift, Diff time.Time }
	type round struct {
		at time.Time
		// before changes the member before the round; manifests are apps, then example.com.
		before func(t *testing.T, f *fakeMember, apps, crd *unstructured.Unstructured)
		want   map[string]since
	}
	cases := []struct {
		name     string
		strategy *placement.ApplyStrategy
		rounds   []round
	}{
		{
			name:     "diffs under ReportDiff",
			strategy: &placement.ApplyStrategy{Type: placement.ReportDiff},
			rounds: []round{
				{at: t1, before: func(_ *testing.T, f *fakeMember, _, crd *unstructured.Unstructured) {
					// Only the example.com Deployment is on the member, as the hub has it.
					f.objects = map[string]*unstructured.Unstructured{key(crd): crd.DeepCopy()}
				}, want: map[string]since{"apps": {Diff: t1}, "example.com": {}}},
				{at: t2, before: func(t *testing.T, f *fakeMember, _, crd *unstructured.Unstructured) {
					f.edit(t, crd, 5)
				}, want: map[string]since{"apps": {Diff: t1}, "example.com": {Diff: t2}}},
			},
		},
		{
			name:     "drifts under IfNotDrifted",
			strategy: &placement.ApplyStrategy{WhenToApply: WhenToApplyIfNotDrifted},
			rounds: []round{
				{at: t0, want: map[string]since{"apps": {}, "example.com": {}}},
				{at: t1, before: func(t *testing.T, f *fakeMember, apps, _ *unstructured.Unstructured) {
					f.edit(t, apps, 5)
				}, want: map[string]since{"apps": {Drift: t1}, "example.com": {}}},
				{at: t2, before: func(t *testing.T, f *fakeMember, _, crd *unstructured.Unstructured) {
					f.edit(t, crd, 7)
				}, want: map[string]since{"apps": {Drift: t1}, "example.com": {Drift: t2}}},
			},
		},
	}
	for _, tc := range cases {
		apps, crd := obj(t, appsDoc), obj(t, crdDoc)
		w := Work{Name: "crp-work", Manifests: []*unstructured.Unstructured{apps, crd}, Owner: owner, Strategy: tc.strategy}
		f := &fakeMember{}
		var seen Sightings
		for i, r := range tc.rounds {
			if r.before != nil {
				r.before(t, f, apps, crd)
			}
			run := RunWork(w, f, &seen, r.at)
			got := map[string]since{}
			for _, res := range run.Results {
				got[res.Identifier.Group] = since{Drift: res.DriftSince, Diff: res.DiffSince}
			}
			if diff := cmp.Diff(r.want, got); diff != "" {
				t.Errorf("%s, round %d: first seen by group (-want +got):\n%s", tc.name, i, diff)
			}
		}
	}
}

// TestRunWork covers the loop around Decide: the apply order, a member's refusal, read
// errors, write conflicts (decided again after a backoff, up to WriteAttempts; never for a
// server-side apply), and when a run is settled.
func TestRunWork(t *testing.T) {
	const (
		cm    = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, namespace: app}\ndata: {k: a}"
		ns    = "apiVersion: v1\nkind: Namespace\nmetadata: {name: app}"
		crd   = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}"
		exNs  = "apiVersion: example.com/v1\nkind: Namespace\nmetadata: {name: other, namespace: app}"
		deplo = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: app}\nspec: {replicas: 1}"
	)
	type outcome struct {
		Writes   []string
		Backoffs []int
		// Failures are Reason: message of each manifest that failed, in manifest order.
		Failures []string
		Settled  bool
	}
	conflict := `Operation cannot be fulfilled on things "cm": changed`
	cases := []struct {
		name     string
		docs     []string
		strategy *placement.ApplyStrategy
		member   fakeMember
		want     outcome
	}{
		{
			name: "namespaces and CRDs first, by API group",
			docs: []string{cm, exNs, crd, ns},
			want: outcome{Writes: []string{"apiextensions.k8s.io/CustomResourceDefinition//widgets.example.com", "/Namespace//app",
				"/ConfigMap/app/cm", "example.com/Namespace/app/other"},
				// A CRD is tracked: until the member's API server establishes it the agent
				// looks again.
				Settled: false},
		},
		{
			name:   "a refused manifest is not written",
			docs:   []string{cm},
			member: fakeMember{refuse: map[string]bool{"cm": true}},
			want:   outcome{Failures: []string{ReasonManifestApplyFailed + ": Failed to apply manifest: refused"}},
		},
		{
			name:     "a refusal does not stop the comparison of a missing object (nothing to dry-run)",
			docs:     []string{cm},
			strategy: &placement.ApplyStrategy{Type: placement.ReportDiff},
			member:   fakeMember{refuse: map[string]bool{"cm": true}},
			want:     outcome{Settled: true},
		},
		{
			// TSG-DIFF-FAIL: PartialComparison judges the dry-run apply's result, so a
			// member that refuses the dry run fails the diff report (DiffReported False).
			name:     "a refused dry run fails the comparison of an existing object",
			docs:     []string{cm},
			strategy: &placement.ApplyStrategy{Type: placement.ReportDiff},
			member:   fakeMember{refuse: map[string]bool{"cm": true}, objects: map[string]*unstructured.Unstructured{"/ConfigMap/app/cm": obj(t, cm)}},
			want:     outcome{Failures: []string{": Failed to dry-run apply the manifest: refused"}},
		},
		{
			name:     "FullComparison compares without a dry run",
			docs:     []string{cm},
			strategy: &placement.ApplyStrategy{Type: placement.ReportDiff, ComparisonOption: FullComparison},
			member:   fakeMember{refuse: map[string]bool{"cm": true}, objects: map[string]*unstructured.Unstructured{"/ConfigMap/app/cm": obj(t, cm)}},
			want:     outcome{Settled: true},
		},
		{
			name:   "a read error fails the apply",
			docs:   []string{cm},
			member: fakeMember{unreadable: map[string]bool{"cm": true}},
			want:   outcome{Failures: []string{ReasonManifestApplyFailed + ": Failed to apply manifest: unreadable"}},
		},
		{
			name:     "a read error fails the comparison",
			docs:     []string{cm},
			strategy: &placement.ApplyStrategy{Type: placement.ReportDiff},
			member:   fakeMember{unreadable: map[string]bool{"cm": true}},
			want:     outcome{Failures: []string{": Failed to read the object: unreadable"}},
		},
		{
			name:   "conflicts are decided again after a backoff",
			docs:   []string{cm},
			member: fakeMember{conflicts: 2},
			want:   outcome{Writes: []string{"/ConfigMap/app/cm", "/ConfigMap/app/cm", "/ConfigMap/app/cm"}, Backoffs: []int{0, 1}, Settled: true},
		},
		{
			name:   "a write that keeps conflicting fails",
			docs:   []string{cm},
			member: fakeMember{conflicts: 100},
			want: outcome{Writes: []string{"/ConfigMap/app/cm", "/ConfigMap/app/cm", "/ConfigMap/app/cm", "/ConfigMap/app/cm", "/ConfigMap/app/cm", "/ConfigMap/app/cm"},
				Backoffs: []int{0, 1, 2, 3, 4}, Failures: []string{ReasonManifestApplyFailed + ": Failed to apply manifest: the object kept changing: " + conflict}},
		},
		{
			name:     "a server-side apply conflict is not retried",
			docs:     []string{cm},
			strategy: &placement.ApplyStrategy{Type: placement.ServerSideApply},
			member:   fakeMember{conflicts: 1},
			want:     outcome{Writes: []string{"/ConfigMap/app/cm"}, Failures: []string{ReasonConflictWithOtherApplier + ": Failed to apply manifest: " + conflict}},
		},
		{
			name: "a trackable object not yet available is not settled",
			docs: []string{deplo},
			want: outcome{Writes: []string{"apps/Deployment/app/web"}},
		},
	}
	for _, tc := range cases {
		w := Work{Name: "crp-work", Owner: owner, Strategy: tc.strategy}
		for _, d := range tc.docs {
			w.Manifests = append(w.Manifests, obj(t, d))
		}
		f := tc.member
		var seen Sightings
		run := RunWork(w, &f, &seen, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		got := outcome{Writes: f.writes, Backoffs: f.backoffs, Settled: run.Settled}
		for _, res := range run.Results {
			if msg := res.ApplyError + res.DiffError; msg != "" {
				got.Failures = append(got.Failures, res.Reason+": "+msg)
			}
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
		if len(run.Results) != len(w.Manifests) || len(run.Live) != len(w.Manifests) {
			t.Errorf("%s: %d results and %d live objects for %d manifests", tc.name, len(run.Results), len(run.Live), len(w.Manifests))
		}
		for i, res := range run.Results {
			if want := w.Manifests[i].GetName(); res.Identifier.Name != want {
				t.Errorf("%s: result %d is of %s, want %s (manifest order)", tc.name, i, res.Identifier.Name, want)
			}
		}
	}
}

// TestSightingsRetainWorks: the findings of a gone Work are forgotten, the others kept.
func TestSightingsRetainWorks(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cm := obj(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, namespace: app}")
	s := Sightings{}
	for _, w := range []string{"kept", "gone"} {
		s.FirstSeen(sightingKey(w, cm)+"|drift", true, t0)
	}
	s.RetainWorks(func(w string) bool { return w == "kept" })
	want := Sightings{"kept|/ConfigMap/app/cm|drift": t0}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("RetainWorks (-want +got):\n%s", diff)
	}
}
