package agentk8s

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/jsonmergepatch"

	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/resources"
)

// Apply strategy values (APPLY-API); an empty field means the first (default) one. The
// strategy's type is placement.ApplyType.
const (
	PartialComparison = "PartialComparison"
	FullComparison    = "FullComparison"

	WhenToApplyAlways       = "Always"
	WhenToApplyIfNotDrifted = "IfNotDrifted"

	TakeOverAlways   = "Always"
	TakeOverIfNoDiff = "IfNoDiff"
	TakeOverNever    = "Never"
)

// What the agent writes on the objects it applies (APPLY-CSA, APPLY-SSA, WORK-APPLIEDWORK).
const (
	// FieldManager is the field manager of server-side applies.
	FieldManager = "work-api-agent"
	// LastAppliedAnnotation keeps the manifest of the last client-side apply, the
	// "original" of the next three-way merge.
	LastAppliedAnnotation = "kubernetes-fleet.io/last-applied-configuration"
	// SpecHashAnnotation is the hash of the hub manifest last applied: the same hash on the
	// live object means the hub has not changed it since, so a difference is a drift.
	SpecHashAnnotation = "kubernetes-fleet.io/spec-hash"
	// MaxLastAppliedSize is the largest last-applied annotation; past it the agent applies
	// server-side (APPLY-CSA).
	MaxLastAppliedSize = 256 * 1024
	// AppliedWorkKind and AppliedWorkAPIVersion name the owner the agent records on what it
	// applies.
	AppliedWorkKind       = "AppliedWork"
	AppliedWorkAPIVersion = "placement.kubernetes-fleet.io/v1beta1"
)

// Manifest-level reasons of failed applies (APPLY-COOWNERSHIP, APPLY-TAKEOVER, DRIFT).
const (
	ReasonAlreadyOwnedByOthers      = "ManifestsAlreadyOwnedByOthers"
	ReasonConflictBetweenPlacements = "ApplyConflictBetweenPlacements"
	ReasonConflictWithOtherApplier  = "ApplyConflictWithOtherApplier"
	ReasonNotTakenOver              = "NotTakenOver"
	ReasonFailedToTakeOver          = "FailedToTakeOver"
	ReasonFoundDrifts               = "FoundDrifts"
	// ReasonMergeFailed is ours: the three-way merge could not be computed (a live object
	// that is not valid JSON), so nothing is written.
	ReasonMergeFailed = "ThreeWayMergeFailed"
)

// Messages of those failures, as the spec quotes them.
const (
	MessageAlreadyOwnedByOthers      = "Failed to apply manifest: failed to process the request due to a client error: resource exists and is not managed by the fleet controller and co-ownernship is disallowed"
	MessageConflictBetweenPlacements = "Failed to apply manifest: the object is already managed by another placement's work"
	MessageNotTakenOver              = "Failed to apply the manifest (error: no ownership of the object in the member cluster; takeover is needed)"
	MessageFailedToTakeOver          = "Failed to apply the manifest (error: cannot take over object: configuration differences are found between the manifest object and the corresponding object in the member cluster)"
	MessageFoundDrifts               = "Failed to apply the manifest (error: cannot apply manifest: drifts are found between the manifest and the object from the member cluster)"
	// WholeObject is the value in hub of the one diff reported for an object missing on the
	// member (APPLY-REPORTDIFF: a missing object is a full-object difference).
	WholeObject = "(the whole object)"
)

// Op is the write a decision asks for.
type Op string

const (
	// OpNone: nothing to write.
	OpNone Op = ""
	// OpCreate: create Decision.Object.
	OpCreate Op = "Create"
	// OpUpdate: replace the live object with Decision.Object (a client-side three-way
	// merge), at the live object's resourceVersion; a conflict means retry on a fresh read.
	OpUpdate Op = "Update"
	// OpServerSideApply: apply Decision.Object server-side as FieldManager, forcing
	// conflicts when Decision.Force.
	OpServerSideApply Op = "ServerSideApply"
)

// Input is what the agent knows of one manifest of a Work.
type Input struct {
	// Manifest is the hub manifest, as the Work carries it (overrides applied).
	Manifest *unstructured.Unstructured
	// Live is the object on the member, nil when there is none.
	Live *unstructured.Unstructured
	// Owner is the owner reference of the Work's AppliedWork on the member; an object whose
	// owner references name the same AppliedWork (by kind and name) is one the agent manages.
	Owner metav1.OwnerReference
	// Strategy is the Work's apply strategy; nil means every default.
	Strategy *placement.ApplyStrategy
}

