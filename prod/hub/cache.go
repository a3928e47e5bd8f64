package hub

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	"github.com/fleetsim/fleetsim/apis/convert"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	mhub "github.com/fleetsim/fleetsim/model/hub"
	"github.com/fleetsim/fleetsim/model/membership"
	"github.com/fleetsim/fleetsim/model/staged"
)

// Field indexes on the manager's cache that scope a decision's reads.
const (
	// indexPlacement: the placement a snapshot, binding or Work belongs to (its parent-CRP label).
	indexPlacement = "fleetsim.placement"
	// indexBinding: the binding a Work was generated for.
	indexBinding = "fleetsim.binding"
	// indexTarget: the member a binding targets.
	indexTarget = "fleetsim.target"
	// indexRun: the update run an approval request belongs to.
	indexRun = "fleetsim.run"
)

// registerIndexes adds the field indexes to the manager's cache; it must run before the
// cache starts.
func registerIndexes(ctx context.Context, fi client.FieldIndexer) error {
	label := func(l string) client.IndexerFunc {
		return func(o client.Object) []string {
			if v := o.GetLabels()[l]; v != "" {
				return []string{v}
			}
			return nil
		}
	}
	for _, ix := range []struct {
		obj   client.Object
		field string
		f     client.IndexerFunc
	}{
		{&v1beta1.ClusterSchedulingPolicySnapshot{}, indexPlacement, label(v1beta1.CRPTrackingLabel)},
		{&v1beta1.ClusterResourceSnapshot{}, indexPlacement, label(v1beta1.CRPTrackingLabel)},
		{&v1beta1.ClusterResourceBinding{}, indexPlacement, label(v1beta1.CRPTrackingLabel)},
		{&v1beta1.Work{}, indexPlacement, label(v1beta1.CRPTrackingLabel)},
		{&v1beta1.Work{}, indexBinding, label(v1beta1.ParentBindingLabel)},
		{&v1beta1.ClusterResourceBinding{}, indexTarget, func(o client.Object) []string {
			if t := o.(*v1beta1.ClusterResourceBinding).Spec.TargetCluster; t != "" {
				return []string{t}
			}
			return nil
		}},
		{&v1beta1.ClusterApprovalRequest{}, indexRun, label(staged.LabelTargetUpdateRun)},
	} {
		if err := fi.IndexField(ctx, ix.obj, ix.field, ix.f); err != nil {
			return fmt.Errorf("index %T by %s: %w", ix.obj, ix.field, err)
		}
	}
	return nil
}

// memberMemo converts each member once per version of its MemberCluster,
// InternalMemberCluster and reserved namespace, so a decision that needs the whole fleet
// (the scheduler) does not convert a thousand members every time.
type memberMemo struct {
	mu      sync.Mutex
	entries map[string]memberEntry
}

type memberEntry struct {
	mcRV, imcRV string
	nsLive      bool
	model       *mhub.MemberCluster
	warning     error
}

// load returns every member as the cache holds it, keyed by name, with the conversion
// problems of those left out or partly read. The models are shared: decisions must not
// change them (only the membership controller changes members, on its own copies).
func (m *memberMemo) load(ctx context.Context, r client.Reader) (map[string]*mhub.MemberCluster, []error, error) {
	var mcs clusterv1beta1.MemberClusterList
	if err := r.List(ctx, &mcs, client.UnsafeDisableDeepCopy); err != nil {
		return nil, nil, fmt.Errorf("list MemberClusters: %w", err)
	}
	out := make(map[string]*mhub.MemberCluster, len(mcs.Items))
	var warnings []error
	seen := make(map[string]bool, len(mcs.Items))
	for i := range mcs.Items {
		mc := &mcs.Items[i]
		seen[mc.Name] = true
		e, err := m.entry(ctx, r, mc)
		if err != nil {
			return nil, nil, err
		}
		if e.warning != nil {
			warnings = append(warnings, e.warning)
		}
		if e.model != nil {
			out[mc.Name] = e.model
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for n := range m.entries {
		if !seen[n] {
			delete(m.entries, n)
		}
	}
	return out, warnings, nil
}

// one returns one member as the cache holds it (nil when it has none), and the problem
// of a member left out or partly read.
func (m *memberMemo) one(ctx context.Context, r client.Reader, name string) (*mhub.MemberCluster, error, error) {
	mc := &clusterv1beta1.MemberCluster{}
	if err := r.Get(ctx, client.ObjectKey{Name: name}, mc, client.UnsafeDisableDeepCopy); err != nil {
		if client.IgnoreNotFound(err) != nil {
			return nil, nil, fmt.Errorf("get MemberCluster %s: %w", name, err)
		}
		return nil, nil, nil
	}
	e, err := m.entry(ctx, r, mc)
	if err != nil {
		return nil, nil, err
	}
	return e.model, e.warning, nil
}

// entry converts the member of mc, unless the memo holds it at the same versions.
func (m *memberMemo) entry(ctx context.Context, r client.Reader, mc *clusterv1beta1.MemberCluster) (memberEntry, error) {
	ns := membership.Namespace(mc.Name)
	imc := &clusterv1beta1.InternalMemberCluster{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: mc.Name}, imc, client.UnsafeDisableDeepCopy); err != nil {
		if client.IgnoreNotFound(err) != nil {
			return memberEntry{}, fmt.Errorf("get InternalMemberCluster %s: %w", mc.Name, err)
		}
		imc = nil
	}
	nsObj := &corev1.Namespace{}
	live := false
	switch err := r.Get(ctx, client.ObjectKey{Name: ns}, nsObj, client.UnsafeDisableDeepCopy); {
	case err == nil:
		live = nsObj.DeletionTimestamp == nil
	case client.IgnoreNotFound(err) != nil:
		return memberEntry{}, fmt.Errorf("get namespace %s: %w", ns, err)
	}
	imcRV := ""
	if imc != nil {
		imcRV = imc.ResourceVersion
	}
	m.mu.Lock()
	e, ok := m.entries[mc.Name]
	m.mu.Unlock()
	if ok && e.mcRV == mc.ResourceVersion && e.imcRV == imcRV && e.nsLive == live {
		return e, nil
	}
	var cimc *clusterv1beta1.InternalMemberCluster
	if imc != nil {
		cimc = imc.DeepCopy()
	}
	model, err := convert.MemberClusterToModel(mc.DeepCopy(), cimc, live)
	e = memberEntry{mcRV: mc.ResourceVersion, imcRV: imcRV, nsLive: live, model: model, warning: err}
	m.mu.Lock()
	if m.entries == nil {
		m.entries = map[string]memberEntry{}
	}
	m.entries[mc.Name] = e
	m.mu.Unlock()
	return e, nil
}
