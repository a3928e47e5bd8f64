package convert

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	"github.com/fleetsim/fleetsim/model/hub"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/membership"
)

// Reasons of the agent conditions FromModel writes when the model's agent status changed and
// base has no condition that says it.
const (
	ReasonAgentJoined    = "MemberAgentJoined"
	ReasonAgentNotJoined = "MemberAgentNotJoined"
	ReasonAgentHealthy   = "MemberAgentHealthy"
	ReasonAgentUnhealthy = "MemberAgentUnhealthy"
)

// agentReport is what the member agent reports, on the InternalMemberCluster and, copied by
// the hub, on the MemberCluster.
type agentReport struct {
	properties map[clusterv1beta1.PropertyName]clusterv1beta1.PropertyValue
	usage      clusterv1beta1.ResourceUsage
	agents     []clusterv1beta1.AgentStatus
}

// MemberClusterToModel reads a MemberCluster, its InternalMemberCluster (nil when the hub has
// not created it yet) and whether the member's reserved namespace exists into the hub's view.
//
// What the member agent reports (properties, resource usage, agent status) is read from the
// InternalMemberCluster, where the agent writes it, when there is one, else from the
// MemberCluster's copy. A property whose value is not a quantity is left out and named in
// the error; everything else is still converted.
//
// The model does not carry the MemberCluster's identity, other agents than the MemberAgent,
// the reasons and messages of the agent's conditions, observation times, or the
// InternalMemberCluster's own conditions; MemberClusterFromModel and
// InternalMemberClusterFromModel keep them from their base.
func MemberClusterToModel(mc *clusterv1beta1.MemberCluster, imc *clusterv1beta1.InternalMemberCluster, namespaceExists bool) (*hub.MemberCluster, error) {
	report := agentReport{mc.Status.Properties, mc.Status.ResourceUsage, mc.Status.AgentStatus}
	if imc != nil {
		report = agentReport{imc.Status.Properties, imc.Status.ResourceUsage, imc.Status.AgentStatus}
	}
	m := &member.Member{
		Name:             mc.Name,
		Kind:             member.KindCluster,
		Labels:           maps.Clone(mc.Labels),
		Taints:           mapSlice(mc.Spec.Taints, taintToModel),
		Resources:        usageToModel(report.usage),
		HeartbeatPeriod:  heartbeatToModel(mc.Spec.HeartbeatPeriodSeconds),
		Leaving:          mc.DeletionTimestamp != nil,
		DeleteValidation: deleteValidationToModel(mc.Spec.DeleteOptions),
		Agent:            agentToModel(report.agents),
	}
	props, text, err := propertiesToModel(report.properties)
	if err != nil {
		err = fmt.Errorf("MemberCluster %s: %w", mc.Name, err)
	}
	m.Properties, m.TextProperties = props, text
	out := &hub.MemberCluster{
		Member:          m,
		NamespaceExists: namespaceExists,
		Conditions:      ConditionsToModel(mc.Status.Conditions),
		Created:         mc.CreationTimestamp.Time,
	}
	if imc != nil {
		s := imc.Spec.State
		out.IMC = &s
	}
	if c := meta.FindStatusCondition(mc.Status.Conditions, membership.TypeHealthy); c != nil {
		out.HealthyReported = c.Reason == membership.ReasonHealthy
	}
	return out, err
}

// MemberClusterFromModel writes the hub's view of a member as a MemberCluster: name, labels,
// creation time, deletion, taints, heartbeat period, conditions, and the agent's report
// (which the hub copies from the InternalMemberCluster). base supplies the identity and
// everything else the model does not carry; report entries whose value did not change keep
// base's observation time, changed ones are dated with the member's last heartbeat.
func MemberClusterFromModel(m *hub.MemberCluster, base *clusterv1beta1.MemberCluster) *clusterv1beta1.MemberCluster {
	out := &clusterv1beta1.MemberCluster{}
	if base != nil {
		out = base.DeepCopy()
	}
	out.APIVersion, out.Kind = clusterv1beta1.GroupVersion.String(), "MemberCluster"
	mem := m.Member
	metaFromMember(&out.ObjectMeta, m)
	out.Spec.HeartbeatPeriodSeconds = heartbeatFromModel(mem.HeartbeatPeriod, base != nil, out.Spec.HeartbeatPeriodSeconds)
	out.Spec.Taints = keepOr(&out.Spec.Taints, mem.Taints,
		func(ts []clusterv1beta1.Taint) []member.Taint { return mapSlice(ts, taintToModel) },
		func(ts []member.Taint) []clusterv1beta1.Taint { return mapSlice(ts, taintFromModel) })
	if base == nil && mem.DeleteValidation != "" {
		out.Spec.DeleteOptions = &clusterv1beta1.DeleteOptions{ValidationMode: mem.DeleteValidation}
	}
	out.Status.Conditions = ConditionsFromModel(m.Conditions)
	stampGeneration(out.Status.Conditions, out.Generation)
	r := reportFromModel(mem, agentReport{out.Status.Properties, out.Status.ResourceUsage, out.Status.AgentStatus}, out.Generation)
	out.Status.Properties, out.Status.ResourceUsage, out.Status.AgentStatus = r.properties, r.usage, r.agents
	return out
}

