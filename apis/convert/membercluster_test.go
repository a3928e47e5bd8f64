package convert_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	"github.com/fleetsim/fleetsim/apis/convert"
	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/hub"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/membership"
)

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.Local() // metav1.Time decodes to local time
}

func loadMember(t *testing.T) (*clusterv1beta1.MemberCluster, *clusterv1beta1.InternalMemberCluster) {
	mc, imc := &clusterv1beta1.MemberCluster{}, &clusterv1beta1.InternalMemberCluster{}
	load(t, "membercluster-status.yaml", mc)
	load(t, "internalmembercluster.yaml", imc)
	return mc, imc
}

func TestMemberClusterToModel(t *testing.T) {
	mc, imc := loadMember(t)
	got, err := convert.MemberClusterToModel(mc, imc, true)
	if err != nil {
		t.Fatal(err)
	}
	join := membership.StateJoin
	want := &hub.MemberCluster{
		Member: &member.Member{
			Name:       "aks-member-3",
			Kind:       member.KindCluster,
			Labels:     map[string]string{"fleet.azure.com/location": "eastus2", "env": "prod"},
			Taints:     []member.Taint{{Key: "test-key1", Value: "test-value1", Effect: member.NoSchedule}},
			Properties: map[string]resource.Quantity{member.NodeCountProperty: resource.MustParse("2")},
			Resources: member.ResourceUsage{
				Capacity:    member.ResourceList{"cpu": resource.MustParse("4"), "memory": resource.MustParse("16393080Ki")},
				Allocatable: member.ResourceList{"cpu": resource.MustParse("3800m"), "memory": resource.MustParse("9304588Ki")},
				Available:   member.ResourceList{"cpu": resource.MustParse("2820m"), "memory": resource.MustParse("8477196Ki")},
			},
			HeartbeatPeriod: time.Minute,
			Agent: member.AgentStatus{
				Present: true, Joined: true, LastHeartbeat: at("2024-07-25T21:20:08Z"),
				HealthKnown: true, Healthy: true, HealthTransition: at("2024-07-03T10:00:05Z"),
			},
		},
		NamespaceExists: true,
		IMC:             &join,
		Conditions: []condition.Timed{
			{Condition: condition.True(membership.TypeReadyToJoin, membership.ReasonReadyToJoin, ""), ObservedGeneration: 1, LastTransitionTime: at("2024-07-03T10:00:01Z")},
			{Condition: condition.True(membership.TypeJoined, membership.ReasonJoined, ""), ObservedGeneration: 1, LastTransitionTime: at("2024-07-03T10:00:06Z")},
			{Condition: condition.True(membership.TypeHealthy, membership.ReasonHealthy, ""), ObservedGeneration: 1, LastTransitionTime: at("2024-07-03T10:00:06Z")},
		},
		Created:         at("2024-07-03T10:00:00Z"),
		HealthyReported: true,
	}
	diff(t, "MemberClusterToModel(documented member)", want, got, exact)

	// Without an InternalMemberCluster the agent's report is read from the MemberCluster's copy.
	fromMC, err := convert.MemberClusterToModel(mc, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	want.IMC = nil
	diff(t, "MemberClusterToModel(documented member, no IMC)", want, fromMC, exact)
}

func TestMemberClusterRoundTrip(t *testing.T) {
	mc, imc := loadMember(t)
	m, err := convert.MemberClusterToModel(mc, imc, true)
	if err != nil {
		t.Fatal(err)
	}
	// API -> model -> API over the original: nothing lost or respelled.
	diff(t, "MemberClusterFromModel(ToModel(mc), mc)", mc, convert.MemberClusterFromModel(m, mc), exact)
	diff(t, "InternalMemberClusterFromModel(ToModel(mc), imc)", imc, convert.InternalMemberClusterFromModel(m, imc), exact)
	admit(t, convert.MemberClusterFromModel(m, mc), mc)

	// Over nothing: only what the model does not carry differs.
	fresh := convert.MemberClusterFromModel(m, nil)
	want := mc.DeepCopy()
	want.ResourceVersion, want.UID, want.Generation, want.Finalizers = "", "", 0, nil
	want.Spec.Identity = fresh.Spec.Identity
	want.Status.AgentStatus[0].Conditions = []metav1.Condition{
		{Type: "Joined", Status: metav1.ConditionTrue, Reason: convert.ReasonAgentJoined, LastTransitionTime: metav1.NewTime(at("2024-07-25T21:20:08Z"))},
		{Type: "Healthy", Status: metav1.ConditionTrue, Reason: convert.ReasonAgentHealthy, LastTransitionTime: metav1.NewTime(at("2024-07-03T10:00:05Z"))},
	}
	diff(t, "MemberClusterFromModel(ToModel(mc), nil)", want, fresh, sameMeaning)

	newIMC := convert.InternalMemberClusterFromModel(m, nil)
	wantIMC := imc.DeepCopy()
	wantIMC.ObjectMeta = metav1.ObjectMeta{Name: "aks-member-3", Namespace: "fleet-member-aks-member-3"}
	wantIMC.Status.AgentStatus = want.Status.AgentStatus
	diff(t, "InternalMemberClusterFromModel(ToModel(mc), nil)", wantIMC, newIMC, sameMeaning)
	admit(t, newIMC, nil)

	// model -> API -> model: every model field has its place.
	back, err := convert.MemberClusterToModel(fresh, newIMC, true)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "ToModel(FromModel(m))", m, back, sameMeaning)
}

