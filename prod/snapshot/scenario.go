package snapshot

// Writing what was read as a scenario: members (and machines) as they are, the hub's
// objects applied at 1m, staged runs and pending evictions at 2m, units submitted, loaded
// or started as desired, each placement's bindings in `initial:`, and an expectation per
// placement that the simulator holds the captured clusters.

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	sigsyaml "sigs.k8s.io/yaml"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	"github.com/fleetsim/fleetsim/apis/convert"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/placement"
)

// When the captured state is applied in the scenario: members join at 0; the hub's
// objects at applyAt; staged runs and pending evictions, which act on bindings, at
// actAt; the scenario runs until endAt, when the captured clusters are expected.
const (
	applyAt = time.Minute
	actAt   = 2 * time.Minute
	endAt   = 10 * time.Minute
)

// Snapshot is a hub captured as a scenario.
type Snapshot struct {
	// Scenario is the scenario file's text.
	Scenario []byte
	// Captured counts what the scenario holds, by kind.
	Captured map[string]int
	// Missed says what the scenario could not hold, one line each.
	Missed []string
}

// Take reads a hub with list calls and writes it as a scenario named name.
func Take(ctx context.Context, c client.Reader, name string) (*Snapshot, error) {
	h, err := Read(ctx, c)
	if err != nil {
		return nil, err
	}
	return h.Scenario(name)
}