// Decision is what to do with one manifest and the result to report for it.
type Decision struct {
	Op     Op
	Object *unstructured.Unstructured
	Force  bool
	// Result is what the agent reports once the write (if any) succeeded: the caller fills
	// in Available from the written object and the observation times.
	Result ManifestResult
}

// Decide decides, without I/O, what the member agent does with one manifest:
//
//   - ReportDiff: never writes; reports the differences between the manifest and the live
//     object under the comparison option (a missing object is one whole-object difference).
//   - no live object: create it (deleting a managed object is not a drift, APPLY-WHENTOAPPLY).
//   - a live object managed by another placement's AppliedWork: ApplyConflictBetweenPlacements.
//   - a live object the agent does not manage: refused when it has other owners and
//     co-ownership is not allowed; else whenToTakeOver: Never refuses (NotTakenOver),
//     IfNoDiff takes over only without differences (else FailedToTakeOver with the diffs),
//     Always takes over.
//   - a managed object the hub manifest changed since the last apply: apply.
//   - a managed object at the same manifest: look for drifts. IfNotDrifted stops applying on
//     any drift (FoundDrifts, with the drifts); Always re-applies when a managed field
//     drifted and, under FullComparison, reports drifts of unmanaged fields without error.
//
// Applying is a client-side three-way merge (the last-applied annotation is the original),
// or a server-side apply under ServerSideApply or when the annotation would be too large.
func Decide(in Input) Decision {
	s := strategyOrDefault(in.Strategy)
	full := s.ComparisonOption == FullComparison
	res := ManifestResult{Identifier: resources.Identifier(in.Manifest), Tracking: Classify(in.Manifest)}
	if in.Live != nil {
		g := in.Live.GetGeneration()
		res.MemberGeneration = &g
	}
	if s.Type.ReportsOnly() {
		res.ReportDiff = true
		if in.Live == nil {
			res.Diffs = []placement.PatchDetail{{Path: "/", ValueInHub: WholeObject}}
		} else {
			res.Diffs = Compare(in.Manifest, in.Live, full)
		}
		return Decision{Result: res}
	}
	if in.Live == nil {
		return apply(in, s, res, OpCreate)
	}
	managed, otherPlacement, otherOwners := owners(in.Live, in.Owner)
	if !managed {
		switch {
		case otherPlacement:
			return fail(res, ReasonConflictBetweenPlacements, MessageConflictBetweenPlacements)
		case otherOwners && !s.AllowCoOwnership:
			return fail(res, ReasonAlreadyOwnedByOthers, MessageAlreadyOwnedByOthers)
		case s.WhenToTakeOver == TakeOverNever:
			return fail(res, ReasonNotTakenOver, MessageNotTakenOver)
		case s.WhenToTakeOver == TakeOverIfNoDiff:
			if diffs := Compare(in.Manifest, in.Live, full); len(diffs) > 0 {
				d := fail(res, ReasonFailedToTakeOver, MessageFailedToTakeOver)
				d.Result.Diffs = diffs
				return d
			}
		}
		return apply(in, s, res, OpUpdate)
	}
	if in.Live.GetAnnotations()[SpecHashAnnotation] != Hash(in.Manifest) {
		return apply(in, s, res, OpUpdate)
	}
	managedDrifts := Compare(in.Manifest, in.Live, false)
	if s.WhenToApply == WhenToApplyIfNotDrifted {
		drifts := managedDrifts
		if full {
			drifts = Compare(in.Manifest, in.Live, true)
		}
		if len(drifts) > 0 {
			d := fail(res, ReasonFoundDrifts, MessageFoundDrifts)
			d.Result.Drifts = drifts
			return d
		}
		return Decision{Result: res}
	}
	if full {
		// Unmanaged fields are reported as drifts, not overwritten.
		res.Drifts = unmanagedOnly(Compare(in.Manifest, in.Live, true), managedDrifts)
	}
	if len(managedDrifts) > 0 {
		return apply(in, s, res, OpUpdate)
	}
	return Decision{Result: res}
}

