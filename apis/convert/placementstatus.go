package convert

import (
	"bytes"
	"encoding/json"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/hub"
)

// KindPlacementStatus is the kind of a placement's namespaced status copy.
const KindPlacementStatus = "ClusterResourcePlacementStatus"

// PlacementStatusObjectToModel reads a ClusterResourcePlacementStatus into the mirror the
// hub keeps for a NamespaceAccessible placement.
func PlacementStatusObjectToModel(o *v1beta1.ClusterResourcePlacementStatus) *hub.StatusMirror {
	return &hub.StatusMirror{Namespace: o.Namespace, Status: PlacementStatusToModel(o.SourceStatus)}
}

// PlacementStatusObjectFromModel writes placement name's mirror m as a
// ClusterResourcePlacementStatus, over base (the object read from m.Namespace, or nil): the
// source status is merged into base's as PlacementStatusFromModel does, and
// lastUpdatedTime moves to now only when the source status changed, so an unchanged
// status writes nothing.
func PlacementStatusObjectFromModel(name string, m *hub.StatusMirror, base *v1beta1.ClusterResourcePlacementStatus, now time.Time) *v1beta1.ClusterResourcePlacementStatus {
	out := &v1beta1.ClusterResourcePlacementStatus{}
	var baseStatus v1beta1.PlacementStatus
	if base != nil {
		out.ObjectMeta = *base.ObjectMeta.DeepCopy()
		baseStatus = base.SourceStatus
	}
	out.APIVersion, out.Kind = v1beta1.GroupVersion.String(), KindPlacementStatus
	out.Name, out.Namespace = name, m.Namespace
	setLabel(&out.ObjectMeta, v1beta1.CRPTrackingLabel, name)
	out.SourceStatus = PlacementStatusFromModel(m.Status, baseStatus)
	if base != nil && sameEncoding(out.SourceStatus, base.SourceStatus) {
		out.LastUpdatedTime = base.LastUpdatedTime
	} else {
		out.LastUpdatedTime = metav1.NewTime(now.Truncate(time.Second))
	}
	return out
}

// sameEncoding compares two values as the API server stores them (nil and empty lists alike).
func sameEncoding(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}