// Scenario writes what was read as a scenario named name.
func (h *Hub) Scenario(name string) (*Snapshot, error) {
	s := &Snapshot{Captured: map[string]int{}}
	for _, f := range h.listsFailed {
		s.Missed = append(s.Missed, "not listed: "+f)
	}
	doc := scenarioDoc{Name: name, Duration: endAt.String(), Initial: &initialDoc{},
		Description: "A hub captured by fleetsim snapshot: members, machines and units, the hub's objects, and each\nplacement's bindings as they were (initial.bindings)."}

	for i := range h.Members {
		m, missed := memberEntry(&h.Members[i])
		s.Missed = append(s.Missed, missed...)
		if m != nil {
			doc.Members = append(doc.Members, *m)
			s.Captured["MemberCluster"]++
		}
	}
	for i := range h.Machines {
		mc := &h.Machines[i]
		meta := map[string]string{}
		maps.Copy(meta, mc.Spec.Metadata)
		doc.Members = append(doc.Members, memberDoc{Name: mc.Name, Kind: string(member.KindMachine), Metadata: meta})
		s.Captured["Machine"]++
	}

	var hubObjects []*unstructured.Unstructured
	resources, missed := h.selectedResources()
	s.Missed = append(s.Missed, missed...)
	hubObjects = append(hubObjects, resources...)
	s.Captured["selected resource"] = len(resources)
	add := func(kind string, o any, err error) {
		if err != nil {
			s.Missed = append(s.Missed, fmt.Sprintf("%s: %v", kind, err))
			return
		}
		hubObjects = append(hubObjects, o.(*unstructured.Unstructured))
		s.Captured[kind]++
	}
	pv := v1beta1.GroupVersion.String()
	for i := range h.CROs {
		u, err := toUnstructured(&h.CROs[i], pv, "ClusterResourceOverride")
		if err == nil {
			dropDefaultSelectionScope(u)
		}
		add("ClusterResourceOverride", u, err)
	}
	for i := range h.ROs {
		u, err := toUnstructured(&h.ROs[i], pv, "ResourceOverride")
		add("ResourceOverride", u, err)
	}
	for i := range h.Budgets {
		u, err := toUnstructured(&h.Budgets[i], pv, "ClusterResourcePlacementDisruptionBudget")
		add("ClusterResourcePlacementDisruptionBudget", u, err)
	}
	for i := range h.Strategies {
		u, err := toUnstructured(&h.Strategies[i], pv, "ClusterStagedUpdateStrategy")
		add("ClusterStagedUpdateStrategy", u, err)
	}
	live := h.liveBindings()
	for i := range h.Placements {
		crp := &h.Placements[i]
		if crp.DeletionTimestamp != nil {
			s.Missed = append(s.Missed, fmt.Sprintf("placement %s is being deleted: left out", crp.Name))
			continue
		}
		u, err := toUnstructured(crp, pv, "ClusterResourcePlacement")
		add("ClusterResourcePlacement", u, err)
		if err == nil {
			doc.Initial.Bindings = append(doc.Initial.Bindings, bindingsDoc{Placement: crp.Name, Clusters: orEmpty(live[crp.Name])})
			doc.Expect = append(doc.Expect, expectDoc{Placement: placementExpectDoc{Name: crp.Name, Clusters: orEmpty(live[crp.Name])}})
		}
	}
	for _, b := range h.Bindings {
		if b.DeletionTimestamp == nil && placement.BindingState(b.Spec.State) == placement.Unscheduled {
			s.Missed = append(s.Missed, fmt.Sprintf("binding %s (placement %s on %s) is Unscheduled: the simulator does not start with it (its cluster keeps nothing of the placement)", b.Name, b.Labels[v1beta1.CRPTrackingLabel], b.Spec.TargetCluster))
		}
	}
	if len(hubObjects) > 0 {
		text, err := manifests(hubObjects)
		if err != nil {
			return nil, err
		}
		doc.Timeline = append(doc.Timeline, stepDoc{At: applyAt.String(), Apply: text})
	}

	var acts []*unstructured.Unstructured
	latestIndex := h.latestResourceIndex()
	for i := range h.Runs {
		r := h.Runs[i].DeepCopy()
		idx, ok := latestIndex[r.Spec.PlacementName]
		if !ok || r.Spec.ResourceSnapshotIndex != strconv.Itoa(idx) {
			s.Missed = append(s.Missed, fmt.Sprintf("staged run %s rolls out resource snapshot %s of %s, not the latest: left out (the simulator keeps only the latest resources)", r.Name, r.Spec.ResourceSnapshotIndex, r.Spec.PlacementName))
			continue
		}
		r.Spec.ResourceSnapshotIndex = "0"
		if len(r.Status.Conditions) > 0 {
			s.Missed = append(s.Missed, fmt.Sprintf("staged run %s starts again from its first stage (its progress and approvals are not captured)", r.Name))
		}
		u, err := toUnstructured(r, pv, "ClusterStagedUpdateRun")
		if err != nil {
			s.Missed = append(s.Missed, fmt.Sprintf("ClusterStagedUpdateRun %s: %v", r.Name, err))
			continue
		}
		acts = append(acts, u)
		s.Captured["ClusterStagedUpdateRun"]++
	}
	if n := len(h.Approvals); n > 0 {
		s.Missed = append(s.Missed, fmt.Sprintf("%d ClusterApprovalRequest(s): the simulator's staged runs ask again, unapproved", n))
	}
	for i := range h.Evictions {
		e := &h.Evictions[i]
		if convert.EvictionToModel(e).Terminal() {
			s.Missed = append(s.Missed, fmt.Sprintf("eviction %s is already reconciled: its effect is in the bindings, the eviction is left out", e.Name))
			continue
		}
		u, err := toUnstructured(e, pv, "ClusterResourcePlacementEviction")
		if err != nil {
			s.Missed = append(s.Missed, fmt.Sprintf("ClusterResourcePlacementEviction %s: %v", e.Name, err))
			continue
		}
		acts = append(acts, u)
		s.Captured["ClusterResourcePlacementEviction"]++
	}
	if len(acts) > 0 {
		text, err := manifests(acts)
		if err != nil {
			return nil, err
		}
		doc.Timeline = append(doc.Timeline, stepDoc{At: actAt.String(), Apply: text})
	}
	for i := range h.Units {
		u := &h.Units[i]
		cmd := map[string]string{"inactive": "submit", "loaded": "load", "launched": "start"}[u.Spec.DesiredState]
		if cmd == "" {
			s.Missed = append(s.Missed, fmt.Sprintf("unit %s: desired state %q is not one of inactive, loaded, launched", u.Spec.Name, u.Spec.DesiredState))
			continue
		}
		doc.Timeline = append(doc.Timeline, stepDoc{At: applyAt.String(), Fleetctl: &fleetctlDoc{Command: cmd, Unit: u.Spec.Name, File: u.Spec.File}})
		s.Captured["Unit"]++
	}
	if len(doc.Initial.Bindings) == 0 {
		doc.Initial = nil
	}
	s.Missed = append(s.Missed,
		"policy and resource snapshot history: the simulator starts each placement at snapshot index 0 with its current policy and latest resources",
		"each Work's status and the objects on the members (drift, diffs, objects applied by other means): the simulator's members apply what their Works say, and it becomes available",
		"the hub's flags (propagation filters, workers): give them in the scenario (propagation:, hub:) when they differ from the defaults")
	out, err := yaml.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("writing the scenario: %w", err)
	}
	var b strings.Builder
	b.WriteString("# Captured by fleetsim snapshot. What it could not capture:\n")
	for _, m := range s.Missed {
		b.WriteString("#   - " + strings.ReplaceAll(m, "\n", " ") + "\n")
	}
	b.Write(out)
	s.Scenario = []byte(b.String())
	s.Missed = append(s.Missed, check(name, s.Scenario)...)
	return s, nil
}

