package convert

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/placement"
)

func patchDetailsToModel(ps []v1beta1.PatchDetail) []placement.PatchDetail {
	return mapSlice(ps, func(p v1beta1.PatchDetail) placement.PatchDetail {
		return placement.PatchDetail{Path: p.Path, ValueInMember: p.ValueInMember, ValueInHub: p.ValueInHub}
	})
}

func patchDetailsFromModel(ps []placement.PatchDetail) []v1beta1.PatchDetail {
	return mapSlice(ps, func(p placement.PatchDetail) v1beta1.PatchDetail {
		return v1beta1.PatchDetail{Path: p.Path, ValueInMember: p.ValueInMember, ValueInHub: p.ValueInHub}
	})
}

func driftedPlacementToModel(d v1beta1.DriftedResourcePlacement) placement.DriftedPlacement {
	return placement.DriftedPlacement{
		ResourceIdentifier:              resourceIdentifierToModel(d.ResourceIdentifier),
		ObservationTime:                 d.ObservationTime.Time,
		FirstDriftedObservedTime:        d.FirstDriftedObservedTime.Time,
		TargetClusterObservedGeneration: d.TargetClusterObservedGeneration,
		ObservedDrifts:                  patchDetailsToModel(d.ObservedDrifts),
	}
}

func diffedPlacementToModel(d v1beta1.DiffedResourcePlacement) placement.DiffedPlacement {
	return placement.DiffedPlacement{
		ResourceIdentifier:              resourceIdentifierToModel(d.ResourceIdentifier),
		ObservationTime:                 d.ObservationTime.Time,
		FirstDiffedObservedTime:         d.FirstDiffedObservedTime.Time,
		TargetClusterObservedGeneration: copyPtr(d.TargetClusterObservedGeneration),
		ObservedDiffs:                   patchDetailsToModel(d.ObservedDiffs),
	}
}

// driftedPlacementsFromModel converts drifted placements; an entry base lists for the same
// resource keeps base's envelope type.
func driftedPlacementsFromModel(ds []placement.DriftedPlacement, base []v1beta1.DriftedResourcePlacement) []v1beta1.DriftedResourcePlacement {
	return mapSlice(ds, func(d placement.DriftedPlacement) v1beta1.DriftedResourcePlacement {
		return v1beta1.DriftedResourcePlacement{
			ResourceIdentifier:              identifierFromModelKeeping(d.ResourceIdentifier, mapSlice(base, func(b v1beta1.DriftedResourcePlacement) v1beta1.ResourceIdentifier { return b.ResourceIdentifier })),
			ObservationTime:                 metav1.Time{Time: d.ObservationTime},
			FirstDriftedObservedTime:        metav1.Time{Time: d.FirstDriftedObservedTime},
			TargetClusterObservedGeneration: d.TargetClusterObservedGeneration,
			ObservedDrifts:                  patchDetailsFromModel(d.ObservedDrifts),
		}
	})
}

// diffedPlacementsFromModel converts diffed placements as driftedPlacementsFromModel does.
func diffedPlacementsFromModel(ds []placement.DiffedPlacement, base []v1beta1.DiffedResourcePlacement) []v1beta1.DiffedResourcePlacement {
	return mapSlice(ds, func(d placement.DiffedPlacement) v1beta1.DiffedResourcePlacement {
		return v1beta1.DiffedResourcePlacement{
			ResourceIdentifier:              identifierFromModelKeeping(d.ResourceIdentifier, mapSlice(base, func(b v1beta1.DiffedResourcePlacement) v1beta1.ResourceIdentifier { return b.ResourceIdentifier })),
			ObservationTime:                 metav1.Time{Time: d.ObservationTime},
			FirstDiffedObservedTime:         metav1.Time{Time: d.FirstDiffedObservedTime},
			TargetClusterObservedGeneration: copyPtr(d.TargetClusterObservedGeneration),
			ObservedDiffs:                   patchDetailsFromModel(d.ObservedDiffs),
		}
	})
}

// identifierFromModelKeeping converts an identifier, keeping the envelope type of the same
// identifier in base.
func identifierFromModelKeeping(id placement.ResourceIdentifier, base []v1beta1.ResourceIdentifier) v1beta1.ResourceIdentifier {
	if i := slices.IndexFunc(base, func(b v1beta1.ResourceIdentifier) bool {
		return semantic.DeepEqual(resourceIdentifierToModel(b), id)
	}); i >= 0 {
		return *base[i].DeepCopy()
	}
	return resourceIdentifierFromModel(id)
}