// TestMemberClusterSeedSpecOnly: the documentation's MemberCluster (spec only, no heartbeat period)
// reads as a member whose agent never reported, with the default period, and writes back
// unchanged.
func TestMemberClusterSeedSpecOnly(t *testing.T) {
	mc := &clusterv1beta1.MemberCluster{}
	load(t, "membercluster-taint.yaml", mc)
	m, err := convert.MemberClusterToModel(mc, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if m.Member.HeartbeatPeriod != member.DefaultHeartbeatPeriod || m.Member.Agent.Present || m.IMC != nil || m.NamespaceExists {
		t.Errorf("MemberClusterToModel(spec only) = %+v, member %+v", m, m.Member)
	}
	diff(t, "MemberClusterFromModel(ToModel(mc), mc)", mc, convert.MemberClusterFromModel(m, mc), exact)
	admit(t, mc, nil)
}

// TestMemberClusterModelChanges: what the hub's decisions change reaches the object, and the
// rest of base stays.
func TestMemberClusterModelChanges(t *testing.T) {
	mc, imc := loadMember(t)
	m, err := convert.MemberClusterToModel(mc, imc, true)
	if err != nil {
		t.Fatal(err)
	}
	beat, sick := at("2024-07-25T21:21:08Z"), at("2024-07-25T21:21:00Z")
	m.Member.Agent.LastHeartbeat = beat
	m.Member.Agent.Healthy, m.Member.Agent.HealthTransition = false, sick
	m.Member.Properties[member.NodeCountProperty] = resource.MustParse("3")
	m.Member.Leaving = true
	m.Member.Taints = nil
	m.Conditions[2] = condition.Timed{Condition: condition.False(membership.TypeHealthy, membership.ReasonUnhealthy, "the member agent reports the member is unhealthy"), LastTransitionTime: beat}
	m.HealthyReported = false
	got := convert.MemberClusterFromModel(m, mc)

	want := mc.DeepCopy()
	want.DeletionTimestamp = &metav1.Time{}
	want.Spec.Taints = nil
	// Conditions written anew observe the MemberCluster's generation; the usage that did not
	// change is observed again at the new heartbeat.
	want.Status.Conditions[2] = metav1.Condition{Type: "Healthy", Status: metav1.ConditionFalse, Reason: membership.ReasonUnhealthy,
		Message: "the member agent reports the member is unhealthy", ObservedGeneration: 1, LastTransitionTime: metav1.NewTime(beat)}
	want.Status.Properties["kubernetes-fleet.io/node-count"] = clusterv1beta1.PropertyValue{Value: "3", ObservationTime: metav1.NewTime(beat)}
	want.Status.ResourceUsage.ObservationTime = metav1.NewTime(beat)
	want.Status.AgentStatus[0].LastReceivedHeartbeat = metav1.NewTime(beat)
	want.Status.AgentStatus[0].Conditions[1] = metav1.Condition{Type: "Healthy", Status: metav1.ConditionFalse, Reason: convert.ReasonAgentUnhealthy,
		ObservedGeneration: 1, LastTransitionTime: metav1.NewTime(sick)}
	diff(t, "MemberClusterFromModel(changed model, mc)", want, got, exact)

	back, err := convert.MemberClusterToModel(got, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	m.IMC = nil
	m.Conditions[2].ObservedGeneration = 1
	diff(t, "ToModel(FromModel(changed model))", m, back, sameMeaning)

	// An agent that stops reporting health, and one that never reported at all.
	m.Member.Agent.HealthKnown = false
	if cs := convert.MemberClusterFromModel(m, mc).Status.AgentStatus[0].Conditions; len(cs) != 1 || cs[0].Type != "Joined" {
		t.Errorf("agent conditions with no health known = %+v, want Joined only", cs)
	}
	m.Member.Agent = member.AgentStatus{}
	if as := convert.MemberClusterFromModel(m, mc).Status.AgentStatus; as != nil {
		t.Errorf("agent status of an agent that never reported = %+v, want none", as)
	}
}

func TestMemberClusterBadProperty(t *testing.T) {
	mc, _ := loadMember(t)
	mc.Status.Properties["example.com/zones"] = clusterv1beta1.PropertyValue{Value: "three"}
	m, err := convert.MemberClusterToModel(mc, nil, true)
	if err == nil || !strings.Contains(err.Error(), `MemberCluster aks-member-3: property example.com/zones: value "three" is not a quantity`) {
		t.Errorf("MemberClusterToModel(bad property) error = %v", err)
	}
	if m == nil {
		t.Fatal("MemberClusterToModel(bad property) returned no member")
	}
	diff(t, "properties kept", map[string]resource.Quantity{member.NodeCountProperty: resource.MustParse("2")}, m.Member.Properties, cmpopts.EquateEmpty())
}

// TestAgentStatusToModel: the MemberAgent's entry, as the eligibility check reads it; other
// agents are ignored.
func TestAgentStatusToModel(t *testing.T) {
	hb, tr := metav1.NewTime(at("2025-01-01T00:01:00Z")), metav1.NewTime(at("2025-01-01T00:00:00Z"))
	cond := func(typ string, s metav1.ConditionStatus) metav1.Condition {
		return metav1.Condition{Type: typ, Status: s, Reason: "R", LastTransitionTime: tr}
	}
	for _, c := range []struct {
		name   string
		agents []clusterv1beta1.AgentStatus
		want   member.AgentStatus
	}{
		{"never reported", nil, member.AgentStatus{}},
		{"another agent only", []clusterv1beta1.AgentStatus{{Type: clusterv1beta1.ServiceExportImportAgent, LastReceivedHeartbeat: hb}}, member.AgentStatus{}},
		{"not joined yet", []clusterv1beta1.AgentStatus{{Type: clusterv1beta1.MemberAgent, LastReceivedHeartbeat: hb,
			Conditions: []metav1.Condition{cond("Joined", metav1.ConditionFalse)}}},
			member.AgentStatus{Present: true, LastHeartbeat: hb.Time}},
		{"joined, health unknown", []clusterv1beta1.AgentStatus{{Type: clusterv1beta1.MemberAgent, LastReceivedHeartbeat: hb,
			Conditions: []metav1.Condition{cond("Joined", metav1.ConditionTrue), cond("Healthy", metav1.ConditionUnknown)}}},
			member.AgentStatus{Present: true, Joined: true, LastHeartbeat: hb.Time, HealthKnown: true, HealthTransition: tr.Time}},
		{"joined, unhealthy", []clusterv1beta1.AgentStatus{
			{Type: clusterv1beta1.MultiClusterServiceAgent},
			{Type: clusterv1beta1.MemberAgent, LastReceivedHeartbeat: hb, Conditions: []metav1.Condition{cond("Joined", metav1.ConditionTrue), cond("Healthy", metav1.ConditionFalse)}}},
			member.AgentStatus{Present: true, Joined: true, LastHeartbeat: hb.Time, HealthKnown: true, HealthTransition: tr.Time}},
	} {
		t.Run(c.name, func(t *testing.T) {
			mc := &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "m"}, Status: clusterv1beta1.MemberClusterStatus{AgentStatus: c.agents}}
			m, err := convert.MemberClusterToModel(mc, nil, true)
			if err != nil {
				t.Fatal(err)
			}
			diff(t, "agent", c.want, m.Member.Agent)
			// Written over the same base, the agent's entries come back unchanged.
			diff(t, "agent status written back", c.agents, convert.MemberClusterFromModel(m, mc).Status.AgentStatus)
			// Written over nothing, they read back the same.
			back, err := convert.MemberClusterToModel(convert.MemberClusterFromModel(m, nil), nil, true)
			if err != nil {
				t.Fatal(err)
			}
			diff(t, "agent read back", c.want, back.Member.Agent)
		})
	}
}

