package kinds_test

import (
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/apis/kinds"
)

func TestStored(t *testing.T) {
	for _, tc := range []struct {
		apiVersion, kind, want, why string
	}{
		{"placement.kubernetes-fleet.io/v1", "ClusterResourcePlacement", "placement.kubernetes-fleet.io/v1beta1", ""},
		{"placement.kubernetes-fleet.io/v1alpha1", "ResourceOverride", "placement.kubernetes-fleet.io/v1beta1", ""},
		{"placement.kubernetes-fleet.io/v1alpha1", "ClusterResourcePlacementEviction", "placement.kubernetes-fleet.io/v1beta1", ""},
		{"cluster.kubernetes-fleet.io/v1", "MemberCluster", "cluster.kubernetes-fleet.io/v1beta1", ""},
		{"apps/v1", "Deployment", "apps/v1", ""},
		{"v1", "Namespace", "v1", ""},
		{"placement.kubernetes-fleet.io/v1alpha1", "ClusterResourcePlacement", "", "not at v1alpha1"},
		{"placement.kubernetes-fleet.io/v1", "ClusterResourcePlacementDisruptionBudget", "", "not at v1"},
		{"placement.kubernetes-fleet.io/v1beta1", "ResourcePlacement", "", "no kind ResourcePlacement"},
	} {
		got, ok, why := kinds.Stored(tc.apiVersion, tc.kind)
		if got != tc.want || ok != (tc.why == "") || !strings.Contains(why, tc.why) {
			t.Errorf("Stored(%s, %s) = %q, %t, %q; want %q, %q", tc.apiVersion, tc.kind, got, ok, why, tc.want, tc.why)
		}
	}
	for _, k := range kinds.Kinds() {
		if k.Versions[0] != "v1" && k.Versions[0] != kinds.StorageVersion {
			t.Errorf("%s: the preferred version is %s", k.Kind, k.Versions[0])
		}
		found := false
		for _, v := range k.Versions {
			found = found || v == kinds.StorageVersion
		}
		if !found {
			t.Errorf("%s is not served at the storage version", k.Kind)
		}
	}
}
