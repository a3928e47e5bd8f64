package resources

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// MaxPartBytes is how much manifest JSON one part of a resource snapshot group carries at
// most before the group spills into another part (another ClusterResourceSnapshot): well
// under the API server's 1.5 MiB request limit, leaving room for metadata. A Work is
// written per part, so a part's bound is a Work's too.
const MaxPartBytes = 800 * 1024

// MaxWorkBytes is the most manifest JSON one Work may carry: the API server stores no
// object over etcd's default 1.5 MiB request limit and refuses its write ("request is too
// large"), and 16 KiB are left for the Work's metadata and spec. Parts keep a Work at
// MaxPartBytes; only overrides (or a single oversized manifest) can push one past this.
const MaxWorkBytes = 1536*1024 - 16*1024

// ManifestBytes is the size of manifests as JSON, as a Work carries them.
func ManifestBytes(manifests []*unstructured.Unstructured) int {
	n := 0
	for _, m := range manifests {
		raw, _ := json.Marshal(m.Object) // plain decoded JSON cannot fail to marshal
		n += len(raw)
	}
	return n
}

// Parts splits a snapshot's manifests into parts of at most maxBytes of manifest JSON
// (MaxPartBytes when maxBytes <= 0), in order; a manifest is never split, so one bigger
// than maxBytes is a part of its own. No manifests make one empty part. The production
// hub writes part i as the group's snapshot of subindex i, and the work generator of both
// worlds writes a Work per part (WorkName), so the two always split alike.
func Parts(manifests []*unstructured.Unstructured, maxBytes int) [][]*unstructured.Unstructured {
	if maxBytes <= 0 {
		maxBytes = MaxPartBytes
	}
	parts := [][]*unstructured.Unstructured{nil}
	size := 0
	for _, m := range manifests {
		raw, _ := json.Marshal(m.Object) // plain decoded JSON cannot fail to marshal
		if last := len(parts) - 1; size+len(raw) > maxBytes && len(parts[last]) > 0 {
			parts = append(parts, nil)
			size = 0
		}
		parts[len(parts)-1] = append(parts[len(parts)-1], m)
		size += len(raw)
	}
	return parts
}

// WorkName is the name of the Work of a placement's snapshot part (subindex) on a member,
// as KubeFleet names it (WORK-API): {placement}-work for the leading part, {placement}-{subindex}
// for each further one.
func WorkName(placement string, subindex int) string {
	if subindex == 0 {
		return placement + "-work"
	}
	return placement + "-" + strconv.Itoa(subindex)
}

// EnvelopeWorkName is the name of the Work of the envelope o, found in the part whose Work
// is partWork: {partWork}-configmap-{id} for the older ConfigMap form, {partWork}-envelope-{id}
// for the envelope kinds (ENV-LEGACY). KubeFleet's id is a random UUID, found again by the
// Work's envelope labels; here it is the first 16 hex digits of the sha-256 of the
// envelope's kind, namespace and name, so both worlds name it alike and a rerun gives the
// same name.
func EnvelopeWorkName(partWork string, o *unstructured.Unstructured) string {
	h := sha256.Sum256([]byte(o.GetKind() + "/" + o.GetNamespace() + "/" + o.GetName()))
	id := hex.EncodeToString(h[:8])
	if o.GetKind() == "ConfigMap" {
		return partWork + "-configmap-" + id
	}
	return partWork + "-envelope-" + id
}