// InternalMemberClusterFromModel writes the member's InternalMemberCluster: in its reserved
// namespace, with the state the hub decided (nil when the model has no InternalMemberCluster
// for it), the heartbeat period, and the agent's report, merged into base as
// MemberClusterFromModel does. The agent's own conditions come from base.
func InternalMemberClusterFromModel(m *hub.MemberCluster, base *clusterv1beta1.InternalMemberCluster) *clusterv1beta1.InternalMemberCluster {
	if m.IMC == nil {
		return nil
	}
	out := &clusterv1beta1.InternalMemberCluster{}
	if base != nil {
		out = base.DeepCopy()
	}
	out.APIVersion, out.Kind = clusterv1beta1.GroupVersion.String(), "InternalMemberCluster"
	mem := m.Member
	out.Name, out.Namespace = mem.Name, membership.Namespace(mem.Name)
	out.Spec.State = *m.IMC
	out.Spec.HeartbeatPeriodSeconds = heartbeatFromModel(mem.HeartbeatPeriod, base != nil, out.Spec.HeartbeatPeriodSeconds)
	r := reportFromModel(mem, agentReport{out.Status.Properties, out.Status.ResourceUsage, out.Status.AgentStatus}, out.Generation)
	out.Status.Properties, out.Status.ResourceUsage, out.Status.AgentStatus = r.properties, r.usage, r.agents
	return out
}

// stampGeneration gives the conditions the model decided without a generation (the
// membership conditions) the generation of the object they are written on, as KubeFleet's
// hub does.
func stampGeneration(cs []metav1.Condition, gen int64) {
	for i := range cs {
		if cs[i].ObservedGeneration == 0 {
			cs[i].ObservedGeneration = gen
		}
	}
}

func metaFromMember(om *metav1.ObjectMeta, m *hub.MemberCluster) {
	om.Name = m.Member.Name
	om.Labels = maps.Clone(m.Member.Labels)
	if !om.CreationTimestamp.Time.Equal(m.Created) {
		om.CreationTimestamp = metav1.Time{Time: m.Created}
	}
	om.DeletionTimestamp = deletionTimestamp(m.Member.Leaving, om.DeletionTimestamp)
}

func taintToModel(t clusterv1beta1.Taint) member.Taint {
	return member.Taint{Key: t.Key, Value: t.Value, Effect: t.Effect}
}

func taintFromModel(t member.Taint) clusterv1beta1.Taint {
	return clusterv1beta1.Taint{Key: t.Key, Value: t.Value, Effect: t.Effect}
}

// heartbeatToModel applies the API default to an unset period.
func heartbeatToModel(seconds int32) time.Duration {
	if seconds == 0 {
		return member.DefaultHeartbeatPeriod
	}
	return time.Duration(seconds) * time.Second
}

// heartbeatFromModel keeps base's value when there is one and it means d (0 is the default).
func heartbeatFromModel(d time.Duration, hasBase bool, base int32) int32 {
	if hasBase && heartbeatToModel(base) == d {
		return base
	}
	return int32(d / time.Second)
}

func propertiesToModel(ps map[clusterv1beta1.PropertyName]clusterv1beta1.PropertyValue) (map[string]resource.Quantity, map[string]string, error) {
	if ps == nil {
		return nil, nil, nil
	}
	out := make(map[string]resource.Quantity, len(ps))
	var text map[string]string
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(ps)) {
		q, err := resource.ParseQuantity(ps[name].Value)
		if err != nil {
			if textProperties[string(name)] {
				if text == nil {
					text = map[string]string{}
				}
				text[string(name)] = ps[name].Value
				continue
			}
			errs = append(errs, fmt.Errorf("property %s: value %q is not a quantity: %v", name, ps[name].Value, err))
			continue
		}
		out[string(name)] = q
	}
	return out, text, errors.Join(errs...)
}

