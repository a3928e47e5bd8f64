package convert

import (
	"encoding/json"
	"fmt"
	"k8s.io/utils/ptr"
	"slices"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/resources"
	"github.com/fleetsim/fleetsim/model/status"
)

// PolicySnapshotToModel reads a ClusterSchedulingPolicySnapshot: its name, placement
// (parent-CRP label), index (policy-index label), policy and hash, and the CRP-generation and
// number-of-clusters annotations. KubeFleet keeps a PickN policy's numberOfClusters in the
// annotation only (DC-10); the model's Policy gets it back from there.
func PolicySnapshotToModel(s *v1beta1.ClusterSchedulingPolicySnapshot) (*placement.PolicySnapshot, error) {
	what := "ClusterSchedulingPolicySnapshot " + s.Name
	index, err := intFrom(s.Labels, v1beta1.PolicyIndexLabel, "label", what)
	if err != nil {
		return nil, err
	}
	if _, ok := s.Labels[v1beta1.PolicyIndexLabel]; !ok {
		return nil, fmt.Errorf("%s: no %s label", what, v1beta1.PolicyIndexLabel)
	}
	n, err := intFrom(s.Annotations, v1beta1.NumberOfClustersAnnotation, "annotation", what)
	if err != nil {
		return nil, err
	}
	gen, err := intFrom(s.Annotations, v1beta1.CRPGenerationAnnotation, "annotation", what)
	if err != nil {
		return nil, err
	}
	out := &placement.PolicySnapshot{
		Name:                s.Name,
		Placement:           s.Labels[v1beta1.CRPTrackingLabel],
		Index:               int(index),
		Policy:              PolicyToModel(s.Spec.Policy),
		PolicyHash:          string(s.Spec.PolicyHash),
		NumberOfClusters:    int32(n),
		PlacementGeneration: gen,
	}
	if _, ok := s.Annotations[v1beta1.NumberOfClustersAnnotation]; ok && out.Policy.Type() == placement.PickN {
		if out.Policy == nil {
			out.Policy = &placement.PlacementPolicy{PlacementType: placement.PickN}
		}
		out.Policy.NumberOfClusters = ptr.To(out.NumberOfClusters)
	}
	return out, nil
}

// PolicySnapshotFromModel writes a policy snapshot: spec (the policy without
// numberOfClusters, and the hash), labels (parent-CRP, policy-index, is-latest-snapshot as
// latest says) and annotations (CRP-generation; number-of-clusters for PickN). base keeps the
// status, owner references and server metadata; a new snapshot still needs its owner
// reference to the placement, which the model does not know the UID of.
func PolicySnapshotFromModel(s *placement.PolicySnapshot, latest bool, base *v1beta1.ClusterSchedulingPolicySnapshot) *v1beta1.ClusterSchedulingPolicySnapshot {
	out := &v1beta1.ClusterSchedulingPolicySnapshot{}
	if base != nil {
		out = base.DeepCopy()
	}
	out.APIVersion, out.Kind = v1beta1.GroupVersion.String(), "ClusterSchedulingPolicySnapshot"
	out.Name = s.Name
	setLabel(&out.ObjectMeta, v1beta1.CRPTrackingLabel, s.Placement)
	setLabel(&out.ObjectMeta, v1beta1.PolicyIndexLabel, strconv.Itoa(s.Index))
	setLabel(&out.ObjectMeta, v1beta1.IsLatestSnapshotLabel, strconv.FormatBool(latest))
	setIntAnnotation(&out.ObjectMeta, v1beta1.CRPGenerationAnnotation, s.PlacementGeneration)
	if s.Policy.Type() == placement.PickN || s.NumberOfClusters != 0 {
		setIntAnnotation(&out.ObjectMeta, v1beta1.NumberOfClustersAnnotation, int64(s.NumberOfClusters))
	} else {
		removeAnnotation(&out.ObjectMeta, v1beta1.NumberOfClustersAnnotation)
	}
	policy := s.Policy
	if policy != nil && policy.NumberOfClusters != nil {
		c := *policy
		c.NumberOfClusters = nil
		policy = &c
	}
	out.Spec.Policy = PolicyFromModel(policy)
	if string(out.Spec.PolicyHash) != s.PolicyHash {
		out.Spec.PolicyHash = []byte(s.PolicyHash)
	}
	return out
}

