package fuzz

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/scenarios"
	"github.com/fleetsim/fleetsim/scenarios/runner"
	"github.com/fleetsim/fleetsim/sim"
)

// Target is a scenario file prepared for fuzzing.
type Target struct {
	Path string
	data []byte
	// Duration is how long each run lasts (the scenario's duration, or less with Until).
	Duration time.Duration
	// faultsEnd: no fault starts at or after it, and every fault ends by it, so that the
	// rest of the run shows the fleet recovering.
	faultsEnd time.Duration
	members   []memberInfo
	workloads []workloadRef
	// placements the scenario applies, for evictions; resources it applies for them to
	// select, for resource updates.
	placements []string
	resources  []resourceRef
	// pickN are the PickN placements' manifests, every version in time order, for scales.
	pickN []pickNRef
	// touched are members the scenario itself fails, taints, skews, edits or removes: their
	// state at the end is the scenario's business, not a convergence check's. all: the
	// scenario draws its own random faults, so no member is checked.
	touched    map[string]bool
	touchedAll bool
	// mem builds a campaign run's scenario in memory (nil: each run renders and parses).
	mem *inMemory
}

// recoveryTime is how long a member gets, after its last fault ends, to be Joined and
// Healthy again: a heartbeat period or two plus the hub's health window is well within it.
const recoveryTime = 6 * time.Minute

// convergent are the cluster members a schedule faulted (crash, partition, skew, taint)
// whose faults all ended recoveryTime before end, that the scenario leaves alone and that
// are not in skip (members the scenario makes unhealthy by itself: see unsteady).
func (t *Target) convergent(faults []Fault, end time.Duration, skip map[string]bool) []string {
	if t.touchedAll {
		return nil
	}
	last := map[string]time.Duration{}
	for _, f := range faults {
		switch f.Kind {
		case Crash, Partition, Skew, Taint:
			last[f.Member] = max(last[f.Member], f.End)
		}
	}
	var out []string
	for _, m := range t.members {
		if e, ok := last[m.name]; ok && m.cluster && !t.touched[m.name] && !skip[m.name] && e+recoveryTime <= end {
			out = append(out, m.name)
		}
	}
	return out
}

// Prepare reads a scenario for fuzzing; until, when positive and shorter, shortens its runs.
func Prepare(path string, data []byte, until time.Duration) (*Target, error) {
	sc, err := scenarios.Parse(path, data)
	if err != nil {
		return nil, err
	}
	t := &Target{Path: path, data: data, Duration: sc.Duration}
	if until > 0 && until < t.Duration {
		t.Duration = until
	}
	t.faultsEnd = t.Duration * 3 / 4
	leaves := map[string]bool{}
	t.touched, t.touchedAll = map[string]bool{}, sc.Faults != nil
	for _, st := range sc.Timeline {
		for _, m := range []string{memberOf(st)} {
			if m != "" {
				t.touched[m] = true
			}
		}
		switch st.Action {
		case scenarios.ActionDelete:
			if st.Delete.Kind == "MemberCluster" {
				leaves[st.Delete.Name] = true
			}
		case scenarios.ActionApply:
			for _, m := range st.Apply {
				switch m.Object.GetKind() {
				case "MemberCluster":
					t.touched[m.Object.GetName()] = true
				case "ClusterResourcePlacement":
					if !slices.Contains(t.placements, m.Object.GetName()) {
						t.placements = append(t.placements, m.Object.GetName())
					}
					if n, ok := pickNCount(m.Object.Object); ok {
						t.pickN = append(t.pickN, pickNRef{at: st.At, name: m.Object.GetName(), n: n, object: runtime.DeepCopyJSON(m.Object.Object)})
					}
				case "Deployment", "StatefulSet", "DaemonSet", "Job":
					w := workloadRef{kind: m.Object.GetKind(), name: m.Object.GetName(), namespace: m.Object.GetNamespace()}
					if !slices.Contains(t.workloads, w) {
						t.workloads = append(t.workloads, w)
					}
				}
				if selectable(m.Object.GetAPIVersion()) && !slices.ContainsFunc(t.resources, func(r resourceRef) bool {
					return sameObject(r.object, m.Object.Object)
				}) {
					t.resources = append(t.resources, resourceRef{at: st.At, object: runtime.DeepCopyJSON(m.Object.Object)})
				}
			}
		}
	}
	for _, g := range sc.Members {
		for _, n := range g.Names {
			if leaves[n] || g.JoinAt >= t.faultsEnd {
				continue
			}
			t.members = append(t.members, memberInfo{name: n, joinAt: g.JoinAt, cluster: g.Kind != member.KindMachine, labels: maps.Clone(g.Labels)})
		}
	}
	// Run once without faults: a scenario that does not run cannot be fuzzed.
	if _, err := t.render(1, nil, t.Duration, nil, false, nil); err != nil {
		return nil, err
	}
	if t.mem, err = t.prepareInMemory(); err != nil {
		return nil, err
	}
	return t, nil
}

