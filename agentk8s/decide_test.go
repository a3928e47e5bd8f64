package agentk8s

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fleetsim/fleetsim/model/placement"
)

var owner = metav1.OwnerReference{APIVersion: AppliedWorkAPIVersion, Kind: AppliedWorkKind, Name: "crp-work", UID: "u1"}

const cmDoc = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, namespace: app}\ndata: {k: a}"

// appliedBy is what the agent's last apply of manifest left on the member, with edit applied.
func appliedBy(t *testing.T, manifest string, edit func(*unstructured.Unstructured)) *unstructured.Unstructured {
	t.Helper()
	d := Decide(Input{Manifest: obj(t, manifest), Owner: owner})
	if d.Op != OpCreate {
		t.Fatalf("first apply: op %q, want Create", d.Op)
	}
	live := d.Object.DeepCopy()
	live.SetGeneration(1)
	live.SetResourceVersion("7")
	if edit != nil {
		edit(live)
	}
	return live
}

func strategy(typ placement.ApplyType, cmp, when, takeover string) *placement.ApplyStrategy {
	return &placement.ApplyStrategy{Type: typ, ComparisonOption: cmp, WhenToApply: when, WhenToTakeOver: takeover}
}

// TestDecide covers APPLY-TAKEOVER, APPLY-COMPARISON, APPLY-WHENTOAPPLY, APPLY-REPORTDIFF and
// APPLY-COOWNERSHIP: the write asked for, the failure reason, and the drifts or diffs found.
func TestDecide(t *testing.T) {
	edited := func(u *unstructured.Unstructured) { _ = unstructured.SetNestedField(u.Object, "b", "data", "k") }
	extra := func(u *unstructured.Unstructured) { _ = unstructured.SetNestedField(u.Object, "x", "data", "extra") }
	preexisting := func(data string) *unstructured.Unstructured {
		return obj(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, namespace: app, generation: 1}\ndata: "+data)
	}
	changed := obj(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, namespace: app}\ndata: {k: new}")
	cases := []struct {
		name       string
		manifest   *unstructured.Unstructured
		live       *unstructured.Unstructured
		strategy   *placement.ApplyStrategy
		wantOp     Op
		wantReason string
		wantDrifts []placement.PatchDetail
		wantDiffs  []placement.PatchDetail
	}{
		{name: "missing: create", live: nil, wantOp: OpCreate},
		{name: "managed and unchanged: nothing to do", live: appliedBy(t, cmDoc, nil), wantOp: OpNone},
		{name: "managed, hub changed: update", manifest: changed, live: appliedBy(t, cmDoc, nil), wantOp: OpUpdate},
		{name: "takeover Always", live: preexisting("{k: b}"), strategy: strategy("", "", "", TakeOverAlways), wantOp: OpUpdate},
		{name: "takeover Never", live: preexisting("{k: a}"), strategy: strategy("", "", "", TakeOverNever), wantReason: ReasonNotTakenOver},
		{name: "takeover IfNoDiff with a managed difference", live: preexisting("{k: b}"), strategy: strategy("", "", "", TakeOverIfNoDiff),
			wantReason: ReasonFailedToTakeOver, wantDiffs: []placement.PatchDetail{{Path: "/data/k", ValueInHub: "a", ValueInMember: "b"}}},
		{name: "takeover IfNoDiff, partial, extra unmanaged field: taken over", live: preexisting("{k: a, extra: x}"),
			strategy: strategy("", PartialComparison, "", TakeOverIfNoDiff), wantOp: OpUpdate},
		{name: "takeover IfNoDiff, full, extra field: refused", live: preexisting("{k: a, extra: x}"), strategy: strategy("", FullComparison, "", TakeOverIfNoDiff),
			wantReason: ReasonFailedToTakeOver, wantDiffs: []placement.PatchDetail{{Path: "/data/extra", ValueInMember: "x"}}},
		{name: "IfNotDrifted, managed field edited", live: appliedBy(t, cmDoc, edited), strategy: strategy("", "", WhenToApplyIfNotDrifted, ""),
			wantReason: ReasonFoundDrifts, wantDrifts: []placement.PatchDetail{{Path: "/data/k", ValueInHub: "a", ValueInMember: "b"}}},
		{name: "IfNotDrifted, partial, unmanaged field: ignored", live: appliedBy(t, cmDoc, extra), strategy: strategy("", "", WhenToApplyIfNotDrifted, ""), wantOp: OpNone},
		{name: "IfNotDrifted, full, unmanaged field: drift", live: appliedBy(t, cmDoc, extra), strategy: strategy("", FullComparison, WhenToApplyIfNotDrifted, ""),
			wantReason: ReasonFoundDrifts, wantDrifts: []placement.PatchDetail{{Path: "/data/extra", ValueInMember: "x"}}},
		{name: "IfNotDrifted: a new hub version is applied anyway", manifest: changed, live: appliedBy(t, cmDoc, edited),
			strategy: strategy("", "", WhenToApplyIfNotDrifted, ""), wantOp: OpUpdate},
		{name: "Always, partial, managed drift: overwritten, not reported", live: appliedBy(t, cmDoc, edited), wantOp: OpUpdate},
		{name: "Always, full, unmanaged drift: reported, no error", live: appliedBy(t, cmDoc, extra), strategy: strategy("", FullComparison, "", ""),
			wantOp: OpNone, wantDrifts: []placement.PatchDetail{{Path: "/data/extra", ValueInMember: "x"}}},
		{name: "ReportDiff: differences, no write", live: preexisting("{k: b}"), strategy: strategy(placement.ReportDiff, "", "", TakeOverNever),
			wantDiffs: []placement.PatchDetail{{Path: "/data/k", ValueInHub: "a", ValueInMember: "b"}}},
		{name: "ReportDiff: a missing object is a whole-object difference", live: nil, strategy: strategy(placement.ReportDiff, "", "", ""),
			wantDiffs: []placement.PatchDetail{{Path: "/", ValueInHub: WholeObject}}},
		{name: "ServerSideApply", live: preexisting("{k: b}"), strategy: strategy(placement.ServerSideApply, "", "", ""), wantOp: OpServerSideApply},
		{name: "owned by a controller, no co-ownership", live: func() *unstructured.Unstructured {
			u := preexisting("{k: a}")
			u.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "d", UID: "x"}})
			return u
		}(), wantReason: ReasonAlreadyOwnedByOthers},
		{name: "managed by another placement", live: func() *unstructured.Unstructured {
			u := preexisting("{k: a}")
			u.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: AppliedWorkAPIVersion, Kind: AppliedWorkKind, Name: "other-work", UID: "y"}})
			return u
		}(), wantReason: ReasonConflictBetweenPlacements},
	}
	for _, tc := range cases {
		m := tc.manifest
		if m == nil {
			m = obj(t, cmDoc)
		}
		d := Decide(Input{Manifest: m, Live: tc.live, Owner: owner, Strategy: tc.strategy})
		if d.Op != tc.wantOp {
			t.Errorf("%s: op %q, want %q", tc.name, d.Op, tc.wantOp)
		}
		if d.Result.Reason != tc.wantReason || (tc.wantReason == "") != (d.Result.ApplyError == "") {
			t.Errorf("%s: reason %q (error %q), want %q", tc.name, d.Result.Reason, d.Result.ApplyError, tc.wantReason)
		}
		if diff := cmp.Diff(tc.wantDrifts, d.Result.Drifts); diff != "" {
			t.Errorf("%s: drifts (-want +got):\n%s", tc.name, diff)
		}
		if diff := cmp.Diff(tc.wantDiffs, d.Result.Diffs); diff != "" {
			t.Errorf("%s: diffs (-want +got):\n%s", tc.name, diff)
		}
		if d.Op != OpNone {
			if refs := d.Object.GetOwnerReferences(); len(refs) == 0 || refs[len(refs)-1] != owner {
				t.Errorf("%s: written object's owners %v lack the AppliedWork", tc.name, refs)
			}
			if d.Object.GetAnnotations()[SpecHashAnnotation] != Hash(m) {
				t.Errorf("%s: written object lacks the spec hash", tc.name)
			}
		}
	}
}

