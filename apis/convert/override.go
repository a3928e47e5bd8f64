package convert

import (
	"fmt"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/override"
)

// ClusterResourceOverrideToModel reads a ClusterResourceOverride. A selector's labelSelector,
// which the API server refuses in an override, has no place in the model.
func ClusterResourceOverrideToModel(o *v1beta1.ClusterResourceOverride) *override.ClusterResourceOverride {
	return &override.ClusterResourceOverride{TypeMeta: o.TypeMeta, ObjectMeta: *o.ObjectMeta.DeepCopy(), Spec: croSpecToModel(o.Spec)}
}

// ClusterResourceOverrideFromModel writes a ClusterResourceOverride; nothing is lost.
func ClusterResourceOverrideFromModel(o *override.ClusterResourceOverride) *v1beta1.ClusterResourceOverride {
	out := &v1beta1.ClusterResourceOverride{TypeMeta: o.TypeMeta, ObjectMeta: *o.ObjectMeta.DeepCopy(), Spec: croSpecFromModel(o.Spec)}
	out.APIVersion, out.Kind = v1beta1.GroupVersion.String(), override.KindClusterResourceOverride
	return out
}

// ResourceOverrideToModel reads a ResourceOverride; nothing is lost.
func ResourceOverrideToModel(o *v1beta1.ResourceOverride) *override.ResourceOverride {
	return &override.ResourceOverride{TypeMeta: o.TypeMeta, ObjectMeta: *o.ObjectMeta.DeepCopy(), Spec: roSpecToModel(o.Spec)}
}

// ResourceOverrideFromModel writes a ResourceOverride; nothing is lost.
func ResourceOverrideFromModel(o *override.ResourceOverride) *v1beta1.ResourceOverride {
	out := &v1beta1.ResourceOverride{TypeMeta: o.TypeMeta, ObjectMeta: *o.ObjectMeta.DeepCopy(), Spec: roSpecFromModel(o.Spec)}
	out.APIVersion, out.Kind = v1beta1.GroupVersion.String(), override.KindResourceOverride
	return out
}

// ClusterResourceOverrideSnapshotToModel reads a ClusterResourceOverrideSnapshot: its name,
// owner (override-tracking label), index (the name's suffix after the owner's name), spec
// copy and hash.
func ClusterResourceOverrideSnapshotToModel(s *v1beta1.ClusterResourceOverrideSnapshot) (override.CROSnapshot, error) {
	owner, index, err := overrideSnapshotIdentity(s.Name, s.Labels, "ClusterResourceOverrideSnapshot")
	if err != nil {
		return override.CROSnapshot{}, err
	}
	return override.CROSnapshot{Name: s.Name, Override: owner, Index: index, Spec: croSpecToModel(s.Spec.OverrideSpec), Hash: string(s.Spec.OverrideHash)}, nil
}

// ClusterResourceOverrideSnapshotFromModel writes a ClusterResourceOverrideSnapshot with the
// override-tracking and is-latest-snapshot labels; base keeps the server metadata.
func ClusterResourceOverrideSnapshotFromModel(s override.CROSnapshot, latest bool, base *v1beta1.ClusterResourceOverrideSnapshot) *v1beta1.ClusterResourceOverrideSnapshot {
	out := &v1beta1.ClusterResourceOverrideSnapshot{}
	if base != nil {
		out = base.DeepCopy()
	}
	out.APIVersion, out.Kind = v1beta1.GroupVersion.String(), override.KindClusterResourceOverrideSnapshot
	out.Name = s.Name
	setLabel(&out.ObjectMeta, v1beta1.OverrideTrackingLabel, s.Override)
	setLabel(&out.ObjectMeta, v1beta1.IsLatestSnapshotLabel, strconv.FormatBool(latest))
	out.Spec.OverrideSpec = keepOr(&out.Spec.OverrideSpec, s.Spec, croSpecToModel, croSpecFromModel)
	if string(out.Spec.OverrideHash) != s.Hash {
		out.Spec.OverrideHash = []byte(s.Hash)
	}
	return out
}

// ResourceOverrideSnapshotToModel reads a ResourceOverrideSnapshot, as
// ClusterResourceOverrideSnapshotToModel does, with its namespace.
func ResourceOverrideSnapshotToModel(s *v1beta1.ResourceOverrideSnapshot) (override.ROSnapshot, error) {
	owner, index, err := overrideSnapshotIdentity(s.Name, s.Labels, "ResourceOverrideSnapshot "+s.Namespace+"/")
	if err != nil {
		return override.ROSnapshot{}, err
	}
	return override.ROSnapshot{Name: s.Name, Namespace: s.Namespace, Override: owner, Index: index, Spec: roSpecToModel(s.Spec.OverrideSpec), Hash: string(s.Spec.OverrideHash)}, nil
}

// ResourceOverrideSnapshotFromModel writes a ResourceOverrideSnapshot in its override's
// namespace, as ClusterResourceOverrideSnapshotFromModel does.
func ResourceOverrideSnapshotFromModel(s override.ROSnapshot, latest bool, base *v1beta1.ResourceOverrideSnapshot) *v1beta1.ResourceOverrideSnapshot {
	out := &v1beta1.ResourceOverrideSnapshot{}
	if base != nil {
		out = base.DeepCopy()
	}
	out.APIVersion, out.Kind = v1beta1.GroupVersion.String(), override.KindResourceOverrideSnapshot
	out.Name, out.Namespace = s.Name, s.Namespace
	setLabel(&out.ObjectMeta, v1beta1.OverrideTrackingLabel, s.Override)
	setLabel(&out.ObjectMeta, v1beta1.IsLatestSnapshotLabel, strconv.FormatBool(latest))
	out.Spec.OverrideSpec = keepOr(&out.Spec.OverrideSpec, s.Spec, roSpecToModel, roSpecFromModel)
	if string(out.Spec.OverrideHash) != s.Hash {
		out.Spec.OverrideHash = []byte(s.Hash)
	}
	return out
}

