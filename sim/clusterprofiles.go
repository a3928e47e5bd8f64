package sim

import (
	"time"

	"github.com/fleetsim/fleetsim/model/clusterprofile"
	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/member"
)

// profileStore holds the ClusterProfiles the hub publishes in fleet-system, one per member
// cluster, kept in step with model/clusterprofile whenever the membership controller writes
// or removes a member (the moments the production hub's profile controller is woken too).
// Profiles are no controller's input, so their writes schedule no event and add nothing to
// the trace: runs without an expectation on them are unchanged.
type profileStore struct {
	now         func() time.Time
	eligibility member.EligibilityConfig
	byName      map[string]*profileRecord
}

// profileRecord is one stored ClusterProfile.
type profileRecord struct {
	clusterprofile.Profile
	conditions []condition.Timed
}

// profileGeneration is the generation of every profile: the hub writes its spec once.
const profileGeneration = 1

// sync brings the profile of member name (m nil: its MemberCluster is gone) to what the
// decision says.
func (ps *profileStore) sync(name string, m *member.Member) {
	now := ps.now()
	d := clusterprofile.Decide(clusterprofile.Input{Member: m, Now: now, Eligibility: ps.eligibility})
	if d.Profile == nil {
		delete(ps.byName, name)
		return
	}
	r := ps.byName[name]
	if r == nil {
		r = &profileRecord{}
		ps.byName[name] = r
	}
	r.Profile = *d.Profile
	condition.Set(&r.conditions, d.Profile.Healthy, profileGeneration, now)
}

// ClusterProfileStatus is a ClusterProfile as the simulated hub stores it.
type ClusterProfileStatus struct {
	Name              string      `json:"name"`
	Namespace         string      `json:"namespace"`
	DisplayName       string      `json:"displayName"`
	ClusterManager    string      `json:"clusterManager"`
	KubernetesVersion string      `json:"kubernetesVersion,omitempty"`
	Conditions        []Condition `json:"conditions"`
}

// ClusterProfile returns the ClusterProfile of member name, and whether it exists.
func (s *Sim) ClusterProfile(name string) (ClusterProfileStatus, bool) {
	r := s.store.profiles.byName[name]
	if r == nil {
		return ClusterProfileStatus{}, false
	}
	return ClusterProfileStatus{Name: r.Name, Namespace: clusterprofile.Namespace, DisplayName: r.DisplayName,
		ClusterManager: r.ClusterManager, KubernetesVersion: r.KubernetesVersion, Conditions: conditionsOf(r.conditions)}, true
}

// ClusterProfiles returns every ClusterProfile, by name.
func (s *Sim) ClusterProfiles() []ClusterProfileStatus {
	out := []ClusterProfileStatus{}
	for _, n := range sortedKeys(s.store.profiles.byName) {
		p, _ := s.ClusterProfile(n)
		out = append(out, p)
	}
	return out
}