func strategyOrDefault(s *placement.ApplyStrategy) placement.ApplyStrategy {
	var out placement.ApplyStrategy
	if s != nil {
		out = *s.Copy()
	}
	out.Type = out.Type.OrDefault()
	if out.ComparisonOption == "" {
		out.ComparisonOption = PartialComparison
	}
	if out.WhenToApply == "" {
		out.WhenToApply = WhenToApplyAlways
	}
	if out.WhenToTakeOver == "" {
		out.WhenToTakeOver = TakeOverAlways
	}
	return out
}

func fail(res ManifestResult, reason, message string) Decision {
	res.ApplyError, res.Reason = message, reason
	return Decision{Result: res}
}

// owners reads the live object's owner references: whether the agent's AppliedWork is one,
// whether another AppliedWork is, and whether any other owner is.
func owners(live *unstructured.Unstructured, owner metav1.OwnerReference) (managed, otherPlacement, others bool) {
	for _, r := range live.GetOwnerReferences() {
		switch {
		case r.Kind == AppliedWorkKind && r.Name == owner.Name:
			managed = true
		case r.Kind == AppliedWorkKind:
			otherPlacement = true
		default:
			others = true
		}
	}
	return managed, otherPlacement, others
}

// apply builds the write: the manifest with the spec hash, the agent's owner reference and,
// for a client-side apply, the last-applied annotation, merged three-way into the live
// object.
func apply(in Input, s placement.ApplyStrategy, res ManifestResult, op Op) Decision {
	desired := in.Manifest.DeepCopy()
	ann := maps.Clone(desired.GetAnnotations())
	if ann == nil {
		ann = map[string]string{}
	}
	delete(ann, LastAppliedAnnotation)
	ann[SpecHashAnnotation] = Hash(in.Manifest)
	ssa := s.Type.ServerSide()
	if !ssa {
		last, _ := json.Marshal(in.Manifest.Object)
		if len(last) > MaxLastAppliedSize {
			ssa = true
		} else {
			ann[LastAppliedAnnotation] = string(last)
		}
	}
	desired.SetAnnotations(ann)
	var live []metav1.OwnerReference
	if in.Live != nil {
		live = in.Live.GetOwnerReferences()
	}
	desired.SetOwnerReferences(withOwner(live, in.Owner))
	if ssa {
		d := Decision{Op: OpServerSideApply, Object: desired, Result: res}
		d.Force = s.ServerSideApplyConfig != nil && s.ServerSideApplyConfig.ForceConflicts
		return d
	}
	if op == OpCreate {
		return Decision{Op: OpCreate, Object: desired, Result: res}
	}
	var original map[string]any
	if a, ok := in.Live.GetAnnotations()[LastAppliedAnnotation]; ok {
		_ = json.Unmarshal([]byte(a), &original) // an unreadable annotation means no original
	}
	merged, err := merge3(original, desired.Object, in.Live.Object)
	if err != nil {
		return fail(res, ReasonMergeFailed, "Failed to apply manifest: "+err.Error())
	}
	return Decision{Op: OpUpdate, Object: &unstructured.Unstructured{Object: merged}, Result: res}
}

// withOwner returns refs with the agent's AppliedWork reference in place of any older one
// to the same AppliedWork (a re-created AppliedWork has a new UID).
func withOwner(refs []metav1.OwnerReference, owner metav1.OwnerReference) []metav1.OwnerReference {
	out := make([]metav1.OwnerReference, 0, len(refs)+1)
	for _, r := range refs {
		if r.Kind == AppliedWorkKind && r.Name == owner.Name {
			continue
		}
		out = append(out, r)
	}
	return append(out, owner)
}

// merge3 merges modified into current, deleting what original had and modified no longer
// has: a JSON three-way merge patch (RFC 7386, lists replaced whole) applied to current.
func merge3(original, modified, current map[string]any) (map[string]any, error) {
	var docs [3][]byte
	for i, o := range []map[string]any{original, modified, current} {
		if o == nil {
			o = map[string]any{}
		}
		b, err := json.Marshal(o)
		if err != nil {
			return nil, fmt.Errorf("three-way merge: %w", err)
		}
		docs[i] = b
	}
	patch, err := jsonmergepatch.CreateThreeWayJSONMergePatch(docs[0], docs[1], docs[2])
	if err != nil {
		return nil, fmt.Errorf("three-way merge: %w", err)
	}
	merged, err := jsonpatch.MergePatch(docs[2], patch)
	if err != nil {
		return nil, fmt.Errorf("three-way merge: %w", err)
	}
	var out map[string]any
	// utiljson keeps integers int64, as unstructured objects hold them.
	if err := utiljson.Unmarshal(merged, &out); err != nil {
		return nil, fmt.Errorf("three-way merge: %w", err)
	}
	return out, nil
}