// TestMemberClusterVersionProperty: the Kubernetes version a member agent reports
// (k8s.io/k8s-version, not a quantity) is carried as text from the InternalMemberCluster to
// the MemberCluster, with no error, and kept when it does not change; any other property that
// is not a quantity is still left out and named.
func TestMemberClusterVersionProperty(t *testing.T) {
	mc, imc := loadMember(t)
	imc.Status.Properties = map[clusterv1beta1.PropertyName]clusterv1beta1.PropertyValue{
		"k8s.io/k8s-version": {Value: "v1.33.0"}, member.NodeCountProperty: {Value: "2"}, "example.com/zones": {Value: "three"},
	}
	m, err := convert.MemberClusterToModel(mc, imc, true)
	if err == nil || !strings.Contains(err.Error(), `property example.com/zones: value "three" is not a quantity`) || strings.Contains(err.Error(), "k8s-version") {
		t.Errorf("MemberClusterToModel error = %v; want only example.com/zones named", err)
	}
	diff(t, "text properties", map[string]string{"k8s.io/k8s-version": "v1.33.0"}, m.Member.TextProperties)
	out := convert.MemberClusterFromModel(m, mc)
	if v := out.Status.Properties["k8s.io/k8s-version"].Value; v != "v1.33.0" {
		t.Errorf("MemberClusterFromModel: k8s.io/k8s-version = %q, want v1.33.0 (properties %v)", v, out.Status.Properties)
	}
	again := convert.MemberClusterFromModel(m, out)
	diff(t, "a second write keeps the version and its observation time", out.Status.Properties["k8s.io/k8s-version"], again.Status.Properties["k8s.io/k8s-version"])
}
