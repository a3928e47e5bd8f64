// plugins.go holds the plugin table: every filter and score plugin of the framework as one
// entry (its name, the placement types it runs for, its filter of one member and the
// columnar variant of that filter, its score, and the reason it gives for a member it
// filters out), and the small plugins' functions. The framework's stages read the table;
// none of them names a plugin.

package scheduler

import (
	"fmt"
	"math/bits"

	"github.com/fleetsim/fleetsim/model/mutant"
	"github.com/fleetsim/fleetsim/model/placement"
)

// Plugin names, as they appear in filter reasons.
const (
	PluginClusterEligibility        = "ClusterEligibility"
	PluginSamePlacementAntiAffinity = "SamePlacementAntiAffinity"
	PluginTaintToleration           = "TaintToleration"
	PluginClusterAffinity           = "ClusterAffinity"
	PluginTopologySpread            = "TopologySpreadConstraints"
)

// Parts of the plugins' reasons, worded as KubeFleet's scheduler words them.
const (
	reasonNotEligibleYet  = "cluster is not eligible for resource placement yet: "
	unschedulablePrefix   = "ClusterUnschedulable, "
	reasonAffinityNoMatch = "cluster does not match with any of the required cluster affinity terms"
)

// plugin is one scheduler plugin: a filter, a scorer, or both.
type plugin struct {
	// name is the plugin's name, as a filtered cluster's decision reports it.
	name string
	// scope is the placement types it filters for.
	scope scope

	// filter is the general path (filter.go): it admits one member, or rejects it and may
	// note why in mm.detail (or mm.elig) for reason to render. The member may hold a
	// binding of the placement (mm.slot). nil: the plugin filters no member by itself.
	filter func(d *decision, mm *memo) bool
	// narrow is filter's columnar variant, for the fast paths (filter.go's scan, the PickN
	// cache and the ranked path): it removes from set every member that filter would
	// reject, for members that hold no binding of the placement (members that hold one
	// take the general path). nil: the fast paths run filter on each member of the set.
	narrow func(d *decision, set bitset)
	// static says filter and narrow read only the policy and the fleet index (labels,
	// properties, taints), not agent status, the time or the bindings: the fast paths
	// apply static plugins before the others, and a PickN policy's cache (pickncache.go)
	// applies them once for as long as neither the policy nor the index changes.
	static bool
	// reason renders why filter rejected mm.
	reason func(d *decision, mm *memo) string

	// prepare makes score ready, once per decision (or per PickN cache derivation) before
	// any member is scored. nil: nothing to prepare.
	prepare func(d *decision)
	// score is a PickN candidate's score from this plugin (only PickN ranks candidates, so
	// scope does not apply). It must read only what a static filter reads (the PickN cache
	// keeps it). The scores of every score plugin add up to the candidate's affinity
	// score, which ranks candidates after the topology spread score (score.go) and is what
	// ClusterScore.AffinityScore reports. nil: not a score plugin.
	score func(d *decision, id int32) int32
}

// scope is a set of placement types.
type scope uint8

const (
	forPickAll scope = 1 << iota
	forPickN
	forPickFixed
	forAll = forPickAll | forPickN | forPickFixed
)

// has reports whether the scope holds the placement type.
func (s scope) has(t placement.PlacementType) bool {
	switch t {
	case placement.PickAll:
		return s&forPickAll != 0
	case placement.PickN:
		return s&forPickN != 0
	case placement.PickFixed:
		return s&forPickFixed != 0
	}
	return false
}