// dropDefaultSelectionScope removes the selectionScope the API server defaults on a
// ClusterResourceOverride's selectors (the CRD shares the placement's selector type), which
// an override as KubeFleet documents it does not have.
func dropDefaultSelectionScope(u *unstructured.Unstructured) {
	sels, found, _ := unstructured.NestedSlice(u.Object, "spec", "clusterResourceSelectors")
	if !found {
		return
	}
	for _, s := range sels {
		if m, ok := s.(map[string]any); ok && m["selectionScope"] == "NamespaceWithResources" {
			delete(m, "selectionScope")
		}
	}
	_ = unstructured.SetNestedSlice(u.Object, sels, "spec", "clusterResourceSelectors")
}

// latestResourceIndex is each placement's latest resource snapshot index.
func (h *Hub) latestResourceIndex() map[string]int {
	out := map[string]int{}
	for _, s := range h.Snapshots {
		crp := s.Labels[v1beta1.CRPTrackingLabel]
		idx, err := strconv.Atoi(s.Labels[v1beta1.ResourceIndexLabel])
		if err != nil {
			continue
		}
		if cur, ok := out[crp]; !ok || idx > cur {
			out[crp] = idx
		}
	}
	return out
}

// memberEntry is a MemberCluster as a `members` entry, and what of it is not captured.
func memberEntry(mc *clusterv1beta1.MemberCluster) (*memberDoc, []string) {
	var missed []string
	if mc.DeletionTimestamp != nil {
		return nil, []string{fmt.Sprintf("member %s is leaving: left out", mc.Name)}
	}
	m := &memberDoc{Name: mc.Name, Labels: mc.Labels}
	if p := mc.Spec.HeartbeatPeriodSeconds; p > 0 {
		m.HeartbeatPeriod = (time.Duration(p) * time.Second).String()
	}
	for _, t := range mc.Spec.Taints {
		m.Taints = append(m.Taints, taintDoc{Key: t.Key, Value: t.Value, Effect: string(t.Effect)})
	}
	props := map[string]clusterv1beta1.PropertyValue{}
	for k, v := range mc.Status.Properties {
		props[string(k)] = v
	}
	for _, name := range sortedKeys(props) {
		v := props[name]
		if _, err := resource.ParseQuantity(v.Value); err != nil {
			missed = append(missed, fmt.Sprintf("member %s: property %s=%q is not a quantity", mc.Name, name, v.Value))
			continue
		}
		if m.Properties == nil {
			m.Properties = map[string]string{}
		}
		m.Properties[string(name)] = v.Value
	}
	ru := mc.Status.ResourceUsage
	if len(ru.Capacity)+len(ru.Allocatable)+len(ru.Available) > 0 {
		m.Resources = &resourcesDoc{Capacity: quantities(ru.Capacity), Allocatable: quantities(ru.Allocatable), Available: quantities(ru.Available)}
	}
	for _, typ := range []string{"Joined", "Healthy"} {
		for _, c := range agentConditions(mc, typ) {
			if c.Status != metav1.ConditionTrue {
				missed = append(missed, fmt.Sprintf("member %s: %s is %s (%s) on the hub; the simulator starts it joined and healthy", mc.Name, typ, c.Status, c.Reason))
			}
		}
	}
	return m, missed
}