// Hash is the spec hash of a hub manifest: SHA-256 of its JSON (keys sorted).
func Hash(m *unstructured.Unstructured) string {
	b, _ := json.Marshal(m.Object)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// ignoredMetadata are fields the API server or the agent owns: never a difference.
var ignoredMetadata = map[string]bool{
	"uid": true, "resourceVersion": true, "generation": true, "creationTimestamp": true, "managedFields": true,
	"ownerReferences": true, "deletionTimestamp": true, "deletionGracePeriodSeconds": true, "selfLink": true, "finalizers": true,
}

// Compare lists the differences between a hub manifest and the live object (APPLY-COMPARISON):
// under partial comparison the fields the manifest sets; under full comparison also the
// fields only the live object has. Status, server-owned metadata and the agent's own
// annotations are never compared. Paths are RFC 6901; values are JSON (strings bare); the
// list is sorted by path.
func Compare(manifest, live *unstructured.Unstructured, full bool) []placement.PatchDetail {
	var out []placement.PatchDetail
	compareValue(&out, "", comparedFields(manifest), comparedFields(live), full)
	slices.SortFunc(out, func(a, b placement.PatchDetail) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// comparedFields is a copy of the object without what is never compared.
func comparedFields(u *unstructured.Unstructured) map[string]any {
	c := u.DeepCopy().Object
	delete(c, "status")
	if md, ok := c["metadata"].(map[string]any); ok {
		for k := range ignoredMetadata {
			delete(md, k)
		}
		if ann, ok := md["annotations"].(map[string]any); ok {
			delete(ann, LastAppliedAnnotation)
			delete(ann, SpecHashAnnotation)
			if len(ann) == 0 {
				delete(md, "annotations")
			}
		}
	}
	return c
}

func compareValue(out *[]placement.PatchDetail, path string, hub, member any, full bool) {
	hm, hIsMap := hub.(map[string]any)
	mm, mIsMap := member.(map[string]any)
	if hIsMap && mIsMap {
		for _, k := range slices.Sorted(maps.Keys(hm)) {
			p := path + "/" + escape(k)
			mv, ok := mm[k]
			if !ok {
				*out = append(*out, placement.PatchDetail{Path: p, ValueInHub: render(hm[k])})
				continue
			}
			compareValue(out, p, hm[k], mv, full)
		}
		if full {
			for _, k := range slices.Sorted(maps.Keys(mm)) {
				if _, ok := hm[k]; !ok {
					*out = append(*out, placement.PatchDetail{Path: path + "/" + escape(k), ValueInMember: render(mm[k])})
				}
			}
		}
		return
	}
	hl, hIsList := hub.([]any)
	ml, mIsList := member.([]any)
	if hIsList && mIsList && len(hl) == len(ml) {
		for i := range hl {
			compareValue(out, fmt.Sprintf("%s/%d", path, i), hl[i], ml[i], full)
		}
		return
	}
	if !equalValue(hub, member) {
		*out = append(*out, placement.PatchDetail{Path: path, ValueInHub: render(hub), ValueInMember: render(member)})
	}
}

// unmanagedOnly drops from all the drifts that are in managed.
func unmanagedOnly(all, managed []placement.PatchDetail) []placement.PatchDetail {
	var out []placement.PatchDetail
	for _, d := range all {
		if !slices.Contains(managed, d) {
			out = append(out, d)
		}
	}
	return out
}

func escape(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

// equalValue compares JSON values, numbers by value whatever their Go type.
func equalValue(a, b any) bool {
	if x, ok := numeric(a); ok {
		y, ok := numeric(b)
		return ok && x == y
	}
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for k := range av {
			if _, ok := bv[k]; !ok || !equalValue(av[k], bv[k]) {
				return false
			}
		}
		return true
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for i := range av {
			if !equalValue(av[i], bv[i]) {
				return false
			}
		}
		return true
	}
	return a == b
}

func numeric(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

func render(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}
