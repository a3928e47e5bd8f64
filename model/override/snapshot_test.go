package override_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetsim/fleetsim/model/override"
	"github.com/fleetsim/fleetsim/model/placement"
)

// TestDecideSnapshot walks one ClusterResourceOverride through edits: a snapshot is created
// exactly when the spec changes (SNAP-OVERRIDE, OVR-SNAPSHOT-AND-ROLLOUT).
func TestDecideSnapshot(t *testing.T) {
	o := parseCRO(t, croRemoveVerb)
	type want struct {
		create bool
		name   string
		index  int
	}
	steps := []struct {
		name   string
		change func(o *override.ClusterResourceOverride)
		want   want
	}{
		{name: "first snapshot is {name}-0", change: func(*override.ClusterResourceOverride) {}, want: want{true, "example-cro-0", 0}},
		{name: "no change, no snapshot", change: func(*override.ClusterResourceOverride) {}},
		{name: "metadata changes do not count", change: func(o *override.ClusterResourceOverride) {
			o.Labels = map[string]string{"team": "a"}
			o.Finalizers = []string{override.CleanupFinalizer}
			o.Generation = 7
		}},
		{name: "a patch change makes {name}-1", change: func(o *override.ClusterResourceOverride) {
			rule0(o).JSONPatchOverrides[0].Path = "/rules/0/verbs/1"
		}, want: want{true, "example-cro-1", 1}},
		{name: "adding a patch makes {name}-2", change: func(o *override.ClusterResourceOverride) {
			rule0(o).JSONPatchOverrides = append(rule0(o).JSONPatchOverrides, override.JSONPatchOverride{
				Operator: override.JSONPatchOpAdd, Path: "/metadata/labels", Value: override.RawJSON(`{"a":"1","b":"2"}`)})
		}, want: want{true, "example-cro-2", 2}},
		{name: "same value, other key order and spacing", change: func(o *override.ClusterResourceOverride) {
			rule0(o).JSONPatchOverrides[1].Value = override.RawJSON(`{ "b": "2", "a": "1" }`)
		}},
		{name: "an empty selector replacing a nil one is a change", change: func(o *override.ClusterResourceOverride) {
			o.Spec.Policy.OverrideRules = append(o.Spec.Policy.OverrideRules, override.OverrideRule{OverrideType: override.DeleteOverrideType})
		}, want: want{true, "example-cro-3", 3}},
		{name: "nil -> empty selector", change: func(o *override.ClusterResourceOverride) {
			o.Spec.Policy.OverrideRules[1].ClusterSelector = &placement.ClusterSelector{ClusterSelectorTerms: []placement.ClusterSelectorTerm{}}
		}, want: want{true, "example-cro-4", 4}},
		{name: "placement reference change counts", change: func(o *override.ClusterResourceOverride) { o.Spec.Placement = nil },
			want: want{true, "example-cro-5", 5}},
	}
	var latest *override.CROSnapshot
	for _, s := range steps {
		s.change(o)
		got := override.DecideSnapshot(o, latest)
		if (got != nil) != s.want.create {
			t.Fatalf("DecideSnapshot(%s) = %v, want create=%v", s.name, got, s.want.create)
		}
		if got == nil {
			continue
		}
		if got.Name != s.want.name || got.Index != s.want.index || got.Override != "example-cro" || got.Namespace != "" {
			t.Errorf("DecideSnapshot(%s) = {Name: %s, Index: %d, Override: %s, Namespace: %q}, want {Name: %s, Index: %d, Override: example-cro}",
				s.name, got.Name, got.Index, got.Override, got.Namespace, s.want.name, s.want.index)
		}
		if got.Hash != override.SpecHash(o.Spec) || len(got.Hash) != 64 {
			t.Errorf("DecideSnapshot(%s).Hash = %q, want SpecHash(spec) (64 hex digits) %q", s.name, got.Hash, override.SpecHash(o.Spec))
		}
		if override.SpecHash(got.Spec) != got.Hash {
			t.Errorf("DecideSnapshot(%s): the copied spec hashes to %s, want %s", s.name, override.SpecHash(got.Spec), got.Hash)
		}
		latest = got
	}
}

// TestSnapshotIsACopy: editing the override after a snapshot leaves the snapshot alone, and
// the copy keeps nil and empty cluster selectors apart.
func TestSnapshotIsACopy(t *testing.T) {
	o := parseCRO(t, cro1Namespace)
	o.Spec.Policy.OverrideRules = append(o.Spec.Policy.OverrideRules, override.OverrideRule{OverrideType: override.DeleteOverrideType})
	snap := override.DecideSnapshot(o, nil)
	want := parseCRO(t, cro1Namespace).Spec
	want.Policy.OverrideRules = append(want.Policy.OverrideRules, override.OverrideRule{OverrideType: override.DeleteOverrideType})

	rule := &o.Spec.Policy.OverrideRules[0]
	rule.JSONPatchOverrides[0].Value.Raw[2] = 'X'
	rule.ClusterSelector.ClusterSelectorTerms = append(rule.ClusterSelector.ClusterSelectorTerms, placement.ClusterSelectorTerm{})
	o.Spec.ClusterResourceSelectors[0].Name = "other"

	if diff := cmp.Diff(want, snap.Spec); diff != "" {
		t.Errorf("DecideSnapshot(cro-1).Spec changed with the override (-want +got):\n%s", diff)
	}
	if cs := snap.Spec.Policy.OverrideRules[0].ClusterSelector; cs == nil || cs.ClusterSelectorTerms == nil || len(cs.ClusterSelectorTerms) != 0 {
		t.Errorf("DecideSnapshot(cro-1): rule 0 selector = %#v, want empty (select all), not nil", cs)
	}
	if cs := snap.Spec.Policy.OverrideRules[1].ClusterSelector; cs != nil {
		t.Errorf("DecideSnapshot(cro-1): rule 1 selector = %#v, want nil (select none)", cs)
	}
}

func TestResourceOverrideSnapshot(t *testing.T) {
	o := parseRO(t, migrationRO)
	snap := override.DecideSnapshot(o, nil)
	if diff := cmp.Diff(placement.NamespacedName{Namespace: "test-app", Name: "ro-1-0"}, snap.NamespacedName()); diff != "" {
		t.Errorf("DecideSnapshot(ro-1).NamespacedName() mismatch (-want +got):\n%s", diff)
	}
	if snap.Override != "ro-1" || snap.Index != 0 {
		t.Errorf("DecideSnapshot(ro-1) = {Override: %s, Index: %d}, want {ro-1, 0}", snap.Override, snap.Index)
	}
	if again := override.DecideSnapshot(o, snap); again != nil {
		t.Errorf("DecideSnapshot(ro-1, unchanged) = %v, want nil", again)
	}
	o.Spec.Policy.OverrideRules[0].JSONPatchOverrides[0].Value = override.RawJSON("5")
	next := override.DecideSnapshot(o, snap)
	if next == nil || next.Name != "ro-1-1" || next.Namespace != "test-app" {
		t.Errorf("DecideSnapshot(ro-1, replicas 5) = %v, want ro-1-1 in test-app", next)
	}
}