// SchedulingToModel reads what the scheduler recorded in a policy snapshot's status: its
// Scheduled condition (without times), the placement generation it decided for and its
// cluster decisions. The number of clusters it placed is the number of selected decisions.
func SchedulingToModel(s *v1beta1.ClusterSchedulingPolicySnapshot) status.Scheduling {
	out := status.Scheduling{
		ObservedPlacementGeneration: s.Status.ObservedCRPGeneration,
		Decisions:                   mapSlice(s.Status.ClusterDecisions, clusterDecisionToModel),
	}
	if c := meta.FindStatusCondition(s.Status.Conditions, condition.TypeScheduled); c != nil {
		u := untimed(*c)
		out.Condition = &u
	}
	return out
}

// SchedulingFromModel writes a scheduling result into a policy snapshot's status, merged
// into base's. The Scheduled condition keeps base's lastTransitionTime while its status does
// not change, else takes now; its observedGeneration is the snapshot's generation. Other
// conditions base has are kept.
func SchedulingFromModel(sc status.Scheduling, now time.Time, base *v1beta1.ClusterSchedulingPolicySnapshot) v1beta1.SchedulingPolicySnapshotStatus {
	var b v1beta1.SchedulingPolicySnapshotStatus
	var gen int64
	if base != nil {
		b, gen = *base.Status.DeepCopy(), base.Generation
	}
	out := v1beta1.SchedulingPolicySnapshotStatus{
		ObservedCRPGeneration: sc.ObservedPlacementGeneration,
		Conditions:            b.Conditions,
		ClusterDecisions:      clusterDecisionsFromModel(sc.Decisions, b.ClusterDecisions),
	}
	old := meta.FindStatusCondition(b.Conditions, condition.TypeScheduled)
	switch {
	case sc.Condition == nil:
		meta.RemoveStatusCondition(&out.Conditions, condition.TypeScheduled)
	case old != nil && untimed(*old) == *sc.Condition:
		// Unchanged: keep it as it is.
	default:
		c := metav1.Condition{Type: sc.Condition.Type, Status: sc.Condition.Status, Reason: sc.Condition.Reason, Message: sc.Condition.Message,
			ObservedGeneration: gen, LastTransitionTime: metav1.Time{Time: now}}
		if old != nil && old.Status == c.Status {
			c.LastTransitionTime = old.LastTransitionTime
		}
		setCondition(&out.Conditions, c)
	}
	if len(out.Conditions) == 0 {
		out.Conditions = nil
	}
	return out
}

// DefaultMaxResourceSnapshotBytes is how much manifest JSON one ClusterResourceSnapshot
// carries at most before the group spills into another snapshot: well under the API
// server's 1.5 MiB request limit, leaving room for metadata.
const DefaultMaxResourceSnapshotBytes = resources.MaxPartBytes

