package resources

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Snapshot is a ClusterResourceSnapshot group: the stripped manifests a placement selected at
// one moment. It is immutable once taken. The production hub stores it as one
// ClusterResourceSnapshot per part (Parts), and the work generator writes a Work per part.
type Snapshot struct {
	Name      string
	Placement string
	Index     int
	// Hash is the sha-256 (hex) of the manifests, the resource-hash annotation.
	Hash      string
	Manifests []*unstructured.Unstructured
}

// SnapshotName is the leading snapshot's name of index group i: {placement}-{i}-snapshot.
func SnapshotName(placement string, index int) string {
	return placement + "-" + strconv.Itoa(index) + "-snapshot"
}

// Strip keeps what a user wrote: apiVersion, kind, metadata name, namespace, labels and
// annotations, and every top-level field but status (SNAP-RESOURCE).
func Strip(o *unstructured.Unstructured) *unstructured.Unstructured {
	out := &unstructured.Unstructured{Object: map[string]any{}}
	for k, v := range o.Object {
		switch k {
		case "status", "metadata":
		default:
			out.Object[k] = runtime.DeepCopyJSONValue(v)
		}
	}
	out.SetName(o.GetName())
	if ns := o.GetNamespace(); ns != "" {
		out.SetNamespace(ns)
	}
	if l := o.GetLabels(); len(l) > 0 {
		out.SetLabels(l)
	}
	if a := o.GetAnnotations(); len(a) > 0 {
		out.SetAnnotations(a)
	}
	return out
}

// Hash hashes stripped manifests in order. JSON of maps has sorted keys, so equal content
// gives an equal hash.
func Hash(manifests []*unstructured.Unstructured) string {
	h := sha256.New()
	for _, m := range manifests {
		b, _ := json.Marshal(m.Object) // plain decoded JSON cannot fail to marshal
		h.Write(b)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// DecideSnapshot returns a new snapshot when the selected content differs from the latest
// snapshot (nil when there is none), or nil when nothing changed.
func DecideSnapshot(placementName string, selected []*unstructured.Unstructured, latest *Snapshot) *Snapshot {
	stripped := make([]*unstructured.Unstructured, len(selected))
	for i, o := range selected {
		stripped[i] = Strip(o)
	}
	hash := Hash(stripped)
	if latest != nil && latest.Hash == hash {
		return nil
	}
	index := 0
	if latest != nil {
		index = latest.Index + 1
	}
	return &Snapshot{Name: SnapshotName(placementName, index), Placement: placementName, Index: index, Hash: hash, Manifests: stripped}
}
