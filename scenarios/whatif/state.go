package whatif

// State: what the fleet holds at one instant, as a preview compares it before and after a
// change and as --verify compares it with a real hub: each placement's bindings (cluster,
// state and the scheduler's reason) and the manifests each cluster receives, after
// overrides.

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	sigsyaml "sigs.k8s.io/yaml"

	mhub "github.com/fleetsim/fleetsim/model/hub"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/rollout"
	"github.com/fleetsim/fleetsim/sim"
)

// State is every placement's bindings and Works at one instant.
type State struct {
	Placements map[string]*PlacementState `json:"placements"`
}

// PlacementState is one placement: its clusters with a Scheduled or Bound binding.
type PlacementState struct {
	Clusters map[string]*ClusterState `json:"clusters"`
	// reasons are the scheduler's reasons for every cluster it decided on, picked or not.
	reasons map[string]string
	// ready counts the placement's ready bindings, Bound or Unscheduled (not yet removed).
	ready int
}

// ClusterState is one cluster of a placement.
type ClusterState struct {
	// Binding is the binding's state: Scheduled or Bound.
	Binding placement.BindingState `json:"binding"`
	// Reason is the scheduler's reason for the cluster (its cluster decision).
	Reason string `json:"reason,omitempty"`
	// Available: the binding is ready as the rollout counts it (Available True at its
	// generation, past the unavailable period for untrackable resources; DiffReported for
	// ReportDiff).
	Available bool `json:"available"`
	// Manifests are what the cluster's Works hold, after overrides, sorted by identity.
	Manifests []Manifest `json:"manifests,omitempty"`
}

// Manifest is one manifest of a Work: its identity (group/version/kind/namespace/name) and
// its YAML.
type Manifest struct {
	ID   string `json:"id"`
	YAML string `json:"yaml"`
}

// Clusters returns a placement's clusters, sorted; none when the placement does not exist.
func (s State) Clusters(name string) []string {
	p := s.Placements[name]
	if p == nil {
		return nil
	}
	return sortedKeys(p.Clusters)
}

func (s State) cluster(p, c string) *ClusterState {
	if ps := s.Placements[p]; ps != nil {
		return ps.Clusters[c]
	}
	return nil
}

// Capture reads the State from a simulator.
func Capture(s *sim.Sim) State {
	st := captureBindings(s)
	AddWorks(st, s.Works())
	return st
}

// captureBindings is Capture without the Works (availability samples need no manifests).
func captureBindings(s *sim.Sim) State {
	st := State{Placements: map[string]*PlacementState{}}
	now := s.Now()
	for _, p := range s.Placements() {
		reasons := map[string]string{}
		ps := &PlacementState{Clusters: map[string]*ClusterState{}, reasons: reasons}
		for _, d := range p.Decisions {
			reasons[d.ClusterName] = decisionReason(d)
		}
		period := time.Duration(rollout.DefaultUnavailablePeriodSeconds) * time.Second
		if crp, ok := s.PlacementSpec(p.Name); ok {
			if ru := crp.Spec.Strategy.RollingUpdate; ru != nil && ru.UnavailablePeriodSeconds != nil {
				period = time.Duration(max(*ru.UnavailablePeriodSeconds, 0)) * time.Second
			}
		}
		for _, b := range s.Bindings(p.Name) {
			ready, _ := rollout.Ready(&b, now, period)
			if ready && (b.State == placement.Bound || b.State == placement.Unscheduled) {
				ps.ready++
			}
			if b.State != placement.Scheduled && b.State != placement.Bound {
				continue
			}
			ps.Clusters[b.TargetCluster] = &ClusterState{Binding: b.State, Reason: reasons[b.TargetCluster], Available: ready}
		}
		st.Placements[p.Name] = ps
	}
	return st
}

// AddWorks adds the manifests of Works to the clusters of st they belong to.
func AddWorks(st State, works []mhub.Work) {
	for _, w := range works {
		c := st.cluster(w.Placement, w.Member)
		if c == nil {
			continue
		}
		for _, m := range w.Manifests {
			c.Manifests = append(c.Manifests, NewManifest(m))
		}
	}
	for _, p := range st.Placements {
		for _, c := range p.Clusters {
			slices.SortFunc(c.Manifests, func(a, b Manifest) int { return cmp.Compare(a.ID, b.ID) })
		}
	}
}

// NewManifest renders a manifest for comparison.
func NewManifest(o *unstructured.Unstructured) Manifest {
	gvk := o.GroupVersionKind()
	id := strings.Join([]string{gvk.Group, gvk.Version, gvk.Kind, o.GetNamespace(), o.GetName()}, "/")
	y, err := sigsyaml.Marshal(o.Object)
	if err != nil {
		y = []byte(fmt.Sprintf("# cannot render: %v\n", err))
	}
	return Manifest{ID: id, YAML: string(y)}
}

func decisionReason(d placement.ClusterDecision) string {
	r := d.Reason
	if d.Plugin != "" {
		r += " (" + d.Plugin + ")"
	}
	if s := d.ClusterScore; s != nil && (s.AffinityScore != 0 || s.TopologySpreadScore != 0) {
		r += fmt.Sprintf(" [affinity score %d, topology spread score %d]", s.AffinityScore, s.TopologySpreadScore)
	}
	return r
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