// plugins is the plugin table. Filters run in this order; the first that rejects a member
// names the plugin and the reason its decision reports. A member is first set aside by the
// framework, before any plugin, when a PickFixed placement does not name it or when it
// keeps a current binding (IgnoredDuringExecution).
//
// Adding a plugin is adding an entry here. A filter plugin touches: plugins.go (its entry
// and its functions: filter, reason and, if the per-member filter is too slow over
// thousands of members, narrow), plugins_test.go (its test; TestPluginFiltersAgree
// checks every entry's narrow against its filter), and compile.go only if it reads a
// part of the policy that compiledPolicy does not hold yet (the field, its compilation,
// and, for a static plugin, its part of the PickN cache's fingerprint). A score plugin
// touches the same three: plugins.go (entry, prepare and score), plugins_test.go and,
// for a new part of the policy, compile.go. Nothing else in the package changes. Outside
// it: a new policy field is an API change (model/placement), and internal/reference, the
// independent oracle the property tests compare every decision with, must be taught any
// plugin that changes the decisions those tests draw.
//
// TopologySpreadConstraints is the one plugin whose verdict depends on the picks already
// made: it filters (DoNotSchedule) and scores in PickN's selection rounds (topology.go),
// which report its rejections as codeTopology; its entry gives its name and reason.
var plugins = [...]plugin{
	{
		name:   PluginSamePlacementAntiAffinity,
		scope:  forAll,
		filter: (*decision).notDeleting,
		narrow: func(*decision, bitset) {}, // only a member holding a binding can have one being deleted
		reason: func(*decision, *memo) string {
			return unschedulablePrefix + "a binding of this placement on the cluster is still being deleted"
		},
	},
	{
		name:   PluginClusterEligibility,
		scope:  forAll,
		filter: (*decision).eligibleMember,
		narrow: (*decision).narrowEligible, // status.go
		reason: (*decision).reasonIneligible,
	},
	{
		name:   PluginTaintToleration,
		scope:  forPickAll | forPickN, // PickFixed ignores taints (TAINT-SCOPE)
		filter: (*decision).tolerated,
		narrow: (*decision).narrowTolerated,
		static: true,
		reason: func(d *decision, mm *memo) string {
			return unschedulablePrefix + "cluster has an untolerated taint " + d.member(mm).Taints[mm.detail].String()
		},
	},
	{
		name:    PluginClusterAffinity,
		scope:   forPickAll | forPickN, // PickFixed has no affinity
		filter:  (*decision).matchesRequired,
		narrow:  (*decision).narrowRequired, // affinity.go
		static:  true,
		reason:  func(*decision, *memo) string { return unschedulablePrefix + reasonAffinityNoMatch },
		prepare: (*decision).prepareAffinity, // affinity.go
		score:   (*decision).affinityOf,
	},
	{
		name:  PluginTopologySpread,
		scope: forPickN,
		reason: func(d *decision, mm *memo) string {
			c := d.policy.topology[mm.detail]
			return fmt.Sprintf("%sviolated topology spread constraint %q (max skew %d)", unschedulablePrefix, c.key, c.maxSkew)
		},
	},
}

// codeOf is the filter code of a rejection by the named plugin.
func codeOf(name string) filterCode {
	for i := range plugins {
		if plugins[i].name == name {
			return codeRejected + filterCode(i)
		}
	}
	panic("scheduler: no plugin " + name)
}

// plugin is the plugin that rejected a member with this code, or nil when the code is
// not a rejection.
func (c filterCode) plugin() *plugin {
	if c < codeRejected {
		return nil
	}
	return &plugins[c-codeRejected]
}

// SamePlacementAntiAffinity: no binding of the placement on the member is being deleted.
func (d *decision) notDeleting(mm *memo) bool {
	return mm.slot < 0 || !d.slots[mm.slot].deleting
}

// ClusterEligibility: the member may receive new placements at the decision's time.
func (d *decision) eligibleMember(mm *memo) bool {
	mm.elig = d.check(mm.id)
	return mm.elig.OK()
}

func (d *decision) reasonIneligible(mm *memo) string {
	if d.policy.typ == placement.PickFixed {
		return reasonNotEligibleYet + mm.elig.String()
	}
	return unschedulablePrefix + mm.elig.String()
}

// TaintToleration: the policy tolerates every taint of the member; mm.detail is the first
// one it does not.
func (d *decision) tolerated(mm *memo) bool {
	i := placement.FirstUntolerated(d.member(mm).Taints, d.policy.tolerations)
	if mutant.On("scheduler.firstTaintIgnored") && i == 0 {
		i = -1
	}
	if i >= 0 {
		mm.detail = int32(i)
		return false
	}
	return true
}

// narrowTolerated is tolerated over a set: only members carrying taints are looked at.
func (d *decision) narrowTolerated(set bitset) {
	for w := range set {
		for rest := set[w] & d.ix.tainted[w]; rest != 0; rest &= rest - 1 {
			id := int32(w*64 + bits.TrailingZeros64(rest))
			i := placement.FirstUntolerated(d.ix.ents[id].taints, d.policy.tolerations)
			if mutant.On("scheduler.firstTaintIgnored") && i == 0 {
				i = -1
			}
			if i >= 0 {
				set.clear(id)
			}
		}
	}
}

// ClusterAffinity: the member matches one of the required terms, if any.
func (d *decision) matchesRequired(mm *memo) bool {
	return d.policy.matchesRequired(d.member(mm))
}
