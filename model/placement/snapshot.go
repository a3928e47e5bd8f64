package placement

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
)

// PolicySnapshot is a ClusterSchedulingPolicySnapshot: an immutable copy of a placement's
// policy. NumberOfClusters lives outside the policy (the number-of-clusters annotation) so
// that scaling a PickN placement updates the snapshot instead of creating a new one.
type PolicySnapshot struct {
	Name      string
	Placement string
	Index     int
	Policy    *PlacementPolicy
	// PolicyHash is the sha-256 of the policy without numberOfClusters.
	PolicyHash string
	// NumberOfClusters is the kubernetes-fleet.io/number-of-clusters annotation (PickN only).
	NumberOfClusters int32
	// PlacementGeneration is the kubernetes-fleet.io/CRP-generation annotation.
	PlacementGeneration int64
}

// PolicySnapshotName is {placement}-{index}.
func PolicySnapshotName(placement string, index int) string {
	return placement + "-" + strconv.Itoa(index)
}

// PolicyHash hashes a policy without numberOfClusters, so a scale change keeps the hash.
func PolicyHash(p *PlacementPolicy) string {
	var c PlacementPolicy
	if p != nil {
		c = *p
	}
	c.NumberOfClusters = nil
	// A policy is plain data (no channels, funcs or cycles), so Marshal cannot fail.
	b, _ := json.Marshal(&c)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// SnapshotDecision says what to do with a placement's policy snapshots (SNAP-POLICY,
// CRP-POL-SCALE, DC-10).
type SnapshotDecision struct {
	// Create is a new latest snapshot; the previous one stops being the latest.
	Create *PolicySnapshot
	// SetNumberOfClusters updates the latest snapshot's annotation in place.
	SetNumberOfClusters *int32
}

// DecidePolicySnapshot compares a placement's policy with its latest snapshot (nil when
// there is none): a new snapshot when the policy minus numberOfClusters changed, an
// annotation update when only numberOfClusters did, nothing otherwise.
func DecidePolicySnapshot(placementName string, generation int64, policy *PlacementPolicy, latest *PolicySnapshot) SnapshotDecision {
	var n int32
	if policy != nil && policy.NumberOfClusters != nil {
		n = *policy.NumberOfClusters
	}
	hash := PolicyHash(policy)
	if latest == nil || latest.PolicyHash != hash {
		index := 0
		if latest != nil {
			index = latest.Index + 1
		}
		return SnapshotDecision{Create: &PolicySnapshot{
			Name: PolicySnapshotName(placementName, index), Placement: placementName, Index: index,
			Policy: policy, PolicyHash: hash, NumberOfClusters: n, PlacementGeneration: generation,
		}}
	}
	if latest.NumberOfClusters != n {
		return SnapshotDecision{SetNumberOfClusters: &n}
	}
	return SnapshotDecision{}
}