// pickNCount is the numberOfClusters of a PickN placement's manifest (false: not PickN, or
// no count given).
func pickNCount(obj map[string]any) (int64, bool) {
	spec, _ := obj["spec"].(map[string]any)
	policy, _ := spec["policy"].(map[string]any)
	if t, _ := policy["placementType"].(string); t != "PickN" {
		return 0, false
	}
	n, ok := policy["numberOfClusters"].(int64)
	return n, ok
}

// selectable: an object of this apiVersion is a resource placements select, not a fleet
// API object (placements, members, overrides, evictions, staged runs).
func selectable(apiVersion string) bool {
	group, _, _ := strings.Cut(apiVersion, "/")
	return !strings.HasSuffix(group, "kubernetes-fleet.io")
}

// sameObject: two manifests of the same kind, namespace and name.
func sameObject(a, b map[string]any) bool {
	id := func(o map[string]any) string {
		md, _ := o["metadata"].(map[string]any)
		return fmt.Sprint(o["apiVersion"], "/", o["kind"], "/", md["namespace"], "/", md["name"])
	}
	return id(a) == id(b)
}

// memberOf is the member a scenario step changes, if any.
func memberOf(st scenarios.Step) string {
	switch {
	case st.Fail != nil:
		return st.Fail.Member
	case st.Heal != nil:
		return st.Heal.Member
	case st.Taint != nil:
		return st.Taint.Member
	case st.Untaint != nil:
		return st.Untaint.Member
	case st.Skew != nil:
		return st.Skew.Member
	case st.MemberHealth != nil:
		return st.MemberHealth.Member
	case st.Delete != nil && st.Delete.Kind == "MemberCluster":
		return st.Delete.Name
	}
	return ""
}

// render writes the scenario with the faults as timeline steps, the given seed and end,
// `always` set to the invariants (the scenario's own ones first when invariants is nil:
// every invariant), and no `expect` (faults legitimately change outcomes).
//
// converge adds, for each convergent member (but those in skip), the expectation that it is
// Joined and Healthy at the end: the convergence check once faults stop.
func (t *Target) render(seed uint64, faults []Fault, end time.Duration, invariants []string, converge bool, skip map[string]bool) ([]byte, error) {
	var members []string
	if converge {
		members = t.convergent(faults, end, skip)
	}
	return t.renderFor(seed, faults, end, invariants, members)
}

// renderFor is render with the members whose convergence is expected (none: no expect).
func (t *Target) renderFor(seed uint64, faults []Fault, end time.Duration, invariants []string, members []string) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(t.data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", t.Path, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: not a mapping", t.Path)
	}
	root := doc.Content[0]
	if invariants == nil {
		invariants = scenarios.InvariantNames()
	}
	set(root, "seed", scalar(fmt.Sprint(seed)))
	set(root, "duration", scalar(end.String()))
	del(root, "expect")
	if len(members) > 0 {
		n, err := expectNode(members)
		if err != nil {
			return nil, err
		}
		set(root, "expect", n)
	}
	always := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, n := range invariants {
		always.Content = append(always.Content, scalar(n))
	}
	set(root, "always", always)
	if f := get(root, "faults"); f != nil {
		if u := get(f, "until"); u != nil {
			if d, err := time.ParseDuration(u.Value); err != nil || d > end {
				del(f, "until")
			}
		}
	}
	tl := get(root, "timeline")
	if tl == nil {
		tl = &yaml.Node{Kind: yaml.SequenceNode}
		set(root, "timeline", tl)
	}
	// Steps after the end are dropped (a shortened run never reaches them).
	kept := tl.Content[:0]
	for _, st := range tl.Content {
		if at := get(st, "at"); at != nil {
			if d, err := time.ParseDuration(at.Value); err == nil && d > end {
				continue
			}
		}
		kept = append(kept, st)
	}
	tl.Content = kept
	steps, err := faultNodes(faults, end)
	if err != nil {
		return nil, err
	}
	tl.Content = append(tl.Content, steps...)
	return encode(&doc)
}