// textProperties are the properties whose value is not a quantity by design: the
// Kubernetes version a member agent reports ([Properties and Resource Usage › Property
// provider]). They are carried as text; any other property must be a quantity.
var textProperties = map[string]bool{"k8s.io/k8s-version": true}

func usageToModel(u clusterv1beta1.ResourceUsage) member.ResourceUsage {
	return member.ResourceUsage{
		Capacity:    resourceListToModel(u.Capacity),
		Allocatable: resourceListToModel(u.Allocatable),
		Available:   resourceListToModel(u.Available),
	}
}

func resourceListToModel(l corev1.ResourceList) member.ResourceList {
	if l == nil {
		return nil
	}
	out := make(member.ResourceList, len(l))
	for k, v := range l {
		out[string(k)] = v.DeepCopy()
	}
	return out
}

func resourceListFromModel(l member.ResourceList) corev1.ResourceList {
	if l == nil {
		return nil
	}
	out := make(corev1.ResourceList, len(l))
	for k, v := range l {
		out[corev1.ResourceName(k)] = v.DeepCopy()
	}
	return out
}

// agentToModel summarises the MemberAgent's entry, as the scheduler's eligibility check
// reads it (MC-HEARTBEAT-HEALTH).
func agentToModel(as []clusterv1beta1.AgentStatus) member.AgentStatus {
	for _, a := range as {
		if a.Type != clusterv1beta1.MemberAgent {
			continue
		}
		out := member.AgentStatus{Present: true, LastHeartbeat: a.LastReceivedHeartbeat.Time}
		if c := meta.FindStatusCondition(a.Conditions, clusterv1beta1.ConditionTypeJoined); c != nil {
			out.Joined = c.Status == metav1.ConditionTrue
		}
		if c := meta.FindStatusCondition(a.Conditions, clusterv1beta1.ConditionTypeHealthy); c != nil {
			out.HealthKnown = true
			out.Healthy = c.Status == metav1.ConditionTrue
			out.HealthTransition = c.LastTransitionTime.Time
		}
		return out
	}
	return member.AgentStatus{}
}

// reportFromModel merges the member's report into base's: what base says already is kept,
// what changed is written from the model; both are dated with the last heartbeat, which is
// when the agent last observed them (a value that did not change keeps base's time only
// when base's is not older). gen is the generation of the object written on.
func reportFromModel(m *member.Member, base agentReport, gen int64) agentReport {
	at := metav1.Time{Time: m.Agent.LastHeartbeat}
	out := agentReport{agents: agentsFromModel(m.Agent, base.agents, gen)}
	newer := func(old metav1.Time) metav1.Time {
		if old.Time.Before(at.Time) {
			return at
		}
		return old
	}
	if m.Properties != nil {
		out.properties = make(map[clusterv1beta1.PropertyName]clusterv1beta1.PropertyValue, len(m.Properties))
		for name, q := range m.Properties {
			if old, ok := base.properties[clusterv1beta1.PropertyName(name)]; ok {
				if oq, err := resource.ParseQuantity(old.Value); err == nil && oq.Cmp(q) == 0 {
					old.ObservationTime = newer(old.ObservationTime)
					out.properties[clusterv1beta1.PropertyName(name)] = old
					continue
				}
			}
			out.properties[clusterv1beta1.PropertyName(name)] = clusterv1beta1.PropertyValue{Value: q.String(), ObservationTime: at}
		}
	}
	for name, v := range m.TextProperties {
		if out.properties == nil {
			out.properties = map[clusterv1beta1.PropertyName]clusterv1beta1.PropertyValue{}
		}
		if old, ok := base.properties[clusterv1beta1.PropertyName(name)]; ok && old.Value == v {
			old.ObservationTime = newer(old.ObservationTime)
			out.properties[clusterv1beta1.PropertyName(name)] = old
			continue
		}
		out.properties[clusterv1beta1.PropertyName(name)] = clusterv1beta1.PropertyValue{Value: v, ObservationTime: at}
	}
	if semantic.DeepEqual(usageToModel(base.usage), m.Resources) {
		out.usage = *base.usage.DeepCopy()
		out.usage.ObservationTime = newer(base.usage.ObservationTime)
	} else {
		out.usage = clusterv1beta1.ResourceUsage{
			Capacity:        resourceListFromModel(m.Resources.Capacity),
			Allocatable:     resourceListFromModel(m.Resources.Allocatable),
			Available:       resourceListFromModel(m.Resources.Available),
			ObservationTime: at,
		}
	}
	return out
}