// TestThreeWayMerge: a field the hub removed is removed from the member, a field another
// writer added stays, and the update keeps the live object's resourceVersion.
func TestThreeWayMerge(t *testing.T) {
	v1 := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, namespace: app, labels: {a: one}}\ndata: {k: a, gone: g}"
	live := appliedBy(t, v1, func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, "theirs", "metadata", "labels", "other")
	})
	v2 := obj(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, namespace: app, labels: {a: two}}\ndata: {k: a}")
	d := Decide(Input{Manifest: v2, Live: live, Owner: owner})
	if d.Op != OpUpdate {
		t.Fatalf("op %q, want Update", d.Op)
	}
	data, _, _ := unstructured.NestedStringMap(d.Object.Object, "data")
	labels := d.Object.GetLabels()
	if diff := cmp.Diff(map[string]string{"k": "a"}, data); diff != "" {
		t.Errorf("data (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"a": "two", "other": "theirs"}, labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if d.Object.GetResourceVersion() != "7" {
		t.Errorf("resourceVersion %q, want the live one", d.Object.GetResourceVersion())
	}
}

// TestSummariseStrategy: ReportDiff reports DiffReported with the diffed manifests and no
// Applied; drifts found under Always are listed with Applied True.
func TestSummariseStrategy(t *testing.T) {
	g := int64(3)
	cm := placement.ResourceIdentifier{Version: "v1", Kind: "ConfigMap", Name: "cm", Namespace: "app"}
	diffs := []placement.PatchDetail{{Path: "/data/k", ValueInHub: "a", ValueInMember: "b"}}
	r := SummariseStrategy("crp-work", placement.ReportDiff, []ManifestResult{{Identifier: cm, ReportDiff: true, Diffs: diffs, MemberGeneration: &g}})
	if r.Applied.Type != "" || r.DiffReported == nil || r.DiffReported.Reason != ReasonWorkAllManifestsDiffReported || len(r.Diffed) != 1 || *r.Diffed[0].TargetClusterObservedGeneration != 3 {
		t.Errorf("ReportDiff summary = %+v", r)
	}
	r = SummariseStrategy("crp-work", "", []ManifestResult{{Identifier: cm, Drifts: diffs, MemberGeneration: &g}})
	if r.Applied.Status != metav1.ConditionTrue || len(r.Drifted) != 1 || r.Drifted[0].TargetClusterObservedGeneration != 3 {
		t.Errorf("Always+Full drift summary = %+v", r)
	}
}

// TestThreeWayMergeKeepsIntegers: the merged object holds integers as int64, as unstructured
// objects do, so typed readers (replicas) still work after a client-side apply.
func TestThreeWayMergeKeepsIntegers(t *testing.T) {
	v1 := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: app}\nspec: {replicas: 2}"
	live := appliedBy(t, v1, nil)
	v2 := obj(t, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: app}\nspec: {replicas: 3}")
	d := Decide(Input{Manifest: v2, Live: live, Owner: owner})
	if d.Op != OpUpdate {
		t.Fatalf("op %q, want Update", d.Op)
	}
	if n, ok, err := unstructured.NestedInt64(d.Object.Object, "spec", "replicas"); !ok || err != nil || n != 3 {
		t.Errorf("spec.replicas = %d (found %v, %v), want int64 3", n, ok, err)
	}
}
