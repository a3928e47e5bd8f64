package fuzz

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/runtime"
)

// Kind names a kind of fault.
type Kind string

const (
	Crash           Kind = "crash"
	Partition       Kind = "partition"
	Taint           Kind = "taint"
	Label           Kind = "label"
	Skew            Kind = "skew"
	RestartHub      Kind = "restartHub"
	Workload        Kind = "workload"
	MemberJoinLeave Kind = "memberJoinLeave"
	Eviction        Kind = "eviction"
	// ResourceUpdate re-applies one of the scenario's selected resources with a new label:
	// a new resource snapshot, so every placement selecting it rolls out again under the
	// other faults (the rollout budgets, the unavailable period, evictions during a rollout).
	ResourceUpdate Kind = "resourceUpdate"
	// Scale re-applies a PickN placement of the scenario (as last applied before the fault)
	// with another numberOfClusters, one to two below or one above: the scheduler scales the
	// placement in or out mid-run, under the other faults. The change lasts to the end, so a
	// placement left above its new count is seen at the end of the run.
	Scale Kind = "scale"
	// MemberUnhealthy makes a cluster's agent report its cluster unhealthy for a while, then
	// healthy again: the hub must show the member Healthy=False meanwhile and schedule
	// nothing new to it.
	MemberUnhealthy Kind = "memberUnhealthy"
)

// Kinds are every fault kind, the default of a campaign. A new kind goes last: a campaign
// with --faults listing the earlier ones draws what it drew before the kind existed.
var Kinds = []Kind{Crash, Partition, Taint, Label, Skew, RestartHub, Workload, MemberJoinLeave, Eviction, ResourceUpdate, Scale, MemberUnhealthy}

// ParseKinds reads a comma-separated list of fault kinds ("" is every kind).
func ParseKinds(s string) ([]Kind, error) {
	if strings.TrimSpace(s) == "" {
		return slices.Clone(Kinds), nil
	}
	var out []Kind
	for _, part := range strings.Split(s, ",") {
		k := Kind(strings.TrimSpace(part))
		if !slices.Contains(Kinds, k) {
			return nil, fmt.Errorf("fault kind %q is not one of %s", k, joinKinds(Kinds))
		}
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out, nil
}

func joinKinds(ks []Kind) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return strings.Join(s, ",")
}

// Fault is one injected fault: it starts At and, for faults that end (everything but a hub
// restart), is undone at End. A fault whose End is past the run's end is never undone.
type Fault struct {
	Kind   Kind
	At     time.Duration
	End    time.Duration
	Member string
	// Key and Value: the taint, or the label removed (Value is restored at End; when the
	// member had no label, Key is set to Value and removed at End).
	Key, Value string
	Restore    bool
	// Offset is a clock skew.
	Offset time.Duration
	// Behavior, WKind, WName, WNamespace: a workload turning unavailable or failing to apply.
	Behavior, WKind, WName, WNamespace string
	// Labels of a joining member (copied from an existing one, so selectors match it).
	Labels map[string]string
	// Placement and Name: an eviction of Placement from Member.
	Placement, Name string
	// earliest is the first time the fault may start (what it acts on exists).
	earliest time.Duration
	// Resource is the object a resource update applies (with its new label), or the
	// placement a scale applies (with its new numberOfClusters).
	Resource map[string]any
}

// revisionLabel is the label a resource update sets, to the fault's number.
const revisionLabel = "fuzz.fleetsim.io/revision"

// step is one rendered timeline step: at and a single action.
type step struct {
	At     time.Duration
	Action string
	Value  any
}

