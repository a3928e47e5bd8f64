package hub

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/triggers"
)

// TestMemberChanges pins how a MemberCluster update maps onto the trigger table's
// Changes: the same classification the simulator's actions and agents make.
func TestMemberChanges(t *testing.T) {
	base := func() *clusterv1beta1.MemberCluster {
		return &clusterv1beta1.MemberCluster{
			ObjectMeta: metav1.ObjectMeta{Name: "east", Labels: map[string]string{"env": "prod"}},
			Spec:       clusterv1beta1.MemberClusterSpec{Taints: []clusterv1beta1.Taint{{Key: "gpu", Effect: "NoSchedule"}}},
			Status: clusterv1beta1.MemberClusterStatus{Conditions: []metav1.Condition{
				{Type: "Healthy", Status: metav1.ConditionTrue, Reason: "MemberClusterHealthy"},
			}},
		}
	}
	now := metav1.Now()
	for _, tc := range []struct {
		name   string
		change func(*clusterv1beta1.MemberCluster)
		want   []triggers.Change
	}{
		{"nothing that matters (a heartbeat's time)", func(m *clusterv1beta1.MemberCluster) { m.Status.Conditions[0].LastTransitionTime = now }, nil},
		{"labels", func(m *clusterv1beta1.MemberCluster) { m.Labels["env"] = "dev" }, []triggers.Change{triggers.MemberLabelsChanged}},
		{"taint added wakes nobody", func(m *clusterv1beta1.MemberCluster) {
			m.Spec.Taints = append(m.Spec.Taints, clusterv1beta1.Taint{Key: "x", Effect: "NoSchedule"})
		}, nil},
		{"taint removed", func(m *clusterv1beta1.MemberCluster) { m.Spec.Taints = nil }, []triggers.Change{triggers.MemberTaintRemoved}},
		{"health", func(m *clusterv1beta1.MemberCluster) {
			m.Status.Conditions[0].Status, m.Status.Conditions[0].Reason = metav1.ConditionFalse, "MemberClusterHeartbeatTimeout"
		}, []triggers.Change{triggers.MemberBecameEligible}},
		{"properties", func(m *clusterv1beta1.MemberCluster) {
			m.Status.Properties = map[clusterv1beta1.PropertyName]clusterv1beta1.PropertyValue{"nodes": {Value: "3"}}
		}, []triggers.Change{triggers.MemberPropsChanged}},
		{"deletion", func(m *clusterv1beta1.MemberCluster) { m.DeletionTimestamp = &now }, []triggers.Change{triggers.MemberLeaving}},
		{"health while leaving wakes nobody more", func(m *clusterv1beta1.MemberCluster) {
			m.DeletionTimestamp = &now
			m.Status.Conditions[0].Status = metav1.ConditionUnknown
		}, []triggers.Change{triggers.MemberLeaving}},
	} {
		next := base()
		tc.change(next)
		if got := memberChanges(base(), next); !cmp.Equal(got, tc.want) {
			t.Errorf("memberChanges(%s) = %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := memberChanges(nil, base()); !cmp.Equal(got, []triggers.Change{triggers.MemberCreated}) {
		t.Errorf("memberChanges(created) = %v, want MemberCreated", got)
	}
	if got := memberChanges(base(), nil); got != nil {
		t.Errorf("memberChanges(gone) = %v, want nothing: the leave fired when it began", got)
	}
}

func TestHubResourceChanges(t *testing.T) {
	obj := func(ns string, gen int64, labels map[string]string) client.Object {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "x", Generation: gen, Labels: labels}}
	}
	fired := []triggers.Change{triggers.HubResourceChanged}
	for _, tc := range []struct {
		name     string
		old, new client.Object
		want     []triggers.Change
	}{
		{"created", nil, obj("app", 0, nil), fired},
		{"deleted", obj("app", 0, nil), nil, fired},
		{"reserved namespace", obj("kube-system", 0, nil), obj("kube-system", 0, map[string]string{"a": "b"}), nil},
		{"no generations (ConfigMap data)", obj("app", 0, nil), obj("app", 0, nil), fired},
		{"status only", obj("app", 3, nil), obj("app", 3, nil), nil},
		{"spec", obj("app", 3, nil), obj("app", 4, nil), fired},
		{"labels", obj("app", 3, nil), obj("app", 3, map[string]string{"a": "b"}), fired},
	} {
		if got := hubResourceChanges(tc.old, tc.new); !cmp.Equal(got, tc.want) {
			t.Errorf("hubResourceChanges(%s) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestOnlyStatusMoved pins which MemberCluster updates the membership controller skips:
// those that moved only the status the hub itself writes.
func TestOnlyStatusMoved(t *testing.T) {
	base := func() *clusterv1beta1.MemberCluster {
		return &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "east", Generation: 1,
			Labels: map[string]string{"env": "prod"}, Finalizers: []string{MemberFinalizer}}}
	}
	now := metav1.Now()
	for _, tc := range []struct {
		name   string
		change func(*clusterv1beta1.MemberCluster)
		want   bool
	}{
		{"status only (a heartbeat)", func(m *clusterv1beta1.MemberCluster) {
			m.ResourceVersion = "7"
			m.Status.Conditions = []metav1.Condition{{Type: "Healthy", Status: metav1.ConditionTrue}}
		}, true},
		{"spec", func(m *clusterv1beta1.MemberCluster) { m.Generation = 2 }, false},
		{"labels", func(m *clusterv1beta1.MemberCluster) { m.Labels["env"] = "dev" }, false},
		{"annotations", func(m *clusterv1beta1.MemberCluster) { m.Annotations = map[string]string{"a": "b"} }, false},
		{"finalizer removed", func(m *clusterv1beta1.MemberCluster) { m.Finalizers = nil }, false},
		{"deletion asked", func(m *clusterv1beta1.MemberCluster) { m.DeletionTimestamp = &now }, false},
	} {
		n := base()
		tc.change(n)
		if got := onlyStatusMoved(base(), n); got != tc.want {
			t.Errorf("onlyStatusMoved(%s) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestWorkReported pins when a Work's watch event wakes the fan-in: a report, not the
// creation of a Work without one (the hub's own write), but a Work listed with a report
// (a new hub's informers).
func TestWorkReported(t *testing.T) {
	fires := statusChanged(workReported, func(w *placementv1beta1.Work) any { return w.Status })
	reported := func() *placementv1beta1.Work {
		return &placementv1beta1.Work{Status: placementv1beta1.WorkStatus{Conditions: []metav1.Condition{{Type: "Applied", Status: metav1.ConditionTrue}}}}
	}
	for _, tc := range []struct {
		name     string
		old, new client.Object
		want     bool
	}{
		{"created without a report", nil, &placementv1beta1.Work{}, false},
		{"listed with a report", nil, reported(), true},
		{"reported", &placementv1beta1.Work{}, reported(), true},
		{"written again, same report", reported(), reported(), false},
		{"deleted", reported(), nil, false},
	} {
		if got := len(fires(tc.old, tc.new)) > 0; got != tc.want {
			t.Errorf("statusChanged(%s) fires = %v, want %v", tc.name, got, tc.want)
		}
	}
}
