package convert_test

import (
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/apis/convert"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/override"
)

func TestClusterResourceOverrideRoundTrip(t *testing.T) {
	for _, f := range []string{"cro-example.yaml", "cro-1.yaml", "cro-delete.yaml", "cro-remove.yaml"} {
		t.Run(f, func(t *testing.T) {
			o := &v1beta1.ClusterResourceOverride{}
			load(t, f, o)
			m := convert.ClusterResourceOverrideToModel(o)
			// The model's own parser reads the documentation's manifest the same way.
			own, err := override.ParseClusterResourceOverride(readSample(t, f))
			if err != nil {
				t.Fatal(err)
			}
			diff(t, "ToModel vs override.ParseClusterResourceOverride", own, m)
			if errs := override.ValidateClusterResourceOverride(m); len(errs) > 0 {
				t.Errorf("the model refuses the documentation's override: %v", errs)
			}
			back := convert.ClusterResourceOverrideFromModel(m)
			diff(t, "FromModel(ToModel(o))", o, back, exact)
			diff(t, "ToModel(FromModel(m))", m, convert.ClusterResourceOverrideToModel(back))
			admit(t, back, nil)

			snap := override.DecideSnapshot[override.ClusterResourceOverrideSpec](m, nil)
			so := convert.ClusterResourceOverrideSnapshotFromModel(*snap, true, nil)
			admit(t, so, nil)
			if so.Name != o.Name+"-0" || so.Labels[v1beta1.OverrideTrackingLabel] != o.Name || so.Labels[v1beta1.IsLatestSnapshotLabel] != "true" {
				t.Errorf("snapshot metadata %+v", so.ObjectMeta)
			}
			sm, err := convert.ClusterResourceOverrideSnapshotToModel(so)
			if err != nil {
				t.Fatal(err)
			}
			diff(t, "snapshot ToModel(FromModel)", *snap, sm)
			diff(t, "snapshot FromModel(ToModel, base)", so, convert.ClusterResourceOverrideSnapshotFromModel(sm, true, so), exact)
			old := convert.ClusterResourceOverrideSnapshotFromModel(sm, false, so)
			admit(t, old, so) // superseded: a label changes, the immutable spec does not
		})
	}
}

func TestResourceOverrideRoundTrip(t *testing.T) {
	o := &v1beta1.ResourceOverride{}
	load(t, "ro-1.yaml", o)
	m := convert.ResourceOverrideToModel(o)
	own, err := override.ParseResourceOverride(readSample(t, "ro-1.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "ToModel vs override.ParseResourceOverride", own, m)
	back := convert.ResourceOverrideFromModel(m)
	diff(t, "FromModel(ToModel(o))", o, back, exact)
	admit(t, back, nil)

	m.Spec.Policy.OverrideRules[0].JSONPatchOverrides[0].Value = override.RawJSON(`{"env":"${MEMBER-CLUSTER-LABEL-KEY-environment}"}`)
	snap := override.DecideSnapshot[override.ResourceOverrideSpec](m, nil)
	so := convert.ResourceOverrideSnapshotFromModel(*snap, true, nil)
	admit(t, so, nil)
	if so.Namespace != "application-1" || so.Name != "ro-1-0" {
		t.Errorf("snapshot %s/%s", so.Namespace, so.Name)
	}
	sm, err := convert.ResourceOverrideSnapshotToModel(so)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "snapshot ToModel(FromModel)", *snap, sm)

	so.Labels[v1beta1.OverrideTrackingLabel] = "other"
	if _, err := convert.ResourceOverrideSnapshotToModel(so); err == nil || !strings.Contains(err.Error(), "ResourceOverrideSnapshot application-1/ro-1-0: the name is not {override}-{index} for override other") {
		t.Errorf("mislabelled snapshot: error %v", err)
	}
}