// steps renders the fault as timeline steps; steps after end are left out.
func (f Fault) steps(end time.Duration) []step {
	var out []step
	add := func(at time.Duration, action string, v any) {
		if at <= end {
			out = append(out, step{At: at, Action: action, Value: v})
		}
	}
	m := f.Member
	switch f.Kind {
	case Crash, Partition:
		add(f.At, "fail", map[string]any{"member": m, "mode": string(f.Kind)})
		add(f.End, "heal", map[string]any{"member": m})
	case Taint:
		add(f.At, "taint", map[string]any{"member": m, "key": f.Key, "effect": "NoSchedule"})
		add(f.End, "untaint", map[string]any{"member": m, "key": f.Key})
	case Label:
		if f.Restore {
			add(f.At, "label", map[string]any{"member": m, "remove": []any{f.Key}})
			add(f.End, "label", map[string]any{"member": m, "set": map[string]any{f.Key: f.Value}})
		} else {
			add(f.At, "label", map[string]any{"member": m, "set": map[string]any{f.Key: f.Value}})
			add(f.End, "label", map[string]any{"member": m, "remove": []any{f.Key}})
		}
	case Skew:
		add(f.At, "skew", map[string]any{"member": m, "offset": f.Offset.String()})
		add(f.End, "skew", map[string]any{"member": m, "offset": "0s"})
	case MemberUnhealthy:
		add(f.At, "memberHealth", map[string]any{"member": m, "healthy": false})
		add(f.End, "memberHealth", map[string]any{"member": m, "healthy": true})
	case RestartHub:
		add(f.At, "restartHub", map[string]any{})
	case Workload:
		w := map[string]any{"member": m, "kind": f.WKind, "name": f.WName, "behavior": f.Behavior}
		if f.WNamespace != "" {
			w["namespace"] = f.WNamespace
		}
		add(f.At, "workload", w)
		back := maps.Clone(w)
		back["behavior"] = "available"
		add(f.End, "workload", back)
	case MemberJoinLeave:
		var sb strings.Builder
		fmt.Fprintf(&sb, "apiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: MemberCluster\nmetadata:\n  name: %s\n", m)
		if len(f.Labels) > 0 {
			sb.WriteString("  labels:\n")
			for _, k := range slices.Sorted(maps.Keys(f.Labels)) {
				fmt.Fprintf(&sb, "    %q: %q\n", k, f.Labels[k])
			}
		}
		sb.WriteString("spec:\n  heartbeatPeriodSeconds: 60\n")
		add(f.At, "apply", sb.String())
		add(f.End, "delete", map[string]any{"kind": "MemberCluster", "name": m})
	case ResourceUpdate, Scale:
		text, err := yaml.Marshal(f.Resource)
		if err == nil { // a map of a parsed manifest always marshals
			add(f.At, "apply", string(text))
		}
	case Eviction:
		add(f.At, "apply", fmt.Sprintf("apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ClusterResourcePlacementEviction\nmetadata:\n  name: %s\nspec:\n  placementName: %s\n  clusterName: %s\n", f.Name, f.Placement, m))
	}
	return out
}

// memberInfo is a member faults may target.
type memberInfo struct {
	name    string
	joinAt  time.Duration
	cluster bool
	labels  map[string]string
}

// workloadRef is a trackable workload the scenario applies.
type workloadRef struct{ kind, name, namespace string }

// resourceRef is an object the scenario applies on the hub for placements to select (not a
// fleet API object), and when it is first applied.
type resourceRef struct {
	at     time.Duration
	object map[string]any
}

// pickNRef is a PickN placement the scenario applies, and when; the scenario may apply it
// again later (a spec change), so a target keeps every version.
type pickNRef struct {
	at     time.Duration
	name   string
	n      int64
	object map[string]any
}

// draw generates a fault schedule of 1..maxFaults faults, all starting before faultsEnd.
func (t *Target) draw(r *rand.Rand, kinds []Kind, maxFaults int) []Fault {
	n := 1 + r.IntN(maxFaults)
	var out []Fault
	joins := 0
	for j := range n {
		k := kinds[r.IntN(len(kinds))]
		f, ok := t.drawOne(r, k, &joins)
		if k == Eviction {
			f.Name = fmt.Sprintf("fuzz-eviction-%d", j+1)
		}
		if ok {
			out = append(out, f)
		}
	}
	t.correlate(r, out)
	slices.SortStableFunc(out, func(a, b Fault) int { return int(a.At - b.At) })
	return out
}

// correlate re-times some of a run's faults onto another fault of the same run, so that
// the states the rollout and eviction arithmetic must get right occur more often than
// independent times make them (deterministically: every choice is drawn from r):
//
//   - a resource update (a rollout step) half of the time starts at, or up to a minute
//     after, another fault's start or end: a scale-in or a member leaving (ready bindings
//     being deleted during the rollout), a scale-out, a member joining or a workload
//     turning available again (new bindings inside the unavailable period of untrackable
//     resources), or another update;
//   - an eviction half of the time starts while another fault keeps a cluster unavailable
//     (a crash, a partition, an unhealthy member, an unavailable workload), so the
//     disruption budget must count the clusters already unavailable.
//
// A re-timed fault stays within its bounds (not before what it acts on exists, not after
// the faults' end); faults are sorted by time afterwards.
func (t *Target) correlate(r *rand.Rand, fs []Fault) {
	dur := func(lo, hi time.Duration) time.Duration {
		return (lo + time.Duration(r.Int64N(int64(hi-lo)+1))).Truncate(time.Second)
	}
	for j := range fs {
		f := &fs[j]
		if (f.Kind != ResourceUpdate && f.Kind != Eviction) || r.IntN(2) == 0 {
			continue
		}
		var at []time.Duration
		for i, a := range fs {
			if i == j {
				continue
			}
			switch {
			case f.Kind == ResourceUpdate && a.Kind != RestartHub:
				at = append(at, a.At, a.End)
			case f.Kind == Eviction && a.End > a.At && slices.Contains([]Kind{Crash, Partition, MemberUnhealthy, Workload}, a.Kind):
				at = append(at, a.At+dur(0, a.End-a.At))
			}
		}
		if len(at) == 0 {
			continue
		}
		x := at[r.IntN(len(at))]
		if f.Kind == ResourceUpdate {
			x += dur(0, time.Minute)
		}
		if x >= f.earliest && x < t.faultsEnd {
			f.At, f.End = x, x
		}
	}
}

