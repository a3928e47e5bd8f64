package override

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"

	"github.com/fleetsim/fleetsim/model/placement"
)

// Spec is the spec of either override kind.
type Spec interface {
	ClusterResourceOverrideSpec | ResourceOverrideSpec
}

// Override is a *ClusterResourceOverride or a *ResourceOverride as DecideSnapshot reads it.
type Override[S Spec] interface {
	GetName() string
	GetNamespace() string
	OverrideSpec() S
}

// Snapshot is a ClusterResourceOverrideSnapshot or ResourceOverrideSnapshot (SNAP-OVERRIDE):
// an immutable copy of an override's spec, named {override}-{index}, index from 0. A
// ResourceOverrideSnapshot lives in its override's namespace.
type Snapshot[S Spec] struct {
	// Name is {Override}-{Index}; it is what placement status lists as applicable.
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
	// Override names the owner (the OverrideTrackingLabel).
	Override string `json:"override"`
	Index    int    `json:"index"`
	// Spec is the snapshot's overrideSpec: a deep copy, sharing nothing with the override.
	Spec S `json:"overrideSpec"`
	// Hash is the overrideHash: hex sha-256 of the spec's canonical JSON.
	Hash string `json:"overrideHash"`
}

// CROSnapshot is a ClusterResourceOverrideSnapshot.
type CROSnapshot = Snapshot[ClusterResourceOverrideSpec]

// ROSnapshot is a ResourceOverrideSnapshot.
type ROSnapshot = Snapshot[ResourceOverrideSpec]

// NamespacedName is the snapshot's namespace and name, as applicableResourceOverrides lists
// them (the namespace is empty for a ClusterResourceOverrideSnapshot).
func (s *Snapshot[S]) NamespacedName() placement.NamespacedName {
	return placement.NamespacedName{Namespace: s.Namespace, Name: s.Name}
}

// SnapshotName is {override}-{index}.
func SnapshotName(override string, index int) string {
	return override + "-" + strconv.Itoa(index)
}

// SpecHash is the hex sha-256 of a spec's canonical JSON: object keys sorted at every level
// (also inside patch values) and insignificant whitespace dropped, so that re-encoding the
// same spec never yields a new snapshot.
func SpecHash[S Spec](spec S) string {
	sum := sha256.Sum256(canonicalJSON(spec))
	return hex.EncodeToString(sum[:])
}

func canonicalJSON(v any) []byte {
	// Specs are plain data, so encoding only fails on a patch value that is not JSON, which
	// validation refuses; such a spec hashes its encoding error.
	b, err := json.Marshal(v)
	if err != nil {
		return []byte(err.Error())
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var generic any
	if err := dec.Decode(&generic); err != nil {
		return b
	}
	c, err := json.Marshal(generic)
	if err != nil {
		return b
	}
	return c
}

// copySpec deep-copies a spec through JSON, which every field round-trips (nil and empty
// cluster selectors stay distinct).
func copySpec[S Spec](spec S) S {
	var c S
	b, err := json.Marshal(spec)
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil {
		// Only a patch value that is not JSON gets here; validation refuses it. Keep the
		// spec rather than lose it.
		return spec
	}
	return c
}

// DecideSnapshot compares an override with its latest snapshot (nil when it has none) and
// returns the snapshot to create: the first one (index 0) or the next index when the spec's
// hash changed, nil when it did not. Creating a snapshot makes it the latest; the driver flips
// IsLatestSnapshotLabel on the previous one.
func DecideSnapshot[S Spec](o Override[S], latest *Snapshot[S]) *Snapshot[S] {
	spec := o.OverrideSpec()
	hash := SpecHash(spec)
	if latest != nil && latest.Hash == hash {
		return nil
	}
	index := 0
	if latest != nil {
		index = latest.Index + 1
	}
	return &Snapshot[S]{
		Name:      SnapshotName(o.GetName(), index),
		Namespace: o.GetNamespace(),
		Override:  o.GetName(),
		Index:     index,
		Spec:      copySpec(spec),
		Hash:      hash,
	}
}