// agentConditions are the member's conditions of type typ: ClusterJoined or Healthy as
// the hub's MemberCluster conditions (MemberClusterJoined/...) name them.
func agentConditions(mc *clusterv1beta1.MemberCluster, typ string) []metav1.Condition {
	var out []metav1.Condition
	for _, c := range mc.Status.Conditions {
		if strings.HasSuffix(c.Type, typ) {
			out = append(out, c)
		}
	}
	return out
}

func quantities[K ~string](l map[K]resource.Quantity) map[string]string {
	if len(l) == 0 {
		return nil
	}
	out := map[string]string{}
	for k, v := range l {
		out[string(k)] = v.String()
	}
	return out
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// manifests renders objects as YAML documents separated by --- lines.
func manifests(objs []*unstructured.Unstructured) (string, error) {
	parts := make([]string, 0, len(objs))
	for _, o := range objs {
		y, err := sigsyaml.Marshal(o.Object)
		if err != nil {
			return "", fmt.Errorf("rendering %s %s: %w", o.GetKind(), o.GetName(), err)
		}
		parts = append(parts, string(y))
	}
	return strings.Join(parts, "---\n"), nil
}

// The scenario file, in the order its keys are written.
type scenarioDoc struct {
	Name        string      `yaml:"name"`
	Description string      `yaml:"description"`
	Duration    string      `yaml:"duration"`
	Members     []memberDoc `yaml:"members,omitempty"`
	Timeline    []stepDoc   `yaml:"timeline,omitempty"`
	Initial     *initialDoc `yaml:"initial,omitempty"`
	Expect      []expectDoc `yaml:"expect,omitempty"`
}

type memberDoc struct {
	Name            string            `yaml:"name"`
	Kind            string            `yaml:"kind,omitempty"`
	Labels          map[string]string `yaml:"labels,omitempty"`
	Taints          []taintDoc        `yaml:"taints,omitempty"`
	Properties      map[string]string `yaml:"properties,omitempty"`
	Resources       *resourcesDoc     `yaml:"resources,omitempty"`
	HeartbeatPeriod string            `yaml:"heartbeatPeriod,omitempty"`
	Metadata        map[string]string `yaml:"metadata,omitempty"`
}

type taintDoc struct {
	Key    string `yaml:"key"`
	Value  string `yaml:"value,omitempty"`
	Effect string `yaml:"effect,omitempty"`
}

type resourcesDoc struct {
	Capacity    map[string]string `yaml:"capacity,omitempty"`
	Allocatable map[string]string `yaml:"allocatable,omitempty"`
	Available   map[string]string `yaml:"available,omitempty"`
}

type stepDoc struct {
	At       string       `yaml:"at"`
	Apply    string       `yaml:"apply,omitempty"`
	Fleetctl *fleetctlDoc `yaml:"fleetctl,omitempty"`
}

type fleetctlDoc struct {
	Command string `yaml:"command"`
	Unit    string `yaml:"unit"`
	File    string `yaml:"file,omitempty"`
}

type initialDoc struct {
	Bindings []bindingsDoc `yaml:"bindings"`
}

type bindingsDoc struct {
	Placement string   `yaml:"placement"`
	Clusters  []string `yaml:"clusters,flow"`
}

type expectDoc struct {
	Placement placementExpectDoc `yaml:"placement"`
}

type placementExpectDoc struct {
	Name     string   `yaml:"name"`
	Clusters []string `yaml:"clusters,flow"`
}