func (t *Target) drawOne(r *rand.Rand, k Kind, joins *int) (Fault, bool) {
	dur := func(lo, hi time.Duration) time.Duration {
		return (lo + time.Duration(r.Int64N(int64(hi-lo)+1))).Truncate(time.Second)
	}
	pick := func(clusterOnly bool) (memberInfo, bool) {
		var c []memberInfo
		for _, m := range t.members {
			if (!clusterOnly || m.cluster) && m.joinAt+time.Second < t.faultsEnd {
				c = append(c, m)
			}
		}
		if len(c) == 0 {
			return memberInfo{}, false
		}
		return c[r.IntN(len(c))], true
	}
	start := func(after time.Duration) time.Duration {
		lo := after + time.Second
		return dur(lo, max(lo, t.faultsEnd-time.Second))
	}
	f := Fault{Kind: k}
	switch k {
	case Crash, Partition, Taint, Label, Skew, Workload, MemberUnhealthy:
		m, ok := pick(k != Crash && k != Partition)
		if !ok {
			return f, false
		}
		f.Member, f.At = m.name, start(m.joinAt)
		f.End = min(f.At+dur(5*time.Second, 5*time.Minute), t.faultsEnd)
		switch k {
		case Taint:
			f.Key = "fuzz.fleetsim.io/taint"
		case Label:
			if len(m.labels) > 0 {
				keys := slices.Sorted(maps.Keys(m.labels))
				f.Key = keys[r.IntN(len(keys))]
				f.Value, f.Restore = m.labels[f.Key], true
			} else {
				f.Key, f.Value = "fuzz-label", "x"
			}
		case Skew:
			f.Offset = -dur(time.Minute, 15*time.Minute)
		case Workload:
			if len(t.workloads) == 0 {
				return f, false
			}
			w := t.workloads[r.IntN(len(t.workloads))]
			f.WKind, f.WName, f.WNamespace = w.kind, w.name, w.namespace
			f.Behavior = []string{"unavailable", "applyFails"}[r.IntN(2)]
		}
	case RestartHub:
		f.At = start(0)
		f.End = f.At
	case Eviction:
		m, ok := pick(true)
		if !ok || len(t.placements) == 0 {
			return f, false
		}
		f.Member, f.Placement = m.name, t.placements[r.IntN(len(t.placements))]
		f.At, f.earliest = start(m.joinAt), m.joinAt+time.Second
		f.End = f.At
	case ResourceUpdate:
		if len(t.resources) == 0 || len(t.placements) == 0 {
			return f, false
		}
		res := t.resources[r.IntN(len(t.resources))]
		f.At, f.earliest = start(res.at), res.at+time.Second
		f.End = f.At
		f.Resource = withLabel(res.object, revisionLabel, fmt.Sprint(1+r.IntN(1_000_000)))
	case Scale:
		if len(t.pickN) == 0 {
			return f, false
		}
		first := t.pickN[r.IntN(len(t.pickN))]
		f.At = start(first.at)
		// The placement as last applied at or before the fault (versions are in time order).
		ref := first
		for _, v := range t.pickN {
			if v.name == first.name && v.at <= f.At {
				ref = v
			}
		}
		f.End = f.At
		f.Placement = ref.name
		n := ref.n + []int64{-2, -1, -1, 1}[r.IntN(4)]
		f.Resource = withNumberOfClusters(ref.object, max(n, 0))
	case MemberJoinLeave:
		*joins++
		f.Member = fmt.Sprintf("fuzz-member-%d", *joins)
		if m, ok := pick(true); ok {
			f.Labels = m.labels
		}
		f.At = start(0)
		f.End = min(f.At+dur(30*time.Second, 10*time.Minute), t.faultsEnd)
	}
	return f, true
}

// withLabel returns a copy of a manifest's object with the label set.
func withLabel(obj map[string]any, key, value string) map[string]any {
	c := runtime.DeepCopyJSON(obj)
	md, _ := c["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		c["metadata"] = md
	}
	labels, _ := md["labels"].(map[string]any)
	if labels == nil {
		labels = map[string]any{}
		md["labels"] = labels
	}
	labels[key] = value
	return c
}

// withNumberOfClusters returns a copy of a placement's manifest with another
// spec.policy.numberOfClusters.
func withNumberOfClusters(obj map[string]any, n int64) map[string]any {
	c := runtime.DeepCopyJSON(obj)
	spec, _ := c["spec"].(map[string]any)
	policy, _ := spec["policy"].(map[string]any)
	if policy != nil { // a pickNRef always has one
		policy["numberOfClusters"] = n
	}
	return c
}