// faultNodes are the faults' timeline steps (those up to end), each with a comment naming
// its fault.
func faultNodes(faults []Fault, end time.Duration) ([]*yaml.Node, error) {
	var out []*yaml.Node
	for i, f := range faults {
		for _, st := range f.steps(end) {
			var v yaml.Node
			if err := v.Encode(st.Value); err != nil {
				return nil, err
			}
			if s, ok := st.Value.(string); ok {
				v = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s, Style: yaml.LiteralStyle}
			}
			n := &yaml.Node{Kind: yaml.MappingNode, HeadComment: fmt.Sprintf("fuzz fault %d: %s", i+1, f.Kind)}
			n.Content = append(n.Content, scalar("at"), scalar(st.At.String()), scalar(st.Action), &v)
			out = append(out, n)
		}
	}
	return out, nil
}

// expectNode is the `expect` list of the convergence check: each member Joined and
// Healthy at the end.
func expectNode(members []string) (*yaml.Node, error) {
	var exp []any
	for _, m := range members {
		for _, c := range []string{"Joined", "Healthy"} {
			exp = append(exp, map[string]any{"member": map[string]any{"name": m, "condition": map[string]any{"type": c, "status": "True"}}})
		}
	}
	var n yaml.Node
	if err := n.Encode(exp); err != nil {
		return nil, err
	}
	return &n, nil
}

// encode writes a YAML document as every fuzzed file is written.
func encode(doc *yaml.Node) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func scalar(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: v} }

func get(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func set(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, scalar(key), v)
}

func del(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = slices.Delete(m.Content, i, i+2)
			return
		}
	}
}

// outcome is what one run found.
type outcome struct {
	events    uint64
	traceHash string
	checks    int
	converge  int // convergence expectations checked
	// invariant, detail and at describe the first violation ("" when none).
	invariant, detail string
	at                time.Duration
}

// run renders and runs one schedule. strict runs it as `fleetsim run` would, ending at a
// scripted step the faults left nothing to act on; otherwise such a step is skipped.
//
// With converge, the members in skip get no convergence check. With skip nil, a member
// that fails its check is looked at again in the same seed's run without injected faults
// (unsteady): if the scenario makes it unhealthy there by itself, the faults are not blamed
// and the check does not count.
//
// A campaign's run (tolerant, the whole run, every invariant) is built in memory when the
// target allows it (inMemory); data, the rendered file, is then nil.
func (t *Target) run(seed uint64, faults []Fault, end time.Duration, invariants []string, strict, converge bool, skip map[string]bool) (outcome, []byte, error) {
	var members []string
	if converge {
		members = t.convergent(faults, end, skip)
	}
	var (
		sc   *scenarios.Scenario
		data []byte
		err  error
	)
	if t.mem != nil && !strict && end == t.Duration && invariants == nil {
		sc, err = t.mem.scenario(seed, faults, end, members)
	} else {
		if data, err = t.renderFor(seed, faults, end, invariants, members); err != nil {
			return outcome{}, nil, err
		}
		sc, err = scenarios.Parse(t.Path, data)
		if err != nil {
			err = fmt.Errorf("the fuzzed scenario does not parse: %w", err)
		}
	}
	if err != nil {
		return outcome{}, data, err
	}
	rep, err := runner.Run(sc, runner.Options{TolerateStepErrors: !strict})
	if err != nil {
		return outcome{}, data, err
	}
	o := outcome{events: rep.Events, traceHash: rep.TraceHash, checks: len(rep.Invariants), converge: len(rep.Expectations)}
	// The member of each convergence expectation, by line of the rendered file.
	memberAt := map[int]string{}
	for _, e := range sc.Expect {
		if e.Member != nil {
			memberAt[e.Line] = e.Member.Name
		}
	}
	var failed []runner.ExpectationResult
	for _, e := range rep.Expectations {
		if !e.Passed {
			failed = append(failed, e)
		}
	}
	if len(failed) > 0 && skip == nil {
		if skip, err = t.unsteady(seed); err != nil {
			return outcome{}, data, fmt.Errorf("the run without injected faults: %w", err)
		}
		excluded := map[string]bool{}
		for _, e := range rep.Expectations {
			if m := memberAt[e.Line]; skip[m] && !excluded[m] {
				excluded[m] = true
				o.converge -= 2 // its Joined and Healthy checks
			}
		}
	}
	for _, e := range failed {
		if !skip[memberAt[e.Line]] && o.invariant == "" {
			o.invariant, o.detail, o.at = Converged, fmt.Sprintf("once faults stopped, %s: %s", e.Description, e.Detail), end
		}
	}
	for _, inv := range rep.Invariants {
		if inv.Passed {
			continue
		}
		at, _ := time.ParseDuration(inv.At)
		if o.invariant == "" || at < o.at {
			o.invariant, o.detail, o.at = inv.Name, inv.Detail, at
		}
	}
	return o, data, nil
}