// overrideSnapshotIdentity reads the owner from the override-tracking label and the index
// from the name, {owner}-{index}.
func overrideSnapshotIdentity(name string, labels map[string]string, what string) (string, int, error) {
	if !strings.HasSuffix(what, "/") {
		what += " "
	}
	what += name
	owner, ok := labels[v1beta1.OverrideTrackingLabel]
	if !ok {
		return "", 0, fmt.Errorf("%s: no %s label", what, v1beta1.OverrideTrackingLabel)
	}
	suffix, ok := strings.CutPrefix(name, owner+"-")
	index, err := strconv.Atoi(suffix)
	if !ok || err != nil || index < 0 {
		return "", 0, fmt.Errorf("%s: the name is not {override}-{index} for override %s", what, owner)
	}
	return owner, index, nil
}

func croSpecToModel(s v1beta1.ClusterResourceOverrideSpec) override.ClusterResourceOverrideSpec {
	return override.ClusterResourceOverrideSpec{
		Placement: placementRefToModel(s.Placement),
		ClusterResourceSelectors: mapSlice(s.ClusterResourceSelectors, func(r v1beta1.ClusterResourceSelector) override.ResourceSelector {
			return override.ResourceSelector{Group: r.Group, Version: r.Version, Kind: r.Kind, Name: r.Name}
		}),
		Policy: overridePolicyToModel(s.Policy),
	}
}

func croSpecFromModel(s override.ClusterResourceOverrideSpec) v1beta1.ClusterResourceOverrideSpec {
	return v1beta1.ClusterResourceOverrideSpec{
		Placement: placementRefFromModel(s.Placement),
		ClusterResourceSelectors: mapSlice(s.ClusterResourceSelectors, func(r override.ResourceSelector) v1beta1.ClusterResourceSelector {
			return v1beta1.ClusterResourceSelector{Group: r.Group, Version: r.Version, Kind: r.Kind, Name: r.Name}
		}),
		Policy: overridePolicyFromModel(s.Policy),
	}
}

func roSpecToModel(s v1beta1.ResourceOverrideSpec) override.ResourceOverrideSpec {
	return override.ResourceOverrideSpec{
		Placement: placementRefToModel(s.Placement),
		ResourceSelectors: mapSlice(s.ResourceSelectors, func(r v1beta1.ResourceSelector) override.ResourceSelector {
			return override.ResourceSelector{Group: r.Group, Version: r.Version, Kind: r.Kind, Name: r.Name}
		}),
		Policy: overridePolicyToModel(s.Policy),
	}
}

func roSpecFromModel(s override.ResourceOverrideSpec) v1beta1.ResourceOverrideSpec {
	return v1beta1.ResourceOverrideSpec{
		Placement: placementRefFromModel(s.Placement),
		ResourceSelectors: mapSlice(s.ResourceSelectors, func(r override.ResourceSelector) v1beta1.ResourceSelector {
			return v1beta1.ResourceSelector{Group: r.Group, Version: r.Version, Kind: r.Kind, Name: r.Name}
		}),
		Policy: overridePolicyFromModel(s.Policy),
	}
}

func placementRefToModel(r *v1beta1.PlacementRef) *override.PlacementRef {
	if r == nil {
		return nil
	}
	return &override.PlacementRef{Name: r.Name, Scope: r.Scope}
}

func placementRefFromModel(r *override.PlacementRef) *v1beta1.PlacementRef {
	if r == nil {
		return nil
	}
	return &v1beta1.PlacementRef{Name: r.Name, Scope: r.Scope}
}

func overridePolicyToModel(p v1beta1.OverridePolicy) override.OverridePolicy {
	return override.OverridePolicy{OverrideRules: mapSlice(p.OverrideRules, func(r v1beta1.OverrideRule) override.OverrideRule {
		return override.OverrideRule{
			ClusterSelector: clusterSelectorToModel(r.ClusterSelector),
			OverrideType:    r.OverrideType,
			JSONPatchOverrides: mapSlice(r.JSONPatchOverrides, func(j v1beta1.JSONPatchOverride) override.JSONPatchOverride {
				return override.JSONPatchOverride{Operator: j.Operator, Path: j.Path, Value: override.JSON{Raw: cloneBytes(j.Value.Raw)}}
			}),
		}
	})}
}

func overridePolicyFromModel(p override.OverridePolicy) v1beta1.OverridePolicy {
	return v1beta1.OverridePolicy{OverrideRules: mapSlice(p.OverrideRules, func(r override.OverrideRule) v1beta1.OverrideRule {
		return v1beta1.OverrideRule{
			ClusterSelector: clusterSelectorFromModel(r.ClusterSelector),
			OverrideType:    r.OverrideType,
			JSONPatchOverrides: mapSlice(r.JSONPatchOverrides, func(j override.JSONPatchOverride) v1beta1.JSONPatchOverride {
				return v1beta1.JSONPatchOverride{Operator: j.Operator, Path: j.Path, Value: apiextensionsv1.JSON{Raw: cloneBytes(j.Value.Raw)}}
			}),
		}
	})}
}

func cloneBytes(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return append([]byte(nil), b...)
}