// agentsFromModel writes the MemberAgent's entry from the model's summary and keeps the
// other agents' entries. A condition whose status already says what the model says is kept
// with its reason and message.
//
// Conditions written anew observe gen, the generation of the object they are written on.
func agentsFromModel(a member.AgentStatus, base []clusterv1beta1.AgentStatus, gen int64) []clusterv1beta1.AgentStatus {
	var out []clusterv1beta1.AgentStatus
	if base != nil {
		out = make([]clusterv1beta1.AgentStatus, 0, len(base)+1)
	}
	var old *clusterv1beta1.AgentStatus
	at := -1
	for i := range base {
		if base[i].Type == clusterv1beta1.MemberAgent && old == nil {
			old, at = &base[i], len(out)
			continue
		}
		out = append(out, *base[i].DeepCopy())
	}
	if !a.Present {
		if len(out) == 0 {
			return nil
		}
		return out
	}
	entry := clusterv1beta1.AgentStatus{Type: clusterv1beta1.MemberAgent}
	if old != nil {
		entry = *old.DeepCopy()
	}
	if !entry.LastReceivedHeartbeat.Time.Equal(a.LastHeartbeat) {
		entry.LastReceivedHeartbeat = metav1.Time{Time: a.LastHeartbeat}
	}
	joined := meta.FindStatusCondition(entry.Conditions, clusterv1beta1.ConditionTypeJoined)
	switch {
	case joined == nil && !a.Joined:
		// Absent reads as not joined already.
	case joined == nil || (joined.Status == metav1.ConditionTrue) != a.Joined:
		c := metav1.Condition{Type: clusterv1beta1.ConditionTypeJoined, Status: metav1.ConditionFalse, Reason: ReasonAgentNotJoined,
			ObservedGeneration: gen, LastTransitionTime: metav1.Time{Time: a.LastHeartbeat}}
		if a.Joined {
			c.Status, c.Reason = metav1.ConditionTrue, ReasonAgentJoined
		}
		setCondition(&entry.Conditions, c)
	}
	healthy := meta.FindStatusCondition(entry.Conditions, clusterv1beta1.ConditionTypeHealthy)
	switch {
	case !a.HealthKnown:
		if meta.RemoveStatusCondition(&entry.Conditions, clusterv1beta1.ConditionTypeHealthy) && len(entry.Conditions) == 0 {
			entry.Conditions = nil
		}
	case healthy == nil || (healthy.Status == metav1.ConditionTrue) != a.Healthy || !healthy.LastTransitionTime.Time.Equal(a.HealthTransition):
		c := metav1.Condition{Type: clusterv1beta1.ConditionTypeHealthy, Status: metav1.ConditionFalse, Reason: ReasonAgentUnhealthy,
			ObservedGeneration: gen, LastTransitionTime: metav1.Time{Time: a.HealthTransition}}
		if a.Healthy {
			c.Status, c.Reason = metav1.ConditionTrue, ReasonAgentHealthy
		}
		if healthy != nil && (healthy.Status == metav1.ConditionTrue) == a.Healthy {
			c.Reason, c.Message = healthy.Reason, healthy.Message
		}
		setCondition(&entry.Conditions, c)
	}
	if gen != 0 {
		for i := range entry.Conditions {
			entry.Conditions[i].ObservedGeneration = gen
		}
	}
	if at < 0 {
		return append(out, entry)
	}
	return slices.Insert(out, at, entry)
}

// setCondition replaces the condition of c's type, or appends c, keeping the order.
func setCondition(cs *[]metav1.Condition, c metav1.Condition) {
	for i := range *cs {
		if (*cs)[i].Type == c.Type {
			(*cs)[i] = c
			return
		}
	}
	*cs = append(*cs, c)
}

func deleteValidationToModel(o *clusterv1beta1.DeleteOptions) member.DeleteValidationMode {
	if o == nil {
		return ""
	}
	return o.ValidationMode
}