// unsteady runs the scenario with the seed, for the whole run, without injected faults and
// returns the cluster members that are not Joined and Healthy from the moment they first
// are to the end: a member whose own heartbeat period outlasts the hub's health timeout,
// one whose heartbeats the scenario's network loses. The scenario makes them unhealthy by
// itself, so the convergence check cannot blame an injected fault for their state.
func (t *Target) unsteady(seed uint64) (map[string]bool, error) {
	data, err := t.render(seed, nil, t.Duration, []string{}, false, nil)
	if err != nil {
		return nil, err
	}
	sc, err := scenarios.Parse(t.Path, data)
	if err != nil {
		return nil, err
	}
	type health struct{ joined, healthy, up, dropped bool }
	seen := map[string]*health{}
	watch := func(_ time.Duration, kind, subject, detail string) {
		if kind != "member-condition" {
			return
		}
		// detail is "Type=Status Reason: message" (hub.ConditionText).
		typ, rest, _ := strings.Cut(detail, "=")
		status, _, _ := strings.Cut(rest, " ")
		h := seen[subject]
		if h == nil {
			h = &health{}
			seen[subject] = h
		}
		switch typ {
		case "Joined":
			h.joined = status == "True"
		case "Healthy":
			h.healthy = status == "True"
		default:
			return
		}
		if h.joined && h.healthy {
			h.up = true
		} else if h.up {
			h.dropped = true
		}
	}
	rep, err := runner.Run(sc, runner.Options{TolerateStepErrors: true, Setup: func(s *sim.Sim, _ time.Duration) { s.Observe(watch) }})
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, m := range rep.Members {
		h := seen[m.Name]
		if h == nil || !h.up || h.dropped || !conditionTrue(m.Conditions, "Joined") || !conditionTrue(m.Conditions, "Healthy") {
			out[m.Name] = true
		}
	}
	return out, nil
}

func conditionTrue(cs []runner.Condition, typ string) bool {
	for _, c := range cs {
		if c.Type == typ {
			return c.Status == "True"
		}
	}
	return false
}

// header is the comment on top of a written failure.
func header(f *Failure) string {
	return strings.Join([]string{
		"# Written by `fleetsim fuzz`: a minimal failing schedule, shrunk from " + fmt.Sprint(f.OriginalFaults) + " faults to " + fmt.Sprint(f.Faults) + ".",
		fmt.Sprintf("# Campaign seed %d, run %d (%s); invariant %s violated at %s:", f.CampaignSeed, f.Run, f.Source, f.Invariant, f.At),
		"#   " + strings.ReplaceAll(f.Detail, "\n", "\n#   "),
		replayLine(f),
		"",
	}, "\n")
}

func replayLine(f *Failure) string {
	if f.Replays {
		return "# Replay: fleetsim run THIS-FILE"
	}
	return "# Replay: fleetsim run THIS-FILE stops at a scripted step these faults left nothing to act on,\n" +
		"# before the violation; `fleetsim fuzz` skips such steps (the runner's TolerateStepErrors)."
}
