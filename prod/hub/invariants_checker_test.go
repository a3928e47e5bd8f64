package hub

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	mhub "github.com/fleetsim/fleetsim/model/hub"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/placement"
)

// TestInvariantCheckerSeesBindingsWrittenByOthers walks the checker through decisions on a
// hand-built state: the first decision that reads all of a placement's bindings learns
// them; a binding that appears later without a decision of the hub creating it counts as
// new once; a lasting violation is reported once, and again only after it cleared.
func TestInvariantCheckerSeesBindingsWrittenByOthers(t *testing.T) {
	ic := &invariantChecker{seen: map[string]map[string]bool{}, reported: map[string]map[string]string{}}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	members := map[string]*mhub.MemberCluster{
		"east":  {Member: &member.Member{Name: "east"}},
		"west":  {Member: &member.Member{Name: "west"}},
		"north": {Member: &member.Member{Name: "north"}},
	}
	crp := placement.ClusterResourcePlacement{}
	crp.Name = "app"
	binding := func(name, cluster string) *placement.Binding {
		return &placement.Binding{Name: name, Placement: "app", TargetCluster: cluster, State: placement.Bound, Generation: 1}
	}
	// decide runs one decision: the state holds bindings as loaded, change is what the
	// decision does; it returns the invariants reported.
	decide := func(sc scope, loaded []*placement.Binding, change func(st *state)) []string {
		st := &state{scope: sc, members: members,
			placements: map[string]*mhub.Placement{"app": {CRP: crp}}, bindings: map[string]*placement.Binding{}}
		for _, b := range loaded {
			c := *b
			st.bindings[b.Name] = &c
		}
		p := ic.before(st)
		if change != nil {
			change(st)
		}
		var got []string
		for _, v := range ic.after(st, p, now) {
			got = append(got, v.invariant)
		}
		return got
	}
	wide := scope{placement: "app", allBindings: true}
	one := func(b string) scope { return scope{placement: "app", binding: b} }
	east, west := binding("app-east", "east"), binding("app-west", "west")
	ghost, twin := binding("app-ghost", "ghost"), binding("app-east-twin", "east")

	steps := []struct {
		name   string
		sc     scope
		loaded []*placement.Binding
		change func(st *state)
		want   []string
	}{
		{name: "a decision about one binding before the placement is known learns nothing", sc: one("app-east"), loaded: []*placement.Binding{east}},
		{name: "the first placement-wide decision learns the bindings it read", sc: wide, loaded: []*placement.Binding{east, west}},
		{name: "the hub's own new binding is checked as new, and is fine", sc: wide, loaded: []*placement.Binding{east, west},
			change: func(st *state) { st.bindings["app-north"] = binding("app-north", "north") }},
		// noBindingsOnGoneMembers (a member leaves only once no binding is on it) sees a
		// binding on a member that is not there, too.
		{name: "a binding someone else wrote on a non-member is new at the next decision", sc: one("app-ghost"), loaded: []*placement.Binding{east, west, ghost},
			want: []string{"bindingsOnKnownMembers", "noBindingsOnGoneMembers"}},
		{name: "and is not new again", sc: wide, loaded: []*placement.Binding{east, west, ghost}},
		{name: "a second live binding on east is reported", sc: wide, loaded: []*placement.Binding{east, west, twin},
			want: []string{"oneBindingPerCluster"}},
		{name: "once while it lasts", sc: wide, loaded: []*placement.Binding{east, west, twin}},
		{name: "it clears", sc: wide, loaded: []*placement.Binding{east, west}},
		{name: "and is reported again when it comes back", sc: wide, loaded: []*placement.Binding{east, west, twin},
			want: []string{"oneBindingPerCluster"}},
		{name: "a decision that creates a binding on a non-member is caught by the rollout check and the state check", sc: wide, loaded: []*placement.Binding{east, west},
			change: func(st *state) { st.bindings["app-nowhere"] = binding("app-nowhere", "nowhere") },
			want:   []string{"tolerated", "bindingsOnKnownMembers", "noBindingsOnGoneMembers"}},
	}
	for _, s := range steps {
		got := decide(s.sc, s.loaded, s.change)
		if diff := cmp.Diff(s.want, got); diff != "" {
			t.Errorf("%s: reported invariants (-want +got):\n%s", s.name, diff)
		}
	}
}
