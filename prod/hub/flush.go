package hub

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/fleetsim/fleetsim/apis/convert"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	mhub "github.com/fleetsim/fleetsim/model/hub"
	"github.com/fleetsim/fleetsim/model/status"
)

// flush writes what the controllers changed in s, as the difference to what loadState read.
// The order keeps every prefix of the writes consistent for a hub that dies half-way (the
// next one reads the prefix and carries on): snapshots before the bindings that name them,
// bindings before the Works generated from them, and every status last. Updates carry the
// resourceVersion that was read, so a concurrent writer makes the reconcile fail with a
// conflict and run again on fresh objects instead of overwriting.
func (s *state) flush(ctx context.Context, c client.Client, now time.Time) error {
	if s.err != nil {
		return s.err
	}
	// A decision about one binding writes nothing placement-wide (rule 3 of consistency.go).
	wide := !s.scope.bindingOnly()
	for _, name := range slices.Sorted(maps.Keys(s.crps)) {
		if !wide {
			break
		}
		if err := s.flushSnapshots(ctx, c, name, now); err != nil {
			return fmt.Errorf("placement %s: %w", name, err)
		}
	}
	statuses, err := s.flushBindings(ctx, c)
	if err != nil {
		return err
	}
	if err := s.flushWorks(ctx, c); err != nil {
		return err
	}
	// Bindings' statuses after their Works: the agents get their Works a round trip sooner.
	if err := parallel(len(statuses), func(i int) error {
		if err := statuses[i].write(ctx, c); err != nil {
			return fmt.Errorf("ClusterResourceBinding %s: %w", statuses[i].obj.GetName(), err)
		}
		return nil
	}); err != nil {
		return err
	}
	for _, n := range slices.Sorted(maps.Keys(s.approvals)) {
		want := convert.ApprovalRequestFromModel(s.approvals[n])
		if err := upsert(ctx, c, want, optional(s.approvalObjs[n])); err != nil {
			return fmt.Errorf("ClusterApprovalRequest %s: %w", n, err)
		}
	}
	for _, n := range slices.Sorted(maps.Keys(s.evictions)) {
		if base := s.evictionObjs[n]; base != nil {
			if err := upsert(ctx, c, convert.EvictionFromModel(s.evictions[n]), base); err != nil {
				return fmt.Errorf("ClusterResourcePlacementEviction %s: %w", n, err)
			}
		}
	}
	for _, n := range slices.Sorted(maps.Keys(s.runs)) {
		if base := s.runObjs[n]; base != nil {
			if err := upsert(ctx, c, convert.UpdateRunFromModel(s.runs[n]), base); err != nil {
				return fmt.Errorf("ClusterStagedUpdateRun %s: %w", n, err)
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.crps)) {
		if !wide {
			break
		}
		if err := s.flushPlacement(ctx, c, name, now); err != nil {
			return fmt.Errorf("placement %s: %w", name, err)
		}
	}
	return nil
}

// flushSnapshots writes a placement's policy and resource snapshots, or deletes them all
// once the placement's deletion is done.
func (s *state) flushSnapshots(ctx context.Context, c client.Client, name string, now time.Time) error {
	crp, p := s.crps[name], s.placements[name]
	keepPolicy, keepResources := map[string]bool{}, map[string]bool{}
	if p != nil {
		for i, snap := range p.PolicySnapshots {
			latest := i == len(p.PolicySnapshots)-1
			base := s.policySnaps[snap.Name]
			want := convert.PolicySnapshotFromModel(snap, latest, base)
			if latest && p.Scheduled != s.loadedScheduled[name] {
				// The scheduler decided in this reconcile, always for the latest snapshot.
				want.Status = convert.SchedulingFromModel(status.Scheduling{Condition: p.Scheduled,
					ObservedPlacementGeneration: p.ScheduledGeneration, Decisions: p.Decisions}, now, base)
			}
			if base == nil {
				ownBy(want, crp)
			}
			if err := upsert(ctx, c, want, optional(base)); err != nil {
				return fmt.Errorf("ClusterSchedulingPolicySnapshot %s: %w", snap.Name, err)
			}
			keepPolicy[snap.Name] = true
		}
		for i, snap := range p.ResourceSnapshots {
			latest := i == len(p.ResourceSnapshots)-1
			var group []*v1beta1.ClusterResourceSnapshot
			for _, rs := range s.resourceSnaps {
				if rs.Labels[v1beta1.CRPTrackingLabel] == name && resourceIndex(rs) == snap.Index {
					group = append(group, rs)
				}
			}
			wants, err := convert.ResourceSnapshotFromModel(snap, latest, 0, group)
			if err != nil {
				return err
			}
			// The leading snapshot says how many make the group: write it last, so a group
			// is complete whenever its lead exists, and a cut leaves only parts that the
			// next decision overwrites.
			slices.Reverse(wants)
			for _, want := range wants {
				base := s.resourceSnaps[want.Name]
				if base == nil {
					ownBy(want, crp)
				}
				if err := upsert(ctx, c, want, optional(base)); err != nil {
					return fmt.Errorf("ClusterResourceSnapshot %s: %w", want.Name, err)
				}
				keepResources[want.Name] = true
			}
		}
	}
	for _, n := range slices.Sorted(maps.Keys(s.policySnaps)) {
		if ps := s.policySnaps[n]; ps.Labels[v1beta1.CRPTrackingLabel] == name && !keepPolicy[n] {
			if err := client.IgnoreNotFound(c.Delete(ctx, ps, readVersion(ps))); err != nil {
				return fmt.Errorf("delete ClusterSchedulingPolicySnapshot %s: %w", n, err)
			}
		}
	}
	// Leads first, for the same reason: a group without its lead is no snapshot.
	stale := slices.SortedFunc(maps.Keys(s.resourceSnaps), func(a, b string) int {
		return cmp.Or(-cmp.Compare(isLead(s.resourceSnaps[a]), isLead(s.resourceSnaps[b])), cmp.Compare(a, b))
	})
	for _, n := range stale {
		if rs := s.resourceSnaps[n]; rs.Labels[v1beta1.CRPTrackingLabel] == name && !keepResources[n] {
			if err := client.IgnoreNotFound(c.Delete(ctx, rs, readVersion(rs))); err != nil {
				return fmt.Errorf("delete ClusterResourceSnapshot %s: %w", n, err)
			}
		}
	}
	return nil
}

// isLead tells a group's leading resource snapshot (1) from the others (0).
func isLead(rs *v1beta1.ClusterResourceSnapshot) int {
	if _, ok := rs.Annotations[v1beta1.NumberOfResourceSnapshotsAnnotation]; ok {
		return 1
	}
	return 0
}

// flushPlacement writes a placement's finalizers and status.
func (s *state) flushPlacement(ctx context.Context, c client.Client, name string, now time.Time) error {
	crp, p := s.crps[name], s.placements[name]
	if s.removed[name] {
		// Everything the placement owned is gone: let the deletion finish.
		if err := s.flushMirror(ctx, c, name, nil, now); err != nil {
			return err
		}
		upd := crp.DeepCopy()
		controllerutil.RemoveFinalizer(upd, v1beta1.PlacementCleanupFinalizer)
		controllerutil.RemoveFinalizer(upd, v1beta1.SchedulerCleanupFinalizer)
		if len(upd.Finalizers) != len(crp.Finalizers) {
			if err := client.IgnoreNotFound(c.Update(ctx, upd)); err != nil {
				return fmt.Errorf("remove finalizers: %w", err)
			}
		}
		return nil
	}
	if p == nil {
		return nil
	}
	want := convert.PlacementFromModel(p, crp)
	if crp.DeletionTimestamp == nil {
		// The hub must see a deletion through: its bindings and Works go first.
		controllerutil.AddFinalizer(want, v1beta1.PlacementCleanupFinalizer)
	}
	if err := upsert(ctx, c, want, crp); err != nil {
		return err
	}
	return s.flushMirror(ctx, c, name, p.Mirror, now)
}

// flushMirror keeps a NamespaceAccessible placement's ClusterResourcePlacementStatus: it
// writes m (nil: none) and deletes every other status copy of the placement, such as one
// left in a namespace its selectors no longer name. It runs after the placement's own
// status is written, so the copy never gets ahead of it.
func (s *state) flushMirror(ctx context.Context, c client.Client, name string, m *mhub.StatusMirror, now time.Time) error {
	var base *v1beta1.ClusterResourcePlacementStatus
	for _, o := range s.mirrorObjs[name] {
		if m != nil && o.Namespace == m.Namespace && o.Name == name {
			base = o
			continue
		}
		if err := client.IgnoreNotFound(c.Delete(ctx, o, readVersion(o))); err != nil {
			return fmt.Errorf("delete ClusterResourcePlacementStatus %s/%s: %w", o.Namespace, o.Name, err)
		}
	}
	if m == nil {
		return nil
	}
	want := convert.PlacementStatusObjectFromModel(name, m, base, now)
	if base == nil {
		ownBy(want, s.crps[name])
	}
	if err := upsert(ctx, c, want, optional(base)); err != nil {
		return fmt.Errorf("ClusterResourcePlacementStatus %s/%s: %w", m.Namespace, name, err)
	}
	return nil
}

// flushBindings creates and updates bindings, then deletes those the controllers deleted
// (with their Works, and the finalizer that holds them for that). It returns the bindings'
// status writes still due.
func (s *state) flushBindings(ctx context.Context, c client.Client) ([]*statusWrite, error) {
	names := slices.Sorted(maps.Keys(s.bindings))
	statuses := make([]*statusWrite, len(names))
	if err := parallel(len(names), func(i int) error {
		n := names[i]
		b, base := s.bindings[n], s.bindingObjs[n]
		want := convert.BindingFromModel(b, base)
		if base == nil {
			if crp := s.crps[b.Placement]; crp != nil {
				ownBy(want, crp)
			}
		}
		st, err := writeSpec(ctx, c, want, optional(base))
		if err != nil {
			return fmt.Errorf("ClusterResourceBinding %s: %w", n, err)
		}
		if base != nil && base.DeletionTimestamp != nil && b.Deleting {
			// Its status is moot: the binding is released and gone.
			return s.finishBindingDelete(ctx, c, want)
		}
		statuses[i] = st
		return nil
	}); err != nil {
		return nil, err
	}
	statuses = slices.DeleteFunc(statuses, func(w *statusWrite) bool { return w == nil })
	var gone []string
	for _, n := range slices.Sorted(maps.Keys(s.bindingObjs)) {
		if _, kept := s.bindings[n]; !kept {
			gone = append(gone, n)
		}
	}
	return statuses, parallel(len(gone), func(i int) error {
		n := gone[i]
		base := s.bindingObjs[n]
		b := base.DeepCopy()
		if base.DeletionTimestamp == nil {
			// Only the hub writes bindings: the version read is the one deleted.
			if err := client.IgnoreNotFound(c.Delete(ctx, base, client.Preconditions{UID: &base.UID, ResourceVersion: &base.ResourceVersion})); err != nil {
				return fmt.Errorf("delete ClusterResourceBinding %s: %w", n, err)
			}
			// Its finalizer keeps the binding, now marked deleting under a new
			// resourceVersion: release the binding as stored now. Releasing the one read
			// would conflict, and the decision that deleted it would be taken again on a
			// binding already deleting (an eviction would then report another outcome).
			fresh := &v1beta1.ClusterResourceBinding{}
			switch err := s.reader.Get(ctx, client.ObjectKeyFromObject(base), fresh); {
			case apierrors.IsNotFound(err):
				// Already gone: only its Work is left to delete.
			case err != nil:
				return fmt.Errorf("read deleted ClusterResourceBinding %s: %w", n, err)
			case fresh.UID == base.UID:
				b = fresh
			}
		}
		return s.finishBindingDelete(ctx, c, b)
	})
}

// finishBindingDelete deletes a deleted binding's Work and releases the binding.
func (s *state) finishBindingDelete(ctx context.Context, c client.Client, b *v1beta1.ClusterResourceBinding) error {
	s.mu.Lock()
	ws := slices.Collect(maps.Values(s.workObjs[b.Name]))
	s.mu.Unlock()
	slices.SortFunc(ws, func(x, y *v1beta1.Work) int { return strings.Compare(x.Name, y.Name) })
	for _, w := range ws {
		// Agents write Works' status: the Work is deleted whatever its version.
		if err := client.IgnoreNotFound(c.Delete(ctx, w, client.Preconditions{UID: &w.UID})); err != nil {
			return fmt.Errorf("delete Work %s/%s: %w", w.Namespace, w.Name, err)
		}
		s.mu.Lock()
		delete(s.workObjs[b.Name], w.Name)
		if len(s.workObjs[b.Name]) == 0 {
			delete(s.workObjs, b.Name)
		}
		s.mu.Unlock()
	}
	if controllerutil.RemoveFinalizer(b, v1beta1.WorkCleanupFinalizer) {
		if err := client.IgnoreNotFound(c.Update(ctx, b)); err != nil {
			return fmt.Errorf("release ClusterResourceBinding %s: %w", b.Name, err)
		}
	}
	return nil
}

// flushWorks writes the Works of live bindings and deletes those the controllers dropped.
func (s *state) flushWorks(ctx context.Context, c client.Client) error {
	type key struct{ binding, work string }
	var names []key
	for _, b := range slices.Sorted(maps.Keys(s.works)) {
		for _, w := range slices.Sorted(maps.Keys(s.works[b])) {
			names = append(names, key{b, w})
		}
	}
	if err := parallel(len(names), func(i int) error {
		n := names[i]
		w, base := s.works[n.binding][n.work], s.workObjs[n.binding][n.work]
		b := s.bindings[n.binding]
		if b == nil {
			return nil
		}
		want, err := convert.WorkFromModel(w, b.ApplyStrategy, base)
		if err != nil {
			return err
		}
		if err := upsert(ctx, c, want, optional(base)); err != nil {
			return fmt.Errorf("write Work %s/%s: %w", want.Namespace, want.Name, err)
		}
		return nil
	}); err != nil {
		return err
	}
	var gone []*v1beta1.Work
	for _, b := range slices.Sorted(maps.Keys(s.workObjs)) {
		for _, n := range slices.Sorted(maps.Keys(s.workObjs[b])) {
			if _, kept := s.works[b][n]; !kept {
				gone = append(gone, s.workObjs[b][n])
			}
		}
	}
	return parallel(len(gone), func(i int) error {
		w := gone[i]
		if err := client.IgnoreNotFound(c.Delete(ctx, w, client.Preconditions{UID: &w.UID})); err != nil {
			return fmt.Errorf("delete Work %s: %w", w.Name, err)
		}
		return nil
	})
}

// flushParallelism is how many writes of one phase of a flush (the bindings, the Works)
// go out at once. Any subset of a phase's writes is a consistent prefix for the next hub:
// each is within the budget the decision kept, as the whole phase is.
const flushParallelism = 16

// parallel runs f for 0..n-1, flushParallelism at a time, and joins their errors.
func parallel(n int, f func(int) error) error {
	if n <= 1 {
		if n == 1 {
			return f(0)
		}
		return nil
	}
	errs := make([]error, n)
	slots := make(chan struct{}, flushParallelism)
	var wg sync.WaitGroup
	for i := range n {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			errs[i] = f(i)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// readVersion makes a deletion conditional on the version read, for objects only the hub
// writes.
func readVersion(o client.Object) client.Preconditions {
	uid, rv := o.GetUID(), o.GetResourceVersion()
	return client.Preconditions{UID: &uid, ResourceVersion: &rv}
}

// ownBy makes the placement the controlling owner of a new object, so deleting the
// placement without the hub running still collects it.
func ownBy(o metav1.Object, crp *v1beta1.ClusterResourcePlacement) {
	if crp == nil || crp.UID == "" {
		return
	}
	t := true
	o.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: v1beta1.GroupVersion.String(), Kind: "ClusterResourcePlacement",
		Name: crp.Name, UID: crp.UID, Controller: &t, BlockOwnerDeletion: &t}})
}

// optional turns a nil pointer of a concrete type into a nil client.Object.
func optional[T any, P interface {
	*T
	client.Object
}](p P) client.Object {
	if p == nil {
		return nil
	}
	return p
}
