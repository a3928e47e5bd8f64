package sim

import (
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/placement"
)

// TestStoreVersions: every change the scheduler indexes or reads besides agent status
// moves the store's ClustersVersion (scheduler.Input.MembersVersion), heartbeats that
// change only status do not, and a placement's BindingsVersion moves with its bindings
// alone.
func TestStoreVersions(t *testing.T) {
	s, err := New(Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	st := s.store
	step := func(what string, wantChange bool, f func() error) {
		t.Helper()
		before := st.ClustersVersion()
		if err := f(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if changed := st.ClustersVersion() != before; changed != wantChange {
			t.Errorf("%s: ClustersVersion %d -> %d, want a change: %v", what, before, st.ClustersVersion(), wantChange)
		}
	}
	step("add a member", true, func() error { return s.AddMember(MemberSpec{Name: "m1", Labels: map[string]string{"a": "1"}}) })
	step("add another", true, func() error { return s.AddMember(MemberSpec{Name: "m2"}) })
	// Joining: the first heartbeat reports properties and resources (a change); later
	// heartbeats write status only.
	step("join", true, func() error { _, err := s.Run(2 * time.Minute); return err })
	step("heartbeats", false, func() error { _, err := s.Run(10 * time.Minute); return err })
	step("label", true, func() error { return s.Label("m1", map[string]string{"a": "2"}, nil) })
	step("same label", false, func() error { return s.Label("m1", map[string]string{"a": "2"}, nil) })
	step("taint", true, func() error { return s.Taint("m1", member.Taint{Key: "k", Value: "v"}) })
	step("untaint", true, func() error { return s.Untaint("m1", "k") })
	step("leave", true, func() error { return s.DeleteMember("m2") })
	step("removed", true, func() error { _, err := s.Run(30 * time.Minute); return err })
	if len(st.Clusters()) != 1 {
		t.Fatalf("clusters %d after m2 left, want 1", len(st.Clusters()))
	}

	v1, v2 := st.BindingsVersion("p1"), st.BindingsVersion("p2")
	st.PutBinding(placement.Binding{Name: "p1-m1", Placement: "p1", TargetCluster: "m1", State: placement.Scheduled})
	if st.BindingsVersion("p1") == v1 || st.BindingsVersion("p2") != v2 {
		t.Errorf("create in p1: versions p1 %d -> %d, p2 %d -> %d; want p1 only to change", v1, st.BindingsVersion("p1"), v2, st.BindingsVersion("p2"))
	}
	v1 = st.BindingsVersion("p1")
	st.PutBinding(placement.Binding{Name: "p1-m1", Placement: "p1", TargetCluster: "m1", State: placement.Bound})
	if st.BindingsVersion("p1") == v1 {
		t.Errorf("replace in p1: version stayed %d", v1)
	}
	v1 = st.BindingsVersion("p1")
	st.DeleteBinding("p1-m1")
	if st.BindingsVersion("p1") == v1 || st.BindingsVersion("p1") == 0 {
		t.Errorf("delete in p1: version %d -> %d, want another, not zero", v1, st.BindingsVersion("p1"))
	}
}
