package placement

import "strconv"

// PolicySnapshot is a ClusterSchedulingPolicySnapshot: an immutable copy of a placement's
// policy. NumberOfClusters lives outside the policy (the number-of-clusters annotation) so
// that scaling a PickN placement updates the snapshot instead of creating a new one.
type PolicySnapshot struct {
	Name      string
	Placement string
	Index     int
	Policy    *PlacementPolicy
	// NumberOfClusters is the kubernetes-fleet.io/number-of-clusters annotation (PickN only).
	NumberOfClusters int32
	// PlacementGeneration is the kubernetes-fleet.io/CRP-generation annotation.
	PlacementGeneration int64
}

// PolicySnapshotName is {placement}-{index}.
func PolicySnapshotName(placement string, index int) string {
	return placement + "-" + strconv.Itoa(index)
}