// ResourceSnapshotToModel reads one index group of ClusterResourceSnapshots, in any order,
// into a resource snapshot: the leading snapshot ({CRP}-{index}-snapshot) gives the name and
// hash, the group's manifests are concatenated by subindex. An incomplete group (fewer
// snapshots than the leading one's number-of-resource-snapshots) is an error.
func ResourceSnapshotToModel(group []*v1beta1.ClusterResourceSnapshot) (*resources.Snapshot, error) {
	if len(group) == 0 {
		return nil, fmt.Errorf("an empty resource snapshot group")
	}
	type part struct {
		sub  int64
		snap *v1beta1.ClusterResourceSnapshot
	}
	var parts []part
	var lead *v1beta1.ClusterResourceSnapshot
	for _, s := range group {
		what := "ClusterResourceSnapshot " + s.Name
		if _, ok := s.Annotations[v1beta1.SubindexOfResourceSnapshotAnnotation]; !ok {
			if lead != nil {
				return nil, fmt.Errorf("%s and %s both lead the group (neither has the %s annotation)", lead.Name, s.Name, v1beta1.SubindexOfResourceSnapshotAnnotation)
			}
			lead = s
			parts = append(parts, part{0, s})
			continue
		}
		sub, err := intFrom(s.Annotations, v1beta1.SubindexOfResourceSnapshotAnnotation, "annotation", what)
		if err != nil {
			return nil, err
		}
		if sub < 1 {
			return nil, fmt.Errorf("%s: subindex %d, want 1 or more", what, sub)
		}
		parts = append(parts, part{sub, s})
	}
	if lead == nil {
		return nil, fmt.Errorf("resource snapshot group of %s has no leading snapshot", group[0].Name)
	}
	what := "ClusterResourceSnapshot " + lead.Name
	if _, ok := lead.Labels[v1beta1.ResourceIndexLabel]; !ok {
		return nil, fmt.Errorf("%s: no %s label", what, v1beta1.ResourceIndexLabel)
	}
	index, err := intFrom(lead.Labels, v1beta1.ResourceIndexLabel, "label", what)
	if err != nil {
		return nil, err
	}
	if n, ok := lead.Annotations[v1beta1.NumberOfResourceSnapshotsAnnotation]; ok && n != strconv.Itoa(len(group)) {
		return nil, fmt.Errorf("%s: the group has %d snapshot(s), the %s annotation says %s", what, len(group), v1beta1.NumberOfResourceSnapshotsAnnotation, n)
	}
	slices.SortFunc(parts, func(a, b part) int { return int(a.sub - b.sub) })
	for i, p := range parts {
		if p.sub != int64(i) {
			return nil, fmt.Errorf("%s: the group lacks subindex %d", what, i)
		}
		if p.snap.Labels[v1beta1.ResourceIndexLabel] != lead.Labels[v1beta1.ResourceIndexLabel] {
			return nil, fmt.Errorf("ClusterResourceSnapshot %s is not in the group of %s (resource index %q, want %q)", p.snap.Name, lead.Name, p.snap.Labels[v1beta1.ResourceIndexLabel], lead.Labels[v1beta1.ResourceIndexLabel])
		}
	}
	out := &resources.Snapshot{
		Name:      lead.Name,
		Placement: lead.Labels[v1beta1.CRPTrackingLabel],
		Index:     int(index),
		Hash:      lead.Annotations[v1beta1.ResourceGroupHashAnnotation],
	}
	for _, p := range parts {
		for i, c := range p.snap.Spec.SelectedResources {
			u, err := rawToUnstructured(c.RawExtension)
			if err != nil {
				return nil, fmt.Errorf("ClusterResourceSnapshot %s: selectedResources[%d]: %v", p.snap.Name, i, err)
			}
			out.Manifests = append(out.Manifests, u)
		}
	}
	return out, nil
}

// ResourceSnapshotFromModel writes a resource snapshot as its index group: the leading
// snapshot {CRP}-{index}-snapshot, then {CRP}-{index}-{subindex} for each further maxBytes of
// manifest JSON (DefaultMaxResourceSnapshotBytes when maxBytes <= 0; a manifest is never
// split). All carry the parent-CRP, resource-index and is-latest-snapshot labels; the
// leading one the number-of-resource-snapshots, resource-hash and
// number-of-enveloped-object annotations, the others their subindex. base, matched by name,
// keeps each snapshot's status and server metadata; new snapshots still need their owner
// reference to the placement.
func ResourceSnapshotFromModel(s *resources.Snapshot, latest bool, maxBytes int, base []*v1beta1.ClusterResourceSnapshot) ([]*v1beta1.ClusterResourceSnapshot, error) {
	// The parts are resources.Parts', the split the work generator writes a Work for each of.
	parts := resources.Parts(s.Manifests, maxBytes)
	chunks := make([][]v1beta1.ResourceContent, len(parts))
	envelopes := 0
	for p, part := range parts {
		chunks[p] = []v1beta1.ResourceContent{}
		for i, m := range part {
			raw, err := json.Marshal(m.Object)
			if err != nil {
				return nil, fmt.Errorf("resource snapshot %s: part %d, manifest %d: %v", s.Name, p, i, err)
			}
			if resources.IsEnvelope(m) {
				envelopes++
			}
			chunks[p] = append(chunks[p], v1beta1.ResourceContent{RawExtension: runtime.RawExtension{Raw: raw}})
		}
	}
	out := make([]*v1beta1.ClusterResourceSnapshot, len(chunks))
	for sub, content := range chunks {
		name := s.Name
		if sub > 0 {
			name = s.Placement + "-" + strconv.Itoa(s.Index) + "-" + strconv.Itoa(sub)
		}
		snap := &v1beta1.ClusterResourceSnapshot{}
		if b := findBaseBy(base, func(b *v1beta1.ClusterResourceSnapshot) bool { return b.Name == name }); b != nil {
			snap = (*b).DeepCopy()
		}
		snap.APIVersion, snap.Kind = v1beta1.GroupVersion.String(), "ClusterResourceSnapshot"
		snap.Name = name
		setLabel(&snap.ObjectMeta, v1beta1.CRPTrackingLabel, s.Placement)
		setLabel(&snap.ObjectMeta, v1beta1.ResourceIndexLabel, strconv.Itoa(s.Index))
		setLabel(&snap.ObjectMeta, v1beta1.IsLatestSnapshotLabel, strconv.FormatBool(latest))
		if sub == 0 {
			setIntAnnotation(&snap.ObjectMeta, v1beta1.NumberOfResourceSnapshotsAnnotation, int64(len(chunks)))
			setAnnotation(&snap.ObjectMeta, v1beta1.ResourceGroupHashAnnotation, s.Hash)
			setIntAnnotation(&snap.ObjectMeta, v1beta1.NumberOfEnvelopedObjectsAnnotation, int64(envelopes))
			removeAnnotation(&snap.ObjectMeta, v1beta1.SubindexOfResourceSnapshotAnnotation)
		} else {
			setIntAnnotation(&snap.ObjectMeta, v1beta1.SubindexOfResourceSnapshotAnnotation, int64(sub))
			for _, k := range []string{v1beta1.NumberOfResourceSnapshotsAnnotation, v1beta1.ResourceGroupHashAnnotation, v1beta1.NumberOfEnvelopedObjectsAnnotation} {
				removeAnnotation(&snap.ObjectMeta, k)
			}
		}
		// A new snapshot of no resources still needs [] (the field is required and nil is
		// sent as null), which sameContent(nil, []) alone would leave nil.
		if snap.Spec.SelectedResources == nil || !sameContent(snap.Spec.SelectedResources, content) {
			snap.Spec.SelectedResources = content
		}
		out[sub] = snap
	}
	return out, nil
}

// rawToUnstructured decodes one embedded manifest.
func rawToUnstructured(r runtime.RawExtension) (*unstructured.Unstructured, error) {
	if len(r.Raw) == 0 && r.Object != nil {
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(r.Object)
		if err != nil {
			return nil, err
		}
		return &unstructured.Unstructured{Object: obj}, nil
	}
	var obj map[string]any
	if err := utiljson.Unmarshal(r.Raw, &obj); err != nil || obj == nil {
		return nil, fmt.Errorf("not a JSON object: %q", r.Raw)
	}
	return &unstructured.Unstructured{Object: obj}, nil
}

// sameContent reports whether two manifest lists hold the same JSON values, whatever their
// key order and spacing.
func sameContent(a, b []v1beta1.ResourceContent) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !sameJSON(a[i].Raw, b[i].Raw) {
			return false
		}
	}
	return true
}

func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return semantic.DeepEqualWithNilDifferentFromEmpty(x, y)
}
